#!/usr/bin/env bats
# hw setup --model-source heartwood ("Run with Heartwood"): through
# hw-model recommend, hw-model download CATALOG-ID (from t/hub.py, the hub
# stand-in), and hw-model select; --non-interactive needs --yes-download
# to download (else 1, nothing saved), on a terminal a [y/N] asks first;
# an unknown id is 66, a catalog entry under the agent's context minimum
# 64, a lie of the hub 65, all with nothing saved; then hw-model run starts
# the stand-in llama-server of t/launch.bash and the agent answers through
# the selected managed model.

load lib
load hub
load launch

setup() {
	hub_setup
	launch_setup
	rm bin/nvidia-smi	# no GPU: hw-model recommend lists, recommends none
	unset HW_MODEL HW_BASE_URL
	# the data directory with a catalog of the stand-in hub's models
	cp -R "$HW_ROOT/share" data
	rm -rf data/models
	export HW_DATADIR=$PROJ/data
	export XDG_CONFIG_HOME=$PROJ/config
	mkrepo org/tiny
	catalog_gguf tiny-gguf org/tiny tiny-Q4_K_M.gguf
	catalog_gguf tiny-smoke org/tiny tiny-Q4_K_M.gguf "$SHA" 2048
	mv cat data/models
}
teardown() {
	launch_teardown
	hub_teardown
}

# answer ANSWER... -- hw setup ...: hw setup on a terminal
answer() { python3 "$HW_ROOT/t/pty_answer.py" "$@"; }

# saved KEY: the saved [model] KEY
saved() { sed -n "/^\[model\]/,/^\[/s/^$1 = \"\(.*\)\"/\1/p" .heartwood/config.toml; }

NI=(--non-interactive --yes --model-source heartwood)

@test "hw setup heartwood --non-interactive --yes-download: downloaded by catalog id, selected; the agent answers through it" {
	hub_start
	run -0 --separate-stderr hw setup "${NI[@]}" --model-id tiny-gguf --yes-download --port "$PORT"
	[ "$output" = "{\"api_key_env\":null,\"base_url\":\"http://127.0.0.1:$PORT/v1\",\"model\":\"openai/heartwood-managed-model\",\"model_id\":\"tiny-gguf\",\"source\":\"heartwood\"}" ]
	[ "${stderr##*$'\n'}" = "hw: managed model tiny-gguf selected; start it with: hw-model run" ]
	cmp .heartwood/models/tiny-gguf/tiny-Q4_K_M.gguf "$HUB/org/tiny/files/tiny-Q4_K_M.gguf"
	jq -e '.origin == "catalog"' .heartwood/models/tiny-gguf/HEARTWOOD-SOURCE.json
	[ "$(saved model_id)" = heartwood-managed-model ]
	[ "$(saved base_url)" = "http://127.0.0.1:$PORT/v1" ]
	grep -qx 'model_id = "tiny-gguf"' .heartwood/config.toml
	grep -q "\"path\": \"/org/tiny/resolve/$SHA/tiny-Q4_K_M.gguf\"" "$HUB/requests.jsonl"
	# what setup told: hw-model run, and the agent answers through it
	standin llama-server
	echo '{"content":"Hello from the catalog model."}' >turns.jsonl
	start
	grep -qx -- "$PROJ/.heartwood/models/tiny-gguf/tiny-Q4_K_M.gguf" llama-server.argv
	run -0 --separate-stderr hw ask hello
	[ "$(jq -r '.conversation[-1].content' <<<"${lines[1]}")" = "Hello from the catalog model." ]
	run -0 hw doctor
	[[ "$output" == *"[OK] managed model tiny-gguf (llama-cpp, unvalidated): verified"* ]]
	stop_run
	[ "$STOPPED" -eq 0 ]
}

@test "hw setup heartwood --non-interactive without --yes-download: 1, nothing downloaded or saved" {
	hub_start
	run -1 --separate-stderr hw setup "${NI[@]}" --model-id tiny-gguf
	[ "$stderr" = "hw: managed model 'tiny-gguf' is not downloaded: --yes-download lets hw setup download it ($(stat -c %s "$HUB/org/tiny/files/tiny-Q4_K_M.gguf") bytes from org/tiny)" ]
	[ -z "$output" ]
	[ ! -e .heartwood ]
	[ ! -e "$HUB/requests.jsonl" ]
}

@test "hw setup heartwood: a model already downloaded is selected without a download" {
	hub_start
	hw-model download tiny-gguf >/dev/null
	rm "$HUB/requests.jsonl"
	run -0 --separate-stderr hw setup "${NI[@]}" --model-id tiny-gguf --port "$PORT"
	[ "$(jq -r .model_id <<<"$output")" = tiny-gguf ]
	[ ! -e "$HUB/requests.jsonl" ]
	grep -qx 'model_id = "tiny-gguf"' .heartwood/config.toml
}

@test "hw setup heartwood: a failing nvidia-smi (a driver, no device) is no GPU, and setup goes on" {
	hub_start
	printf '#!/bin/sh\necho "No devices were found"\nexit 6\n' >bin/nvidia-smi
	chmod +x bin/nvidia-smi
	run -0 --separate-stderr hw setup "${NI[@]}" --model-id tiny-gguf --yes-download --port "$PORT"
	[ "$(jq -r .model_id <<<"$output")" = tiny-gguf ]
	[[ "$stderr" == *"hw-model: nvidia-smi failed (exit 6): no GPU inventory; recommending as for no GPU"* ]]
	cmp .heartwood/models/tiny-gguf/tiny-Q4_K_M.gguf "$HUB/org/tiny/files/tiny-Q4_K_M.gguf"
}

@test "hw setup heartwood: an id the catalog does not list is 66, nothing saved" {
	run -66 --separate-stderr hw setup "${NI[@]}" --model-id no-such --yes-download
	[ "$stderr" = "hw: no managed model or catalog entry 'no-such' (hw-model catalog lists them)" ]
	[ ! -e .heartwood ]
}

@test "hw setup heartwood: an id that is no model id is a usage error" {
	run -2 --separate-stderr hw setup "${NI[@]}" --model-id ../x --yes-download
	[ "$stderr" = "hw: invalid managed model id '../x': expected [a-z0-9._-], as hw-model catalog lists them" ]
	run -2 --separate-stderr hw setup "${NI[@]}" --model-id a/b --yes-download
	[ "$stderr" = "hw: invalid managed model id 'a/b': expected [a-z0-9._-], as hw-model catalog lists them" ]
	[ ! -e .heartwood ]
}

@test "hw setup heartwood: a catalog entry under the agent's context minimum is 64 before any download" {
	hub_start
	run -64 --separate-stderr hw setup "${NI[@]}" --model-id tiny-smoke --yes-download
	[ "$stderr" = "hw: catalog entry 'tiny-smoke' has a context window of 2048 tokens, under the agent's minimum of 18432: it is for load and query tests only" ]
	[ ! -e .heartwood ]
	[ ! -e "$HUB/requests.jsonl" ]
}

@test "hw setup heartwood: bytes that differ from the catalog's are 65, nothing published or saved" {
	behave '{"bytes":{"tiny-Q4_K_M.gguf":"lies"}}'
	hub_start
	run -65 --separate-stderr hw setup "${NI[@]}" --model-id tiny-gguf --yes-download
	[[ "$stderr" == "hw-model: 'tiny-Q4_K_M.gguf': 4 bytes, not the published "*$'\n'"hw: the download of 'tiny-gguf' failed" ]]
	nothing_published
	[ ! -e .heartwood/config.toml ]
}

@test "hw setup heartwood: an unreachable hub is the download's status, nothing saved" {
	export HF_ENDPOINT=http://127.0.0.1:9
	run --separate-stderr hw setup "${NI[@]}" --model-id tiny-gguf --yes-download
	[ "$status" -eq 69 ]
	[ "${stderr##*$'\n'}" = "hw: the download of 'tiny-gguf' failed" ]
	[ ! -e .heartwood/config.toml ]
}

@test "hw setup: --yes-download and --port belong to heartwood" {
	run -2 --separate-stderr hw setup --non-interactive --yes --model-source openai --model-id m --yes-download
	[ "$stderr" = "hw: --yes-download and --port apply only to --model-source heartwood" ]
	run -2 --separate-stderr hw setup "${NI[@]}" --model-id tiny-gguf --port 0
	[ "$stderr" = "hw: invalid --port '0': expected 1 to 65535" ]
	[ ! -e .heartwood ]
}

@test "hw setup heartwood on a terminal: the catalog shown, a download asked before, the route confirmed" {
	hub_start
	run -0 answer heartwood tiny-gguf y y -- hw setup --port "$PORT"
	[[ "$output" == *"Managed models (hw-model catalog):"* ]]
	[[ "$output" == *"tiny-gguf"*"context 32768"* ]]
	[[ "$output" == *"None is recommended on this machine"* ]]
	[[ "$output" == *"Download tiny-gguf ("*" bytes from org/tiny at $SHA) into .heartwood/models? [y/N]: y"* ]]
	[[ "$output" == *"Save model openai/heartwood-managed-model at http://127.0.0.1:$PORT/v1 to .heartwood/config.toml? [y/N]: y"* ]]
	[[ "$output" == *"start it with: hw-model run"* ]]
	grep -qx 'model_id = "tiny-gguf"' .heartwood/config.toml
}

@test "hw setup heartwood on a terminal: declining the download is 1, nothing fetched or saved" {
	hub_start
	run -1 answer heartwood tiny-gguf n -- hw setup
	[[ "$output" == *"[y/N]: n"* ]]
	[[ "$output" == *"hw: setup cancelled; nothing was saved"* ]]
	[ ! -e .heartwood ]
	[ ! -e "$HUB/requests.jsonl" ]
}

@test "hw setup heartwood on a terminal: the recommended model is the default" {
	unset HEARTWOOD_PLATFORM GOOGLE_PROJECT HEARTWOOD_CARINA SLURM_CLUSTER_NAME
	mkdir -p "$HUB/org/q/files"
	echo '{"model_type":"qwen3"}' >"$HUB/org/q/files/config.json"
	head -c 5000 /dev/urandom >"$HUB/org/q/files/model.safetensors"
	repo_info org/q '.config.model_type = "qwen3"'
	catalog_snapshot q-snap org/q 5000
	python3 - cat/snapshots.toml <<-'PY'
	import sys
	p = sys.argv[1]
	s = open(p).read().replace('qualification = "unvalidated"\n',
	    'qualification = "qualified"\nvalidated_platforms = ["generic"]\n'
	    'qualification_test = "t"\nqualification_date = "2026-01-01"\n'
	    'qualification_evidence = "e"\nrecommended = true\n')
	open(p, "w").write(s)
	PY
	cp cat/snapshots.toml data/models/snapshots.toml
	printf '#!/bin/sh\necho "0, NVIDIA L40S, 46068, 45000, 590.48.01, 8.9"\n' >bin/nvidia-smi
	chmod +x bin/nvidia-smi
	hub_start
	run -1 answer heartwood '' n -- hw setup
	[[ "$output" == *"Recommended here: q-snap"* ]]
	[[ "$output" == *"Managed model id [q-snap]: "* ]]
	[[ "$output" == *"Download q-snap (5000 bytes from org/q at $SHA) into .heartwood/models? [y/N]: n"* ]]
	[ ! -e .heartwood ]
}
