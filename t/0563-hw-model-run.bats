#!/usr/bin/env bats
# hw-model select and run: the selection in .heartwood/config.toml and the
# agent's route following it; the runtime launcher's stages with stand-in
# llama-server and heartwood-vllm programs written here (they record their
# argv and environment and serve the replay model), the health check, the
# deadline, the stop, the exit codes, and the agent answering through the
# launched runtime.

load lib
load launch

# faketime preloads libfaketime, which a sanitizer build must accept
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0

@test "select: records the model, the served id and the agent's route" {
	gguf_model
	hw-model select "$ID" >/dev/null
	# on port 8765 the default policy already allows the route
	refute grep -q '^\[policy\]' .heartwood/config.toml
	printf '\n[audit]\nsigner_profile = "lab"\n' >>.heartwood/config.toml
	run -0 --separate-stderr hw-model select "$ID" --port "$PORT"
	[ -z "$stderr" ]
	echo "$output" | has --arg id "$ID" --argjson p "$PORT" '
		.model_id == $id and .path == ".heartwood/models/" + $id and
		.runtime == "llama-cpp" and .served_model_id == "heartwood-managed-model" and
		.qualification == "unvalidated" and .port == $p and
		.base_url == "http://127.0.0.1:\($p)/v1"'
	grep -qx 'signer_profile = "lab"' .heartwood/config.toml
	grep -qx "model_id = \"$ID\"" .heartwood/config.toml
	grep -qx "base_url = \"http://127.0.0.1:$PORT/v1\"" .heartwood/config.toml
	grep -qx 'model_id = "heartwood-managed-model"' .heartwood/config.toml
	refute grep -q api_key .heartwood/config.toml
	grep -q "allowed_model_endpoints = .*http://127.0.0.1:$PORT/v1/chat/completions" .heartwood/config.toml
}

@test "select: a model that does not verify is refused and nothing is recorded" {
	gguf_model
	printf 'X' >>".heartwood/models/$ID/m-Q4_K_M.gguf"
	run -66 --separate-stderr hw-model select "$ID"
	[[ "$stderr" == "hw-model: model '$ID' does not verify: "* ]]
	[ ! -e .heartwood/config.toml ]
}

@test "select: a model missing a file its SHA256SUMS lists is refused" {
	snap_model
	rm ".heartwood/models/$ID/model.safetensors"
	run -66 --separate-stderr hw-model select "$ID"
	[ "$stderr" = "hw-model: model '$ID' does not verify: '.heartwood/models/$ID': a file in SHA256SUMS is missing" ]
	[ ! -e .heartwood/config.toml ]
}

# hashed CMD...: how many files CMD read to hash (its fault-point trace)
hashed() {
	HW_FAULT_TRACE=1 "$@" 2>&1 >/dev/null | grep -c ' model-hash$' || true
}
# clock OFFSET CMD...: CMD with its clock OFFSET off (faketime), the files'
# times as they are
clock() { NO_FAKE_STAT=1 faketime -f "$@"; }

@test "verify cache: a second verify reads no file that did not change; a changed one is read and refused" {
	gguf_model
	cache=.heartwood/models/.$ID.verified.json
	# the clock 10 s on: the files are past the 2 s in which they are not kept
	[ "$(hashed clock +10s hw-model select "$ID")" = 2 ]
	[ "$(stat -c %a "$cache")" = 600 ]
	[ "$(jq -c '.files | keys' "$cache")" = '["heartwood-model.json","m-Q4_K_M.gguf"]' ]
	[ "$(jq -r '.files["m-Q4_K_M.gguf"].sha256' "$cache")" = "$(sha256sum <".heartwood/models/$ID/m-Q4_K_M.gguf" | cut -c1-64)" ]
	# taken from the cache, a file is kept whatever the clock says
	[ "$(hashed clock -60s hw-model select "$ID")" = 0 ]
	# nothing changed: the cache is not written again (a new one is a new inode)
	ino=$(stat -c %i "$cache")
	[ "$(hashed hw-model select "$ID")" = 0 ]
	[ "$(stat -c %i "$cache")" = "$ino" ]
	# the same size, the same modification time, other bytes: read, refused
	f=.heartwood/models/$ID/m-Q4_K_M.gguf
	t=$(stat -c %y "$f")
	printf 'X' | dd of="$f" bs=1 seek=50 conv=notrunc status=none
	touch -d "$t" "$f"
	[ "$(hashed hw-model select "$ID")" = 1 ]
	run -66 --separate-stderr hw-model select "$ID"
	[ "$stderr" = "hw-model: model '$ID' does not verify: '$f': SHA-256 differs from SHA256SUMS" ]
}

@test "verify cache: a file changed less than 2 seconds before it is looked at is not kept" {
	gguf_model
	# the clock a minute back: both files look changed just now
	[ "$(hashed clock -60s hw-model select "$ID")" = 2 ]
	[ "$(jq -c .files ".heartwood/models/.$ID.verified.json")" = '{}' ]
	[ "$(hashed hw-model select "$ID")" = 2 ]
}

@test "verify cache: a copied project's cache, or one that is no owner-only file, is not taken" {
	gguf_model
	clock +10s hw-model select "$ID" >/dev/null
	cache=.heartwood/models/.$ID.verified.json
	[ "$(jq '.files | length' "$cache")" = 2 ]
	# a copy keeps the cache, the sizes and the modification times, but
	# not the inodes and change times: its tampered file is read and refused
	mkdir copy
	cp -a .heartwood copy/
	f=copy/.heartwood/models/$ID/m-Q4_K_M.gguf
	t=$(stat -c %y "$f")
	printf 'X' | dd of="$f" bs=1 seek=50 conv=notrunc status=none
	touch -d "$t" "$f"
	cd copy
	run -66 --separate-stderr hw-model select "$ID"
	[ "$stderr" = "hw-model: model '$ID' does not verify: '.heartwood/models/$ID/m-Q4_K_M.gguf': SHA-256 differs from SHA256SUMS" ]
	[ "$(hashed hw-model select "$ID")" = 1 ]
	cd ..
	# others may write it: not read
	chmod 620 "$cache"
	[ "$(hashed hw-model select "$ID")" = 2 ]
	# not JSON, or another schema: not read, and written again
	clock +10s hw-model select "$ID" >/dev/null
	[ "$(stat -c %a "$cache")" = 600 ]
	[ "$(hashed hw-model select "$ID")" = 0 ]
	printf '{"files":' >"$cache"
	[ "$(hashed clock +10s hw-model select "$ID")" = 2 ]
	[ "$(hashed hw-model select "$ID")" = 0 ]
	# (sed, not jq: jq 1.6 rounds the nanoseconds to a double's digits)
	sed -i 's/model-verified\.v1/model-verified.v0/' "$cache"
	[ "$(hashed hw-model select "$ID")" = 2 ]
	# a symbolic link: never followed, nor written through
	clock +10s hw-model select "$ID" >/dev/null
	[ "$(hashed hw-model select "$ID")" = 0 ]
	mv "$cache" elsewhere.json
	ln -s "$PWD/elsewhere.json" "$cache"
	[ "$(hashed clock +10s hw-model select "$ID")" = 2 ]
	[ -L "$cache" ]
	[ "$(hashed hw-model select "$ID")" = 2 ]
}

@test "select: an unknown model is 66 and a bad id 2" {
	run -66 --separate-stderr hw-model select imported-0000000000000000
	[ "$stderr" = "hw-model: no model 'imported-0000000000000000' in '.heartwood/models'" ]
	run -2 hw-model select ../../etc
	run -2 hw-model select
	run -2 hw-model select "x" --port 0
}

@test "select: qualified stays qualified only on a validated platform" {
	snap_model
	d=.heartwood/models/$ID
	jq -c '.qualification = "qualified" | .validated_platforms = ["terra"]' "$d/heartwood-model.json" >m
	mv m "$d/heartwood-model.json"
	(cd "$d" && find . -type f ! -name SHA256SUMS | sed 's|^\./||' | LC_ALL=C sort | xargs sha256sum >SHA256SUMS)
	run -0 env -u HEARTWOOD_PLATFORM hw-model select "$ID"
	echo "$output" | has '.qualification == "unvalidated"'
	run -0 env HEARTWOOD_PLATFORM=terra hw-model select "$ID"
	echo "$output" | has '.qualification == "qualified" and .platform_id == "terra"'
}

@test "run: llama-server gets the exact command line and an allowlisted environment" {
	gguf_model
	hw-model select "$ID" --port "$PORT" >/dev/null
	standin llama-server
	echo '{"content":"hi"}' >turns.jsonl
	export HF_TOKEN=hf_secret OPENAI_API_KEY=sk-secret https_proxy=http://127.0.0.1:9 HW_API_KEY_FILE=/x
	start
	d=$(cd ".heartwood/models/$ID" && pwd -P)
	printf '%s\n' --model "$d/m-Q4_K_M.gguf" --jinja --alias heartwood-managed-model \
		--host 127.0.0.1 --port "$PORT" --ctx-size 32768 >want.argv
	diff want.argv llama-server.argv
	refute grep -E '^(HF_TOKEN|OPENAI_API_KEY|https_proxy|HW_API_KEY_FILE|HW_TEST_SYSROOT)=' llama-server.env
	grep -qx "HF_HOME=$PROJ/.heartwood/cache/huggingface" llama-server.env || grep -qx "HF_HOME=$(pwd -P)/.heartwood/cache/huggingface" llama-server.env
	grep -q '^TORCH_HOME=.*/.heartwood/cache/torch$' llama-server.env
	grep -q '^XDG_CACHE_HOME=.*/.heartwood/cache/xdg$' llama-server.env
	grep -qx 'HF_HUB_OFFLINE=1' llama-server.env
	refute grep -q VLLM_USE_FLASHINFER_SAMPLER llama-server.env
	jq -e --arg id "$ID" --argjson p "$PORT" '.event == "ready" and
		.model_id == $id and .base_url == "http://127.0.0.1:\($p)/v1" and
		.served_model_id == "heartwood-managed-model" and
		.context_window == 32768 and .max_input_tokens == 28672' run.out
	[ "$(stat -c %a .heartwood/logs/local-model.log)" = 600 ]
	[ "$(stat -c %a .heartwood/logs)" = 700 ]
	stop_run
	[ "$STOPPED" -eq 0 ]
	refute kill -0 "$(cat child.pid)" 2>/dev/null
}

@test "run: the agent answers through the launched runtime" {
	gguf_model
	hw-model select "$ID" --port "$PORT" >/dev/null
	standin llama-server
	echo '{"content":"Hello from the managed model."}' >turns.jsonl
	start
	refute grep -q warning run.err
	run -0 --separate-stderr hw ask hello
	[ "$(jq -r '.conversation[-1].content' <<<"${lines[1]}")" = "Hello from the managed model." ]
	run -0 hw doctor
	[[ "$output" == *"[OK] model openai/heartwood-managed-model at http://127.0.0.1:$PORT/v1"* ]]
	[[ "$output" == *"[OK] managed model $ID (llama-cpp, unvalidated): verified"* ]]
	[[ "$output" == *"[OK] the runtime answers at http://127.0.0.1:$PORT/v1"* ]]
	stop_run
	[ "$STOPPED" -eq 0 ]
	run -0 hw doctor
	[[ "$output" == *"[NOTE] the runtime does not answer at http://127.0.0.1:$PORT/v1"* ]]
	[[ "$output" == *"HW-MODEL-003 · Run: hw-model run"* ]]
}

@test "hw doctor: a selected model that no longer verifies is reported" {
	gguf_model
	hw-model select "$ID" --port "$PORT" >/dev/null
	printf 'X' >>".heartwood/models/$ID/m-Q4_K_M.gguf"
	run -0 hw doctor
	[ "${lines[0]}" = "Readiness: setup-required" ]
	[[ "$output" == *"[NOTE] the managed model: model '$ID' does not verify: "*"SHA-256 differs from SHA256SUMS"* ]]
	run -0 hw doctor --json
	echo "$output" | has '.checks[] | select(.check_id == "managed-model") | .status == "warning" and .code == "HW-MODEL-002"'
}

@test "run: vLLM gets its exact command line, its variables and the runtime check" {
	snap_model
	printf '#!/bin/sh\necho "0, NVIDIA T4, 16384, 16384, 550.54.15, 7.5"\n' >bin/nvidia-smi
	standin heartwood-vllm
	echo '{"content":"hi"}' >turns.jsonl
	start "$ID" --runtime vllm --port "$PORT"
	d=$(cd ".heartwood/models/$ID" && pwd -P)
	printf '%s\n' serve "$d" --host 127.0.0.1 --port "$PORT" \
		--served-model-name heartwood-managed-model --max-model-len 32768 \
		--tensor-parallel-size 1 --enable-auto-tool-choice \
		--tool-call-parser hermes --enforce-eager >want.argv
	diff want.argv heartwood-vllm.argv
	# not selected: the agent's route does not lead here, and run says so
	grep -qx "hw-model: warning: the agent's route is not this runtime: run 'hw-model select $ID --port N' to point it here" run.err
	grep -qx 'VLLM_USE_FLASHINFER_SAMPLER=0' heartwood-vllm.env
	grep -qx 'VLLM_V1_USE_OUTLINES_CACHE=0' heartwood-vllm.env
	stop_run
	[ "$STOPPED" -eq 0 ]
}

@test "run: a vLLM runtime that fails its check is 69 and never starts" {
	snap_model
	printf '#!/bin/sh\necho "0, NVIDIA T4, 16384, 16384, 550.54.15, 7.5"\n' >bin/nvidia-smi
	standin heartwood-vllm
	echo 3 >verify.status
	run -69 --separate-stderr hwrun "$ID" --port "$PORT"
	[[ "$stderr" == *"hw-model: the vLLM runtime is not usable here: 'heartwood-vllm __heartwood_verify_runtime__' failed (status 3; see .heartwood/logs/local-model.log)" ]]
	[ ! -e heartwood-vllm.argv ]
}

@test "run: a health check that never passes stops the runtime at the deadline: 70" {
	gguf_model
	hw-model select "$ID" --port "$PORT" >/dev/null
	standin llama-server 'echo "loading forever"; exec sleep 600'
	run -70 --separate-stderr hwrun --startup-timeout 2
	[[ "$stderr" == *"hw-model: the runtime 'llama-server' was not ready on 127.0.0.1:$PORT within 2 s"* ]]
	[[ "$stderr" == *"loading forever"* ]]
	[[ "$stderr" == *"hw-model: model '$ID' did not become ready" ]]
	refute kill -0 "$(cat child.pid)" 2>/dev/null
}

@test "run: a server that answers without the served id is not ready: 70" {
	gguf_model
	hw-model select "$ID" --port "$PORT" >/dev/null
	standin llama-server 'for a; do [ "$prev" = --port ] && port=$a; prev=$a; done
exec hw-model serve --replay '"$PROJ"'/turns.jsonl --port "$port"'
	echo '{"content":"hi"}' >turns.jsonl
	run -70 --separate-stderr hwrun --startup-timeout 3
	[[ "$stderr" == *"was not ready on 127.0.0.1:$PORT within 3 s"* ]]
}

@test "run: a runtime that dies at once is 70 with its log" {
	gguf_model
	hw-model select "$ID" --port "$PORT" >/dev/null
	standin llama-server 'echo "error: cannot load model \033[31m" >&2; exit 3'
	run -70 --separate-stderr hwrun --startup-timeout 30
	[[ "$stderr" == *"hw-model: the runtime 'llama-server' exited (status 3) before it was ready"* ]]
	[[ "$stderr" == *"error: cannot load model "* ]]
	# the child's escape sequence is shown escaped, never sent to the terminal
	refute grep -q $'\033' <<<"$stderr"
}

@test "run: a port already taken is 69 and the runtime never starts" {
	gguf_model
	hw-model select "$ID" --port "$PORT" >/dev/null
	standin llama-server
	echo '{"content":"hi"}' >turns.jsonl
	hw-model serve --replay turns.jsonl --port "$PORT" --served-model-name heartwood-managed-model >srv.json 2>/dev/null &
	RUN_PID=$!
	for _ in $(seq 200); do if [ -s srv.json ]; then break; fi; sleep 0.05; done
	run -69 --separate-stderr hwrun
	[[ "${stderr##*$'\n'}" == "hw-model: port 127.0.0.1:$PORT is taken: "*"; stop what listens there or choose --port" ]]
	[ ! -e llama-server.argv ]
}

@test "run: no selection is 64, a runtime that does not match 64" {
	run -64 --separate-stderr hwrun
	[ "$stderr" = "hw-model: no model selected: name one or run 'hw-model select ID'" ]
	gguf_model
	run -64 --separate-stderr hwrun "$ID" --runtime vllm
	[ "$stderr" = "hw-model: model '$ID' runs on llama-cpp, not vllm" ]
}

@test "run: a missing or tampered model is 66" {
	run -66 --separate-stderr hwrun imported-0000000000000000
	gguf_model
	printf 'X' >>".heartwood/models/$ID/m-Q4_K_M.gguf"
	standin llama-server
	run -66 --separate-stderr hwrun "$ID" --port "$PORT"
	[[ "$stderr" == "hw-model: model '$ID' does not verify: "* ]]
	[ ! -e llama-server.argv ]
}

@test "run: a runtime that is not installed is 69" {
	gguf_model
	run -69 --separate-stderr hwrun "$ID" --port "$PORT"
	[ "$stderr" = "hw-model: model '$ID' verified
hw-model: the runtime 'llama-server' is not installed (not on PATH)" ]
}

@test "run: a log that is a symbolic link is refused" {
	gguf_model
	standin llama-server
	mkdir -p .heartwood/logs
	ln -s "$PROJ/elsewhere" .heartwood/logs/local-model.log
	run -74 --separate-stderr hwrun "$ID" --port "$PORT"
	[[ "${stderr##*$'\n'}" == "hw-model: cannot open the log '.heartwood/logs/local-model.log': "* ]]
	[ ! -e elsewhere ]
	[ ! -e llama-server.argv ]
}

@test "run: bad options are usage errors" {
	run -2 hwrun --port 0
	run -2 hwrun --port 65536
	run -2 hwrun --runtime ollama
	run -2 hwrun --startup-timeout 0
	run -2 hwrun a b
}

@test "run: progress every 15 s while it starts; a runtime that ignores SIGTERM is killed after 10 s" {
	gguf_model
	hw-model select "$ID" --port "$PORT" >/dev/null
	# a server that listens only after 16 s and ignores SIGTERM
	cat >slow.py <<'PY'
import http.server, json, signal, sys, time
signal.signal(signal.SIGTERM, signal.SIG_IGN)
time.sleep(16)
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        b = json.dumps({"data": [{"id": "heartwood-managed-model"}]}).encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(b)))
        self.end_headers()
        self.wfile.write(b)
    def log_message(self, *a):
        pass
http.server.HTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
PY
	standin llama-server 'for a; do [ "$prev" = --port ] && port=$a; prev=$a; done
exec python3 '"$PROJ"'/slow.py "$port"'
	hw-model run --startup-timeout 60 >run.out 2>run.err &
	RUN_PID=$!
	for _ in $(seq 900); do
		if [ -s run.out ] && jq -e .event run.out >/dev/null 2>&1; then break; fi
		sleep 0.05
	done
	[ -s run.out ]
	jq -e '.event == "ready"' run.out
	grep -q "^hw-model: waiting for 'llama-server' on 127.0.0.1:$PORT (1[5-9] s of 60 s)$" run.err
	stop_run
	[ "$STOPPED" -eq 0 ]
	grep -qx "hw-model: 'llama-server' did not stop within 10 s: killed" run.err
	refute kill -0 "$(cat child.pid)" 2>/dev/null
}
