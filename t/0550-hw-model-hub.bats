#!/usr/bin/env bats
# hw-model inspect and download against t/hub.py, a loopback stand-in for
# the model hub (and a second host like its file CDN): the plan pinned to
# the full commit, GGUF and snapshot candidates, each refused answer on its
# own, downloads verified byte for byte and published atomically, every lie
# of the hub caught with nothing published, redirects, resume after a
# dropped connection and after a kill, the token's path, progress.

load lib
load hub

ID_OF='.selected'

@test "inspect: the branch pinned to the full commit, a GGUF candidate, nothing written" {
	mkrepo org/tiny
	hub_start
	run --separate-stderr hw-model inspect org/tiny
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	echo "$output" | jq -e --arg sha "$SHA" '.source_revision == $sha and
		.requested_revision == null and .license == "apache-2.0" and
		.context_window == 32768 and (.candidates | length) == 1 and
		.candidates[0].kind == "gguf" and
		.candidates[0].precision == "Q4_K_M" and
		.candidates[0].minimum_free_bytes == 450000 and
		.candidates[0].recommended_ram_bytes == 17179869184 and
		.candidates[0].recommended_disk_bytes == 900000 and
		.selected == .candidates[0].model_id'
	# hf-<slug>-<12 hex of sha256(repo\nrev\nruntime\npath)>
	want=$(printf 'org/tiny\n%s\nllama-cpp\ntiny-Q4_K_M.gguf' "$SHA" |
		sha256sum | cut -c1-12)
	[ "$(echo "$output" | jq -r .selected)" = "hf-tiny-$want" ]
	[ ! -e .heartwood ]
	grep -q '"path": "/api/models/org/tiny?blobs=true"' "$HUB/requests.jsonl"
}

@test "inspect --revision: a tag asked through /revision/, quoted" {
	mkrepo org/tiny
	printf '{"release/1":"%s"}\n' "$SHA" >"$HUB/org/tiny/refs.json"
	hub_start
	run hw-model inspect org/tiny --revision release/1
	[ "$status" -eq 0 ]
	echo "$output" | jq -e --arg sha "$SHA" '.source_revision == $sha and
		.requested_revision == "release/1"'
	grep -q '"path": "/api/models/org/tiny/revision/release%2F1?blobs=true"' \
		"$HUB/requests.jsonl"
}

@test "inspect --revision: a full commit the hub answers with another is refused" {
	mkrepo org/tiny
	behave '{"info":"{\"sha\":\"'$SHA'\",\"siblings\":[]}"}'
	hub_start
	run -65 --separate-stderr hw-model inspect org/tiny --revision 1111111111111111111111111111111111111111
	[ "$stderr" = "hw-model: hub answer about 'org/tiny': commit '$SHA', not the requested '1111111111111111111111111111111111111111'" ]
}

@test "inspect: a safetensors snapshot is a candidate for vLLM, filtered by the policy" {
	mkdir -p "$HUB/Qwen/Qwen3-Coder-Tiny/files/original"
	d="$HUB/Qwen/Qwen3-Coder-Tiny/files"
	echo '{"model_type":"qwen3"}' >"$d/config.json"
	head -c 1000 /dev/urandom >"$d/model.safetensors"
	echo x >"$d/tokenizer.json"
	echo x >"$d/pytorch_model.bin"
	echo x >"$d/modeling.py"
	echo x >"$d/original/consolidated.json"
	echo x >"$d/LICENSE"
	repo_info Qwen/Qwen3-Coder-Tiny '.config.model_type = "qwen3"'
	hub_start
	run --separate-stderr hw-model inspect Qwen/Qwen3-Coder-Tiny --runtime vllm
	[ "$status" -eq 0 ]
	echo "$output" | jq -e '.tool_call_parser == "qwen3_coder" and
		(.candidates | length) == 1 and .candidates[0].kind == "snapshot" and
		.selected == .candidates[0].model_id and
		.candidates[0].minimum_gpu_memory_bytes == 16000000000 and
		([.candidates[0].files[].path] ==
		 ["LICENSE","config.json","model.safetensors","tokenizer.json"])'
}

@test "inspect: without vLLM the snapshot is offered but not selected" {
	mkdir -p "$HUB/org/q/files"
	echo '{}' >"$HUB/org/q/files/config.json"
	echo x >"$HUB/org/q/files/model.safetensors"
	repo_info org/q '.config.model_type = "qwen2"'
	hub_start
	run hw-model inspect org/q --runtime llama-cpp
	[ "$status" -eq 0 ]
	echo "$output" | jq -e '.selected == null and .tool_call_parser == "hermes"'
}

@test "inspect: several GGUF files, the q4_k_m marker picks one; shards are left out" {
	mkrepo org/many
	d="$HUB/org/many/files"
	head -c 100 /dev/urandom >"$d/m-Q8_0.gguf"
	head -c 100 /dev/urandom >"$d/m-Q5_K_M-00001-of-00002.gguf"
	repo_info org/many
	hub_start
	run hw-model inspect org/many
	[ "$status" -eq 0 ]
	echo "$output" | jq -e '(.candidates | length) == 2 and
		([.selected as $s | .candidates[] | select(.model_id == $s) |
		  .source_path] == ["tiny-Q4_K_M.gguf"])'
}

@test "inspect: a GGUF without a published lfs.sha256 is no candidate" {
	mkrepo org/tiny 'del(.siblings[] | select(.rfilename | endswith(".gguf")) | .lfs)'
	hub_start
	run -65 --separate-stderr hw-model inspect org/tiny
	[ "$stderr" = "hw-model: refusing 'org/tiny': no GGUF file with a published SHA-256 and no safetensors snapshot" ]
}

@test "inspect: the tag custom_code is refused" {
	mkrepo org/tiny '.tags += ["custom_code"]'
	hub_start
	run -65 --separate-stderr hw-model inspect org/tiny
	[ "$stderr" = "hw-model: refusing 'org/tiny': it needs custom code (tag custom_code)" ]
}

@test "inspect: config.auto_map is refused" {
	mkrepo org/tiny '.config.auto_map = {"AutoModel": "m.M"}'
	hub_start
	run -65 --separate-stderr hw-model inspect org/tiny
	[ "$stderr" = "hw-model: refusing 'org/tiny': it needs custom code (config.auto_map)" ]
}

@test "inspect: a context window under 18432 is refused" {
	mkrepo org/tiny '.config.max_position_embeddings = 8192'
	hub_start
	run -65 --separate-stderr hw-model inspect org/tiny
	[ "$stderr" = "hw-model: refusing 'org/tiny': its context window is under 18432 tokens" ]
}

@test "inspect: no context window at all is refused" {
	mkrepo org/tiny 'del(.config.max_position_embeddings)'
	hub_start
	run -65 --separate-stderr hw-model inspect org/tiny
	[ "$stderr" = "hw-model: refusing 'org/tiny': no context window found" ]
}

@test "inspect: a repository without files is refused" {
	mkrepo org/tiny '.siblings = []'
	hub_start
	run -65 --separate-stderr hw-model inspect org/tiny
	[ "$stderr" = "hw-model: refusing 'org/tiny': the repository has no files" ]
}

@test "inspect: an answer whose sha is not a full commit is refused" {
	mkrepo org/tiny '.sha = "96f460f"'
	printf '{"main":"96f460f"}\n' >"$HUB/org/tiny/refs.json"
	hub_start
	run -65 --separate-stderr hw-model inspect org/tiny
	[ "$stderr" = "hw-model: hub answer about 'org/tiny': sha is not a full commit" ]
}

@test "inspect: an answer whose siblings is not an array is refused" {
	mkrepo org/tiny '.siblings = {"a": 1}'
	hub_start
	run -65 --separate-stderr hw-model inspect org/tiny
	[ "$stderr" = "hw-model: hub answer about 'org/tiny': siblings is not an array" ]
}

@test "inspect: an answer that is not JSON is refused" {
	mkrepo org/tiny
	behave '{"info":"<html>hello"}'
	hub_start
	run -65 --separate-stderr hw-model inspect org/tiny
	[[ "$stderr" == "hw-model: hub answer about 'org/tiny': "* ]]
}

@test "inspect: a sibling named with ../ is refused" {
	mkrepo org/tiny '.siblings[0].rfilename = "../../etc/evil.gguf"'
	hub_start
	run -65 --separate-stderr hw-model inspect org/tiny
	[ "$stderr" = "hw-model: hub answer about 'org/tiny': unsafe file name '../../etc/evil.gguf'" ]
}

@test "inspect: an absolute sibling name is refused" {
	mkrepo org/tiny '.siblings[0].rfilename = "/etc/evil.gguf"'
	hub_start
	run -65 --separate-stderr hw-model inspect org/tiny
	[ "$stderr" = "hw-model: hub answer about 'org/tiny': unsafe file name '/etc/evil.gguf'" ]
}

@test "inspect: an lfs.size that differs from the size is refused" {
	mkrepo org/tiny '(.siblings[] | select(.lfs) | .lfs.size) = 5'
	hub_start
	run -65 --separate-stderr hw-model inspect org/tiny
	[ "$stderr" = "hw-model: hub answer about 'org/tiny': a sibling's lfs.size differs from its size" ]
}

@test "inspect: an unknown repository is the hub's refusal, 69" {
	hub_start
	run -69 --separate-stderr hw-model inspect org/none
	[ "$stderr" = "hw-model: cannot ask the hub about 'org/none': status 401" ]
}

@test "inspect: a repository name that is not OWNER/NAME is a usage error" {
	run -2 --separate-stderr env HF_ENDPOINT=http://127.0.0.1:9 hw-model inspect ../x
	[ "$stderr" = "hw-model: invalid repository '../x': expected OWNER/NAME" ]
}

@test "HF_ENDPOINT: plain http is refused but on loopback" {
	run -2 --separate-stderr env HF_ENDPOINT=http://hub.example hw-model inspect org/tiny
	[ "$stderr" = "hw-model: invalid HF_ENDPOINT 'http://hub.example': https is required but on loopback" ]
}

@test "HF_ENDPOINT: unset is a usage error naming it" {
	run -2 --separate-stderr env -u HF_ENDPOINT hw-model inspect org/tiny
	[ "$stderr" = "hw-model: no hub: set HF_ENDPOINT to the model hub's address" ]
}

@test "download: a GGUF verified and published with SHA256SUMS and HEARTWOOD-SOURCE.json" {
	mkrepo org/tiny
	hub_start
	plan org/tiny
	# as on the hub, an LFS file's blobId is its pointer's, not its bytes'
	blob=$(git hash-object "$HUB/org/tiny/files/tiny-Q4_K_M.gguf")
	run -0 python3 "$HW_ROOT/t/hub.py" siblings "$HUB/org/tiny"
	jq -e --arg b "$blob" '.[] | select(.rfilename == "tiny-Q4_K_M.gguf") |
		.blobId != $b and .lfs.pointerSize > 0' <<<"$output"
	id=$(jq -r .selected plan.json)
	run --separate-stderr hw-model download plan.json --progress none
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	echo "$output" | jq -e --arg id "$id" '.model_id == $id and
		.already_present == false and .files == 2'
	d=$(published "$id")
	cmp "$d/tiny-Q4_K_M.gguf" "$HUB/org/tiny/files/tiny-Q4_K_M.gguf"
	(cd "$d" && sha256sum -c --quiet SHA256SUMS)
	[ "$(cut -c67- "$d/SHA256SUMS")" = "$(printf 'HEARTWOOD-SOURCE.json\ntiny-Q4_K_M.gguf')" ]
	jq -e --arg sha "$SHA" '.schema_version == "heartwood.model-snapshot-source.v2"
		and .source_revision == $sha and .source_path == "tiny-Q4_K_M.gguf"' \
		"$d/HEARTWOOD-SOURCE.json"
	[ "$(stat -c %a "$d/tiny-Q4_K_M.gguf")" = 600 ]
	# nothing transient stays but the lock
	[ "$(ls -A .heartwood/models | sort | tr '\n' ' ')" = ".$id.lock $id " ]
	grep -q "\"path\": \"/org/tiny/resolve/$SHA/tiny-Q4_K_M.gguf\"" "$HUB/requests.jsonl"
}

@test "download: a second run verifies the published model again" {
	mkrepo org/tiny
	hub_start
	plan org/tiny
	hw-model download plan.json >/dev/null
	run hw-model download plan.json
	[ "$status" -eq 0 ]
	echo "$output" | jq -e '.already_present == true'
}

@test "download: a published model whose bytes changed fails the second run" {
	mkrepo org/tiny
	hub_start
	plan org/tiny
	hw-model download plan.json >/dev/null
	id=$(jq -r .selected plan.json)
	printf 'X' | dd of="$(published "$id")/tiny-Q4_K_M.gguf" conv=notrunc 2>/dev/null
	run -65 --separate-stderr hw-model download plan.json
	[ "$stderr" = "hw-model: '.heartwood/models/$id/tiny-Q4_K_M.gguf': SHA-256 differs from SHA256SUMS" ]
}

@test "download: a snapshot, each small file checked against its git blob id" {
	mkdir -p "$HUB/org/q/files"
	echo '{"model_type":"qwen3"}' >"$HUB/org/q/files/config.json"
	head -c 5000 /dev/urandom >"$HUB/org/q/files/model.safetensors"
	repo_info org/q '.config.model_type = "qwen3"'
	hub_start
	plan org/q --runtime vllm
	id=$(jq -r .selected plan.json)
	run hw-model download plan.json
	[ "$status" -eq 0 ]
	d=$(published "$id")
	cmp "$d/config.json" "$HUB/org/q/files/config.json"
	(cd "$d" && sha256sum -c --quiet SHA256SUMS)
}

@test "download: a small file whose bytes differ from its blob id is refused" {
	mkdir -p "$HUB/org/q/files"
	echo '{"model_type":"qwen3"}' >"$HUB/org/q/files/config.json"
	head -c 5000 /dev/urandom >"$HUB/org/q/files/model.safetensors"
	repo_info org/q '.config.model_type = "qwen3"'
	behave '{"bytes":{"config.json":"{\"model_type\":\"qwen4\"}\n"}}'
	hub_start
	plan org/q --runtime vllm
	run -65 --separate-stderr hw-model download plan.json
	[[ "$stderr" == "hw-model: 'config.json': git blob "*", not the published "* ]]
	nothing_published
}

@test "download: bytes that differ from the published SHA-256 are refused and removed" {
	mkrepo org/tiny
	hub_start
	plan org/tiny
	head -c 300000 /dev/urandom >"$HUB/org/tiny/files/tiny-Q4_K_M.gguf"
	run -65 --separate-stderr hw-model download plan.json
	[[ "$stderr" == "hw-model: 'tiny-Q4_K_M.gguf': SHA-256 "*", not the published "* ]]
	nothing_published
	id=$(jq -r .selected plan.json)
	[ ! -e ".heartwood/models/.$id.partial/tiny-Q4_K_M.gguf" ]
}

@test "download: a truncated body is refused" {
	mkrepo org/tiny
	behave '{"truncate":{"tiny-Q4_K_M.gguf":1000}}'
	hub_start
	plan org/tiny
	run -65 --separate-stderr hw-model download plan.json
	[ "$stderr" = "hw-model: 'tiny-Q4_K_M.gguf': 1000 bytes, not the published 300000" ]
	nothing_published
}

@test "download: more bytes than the published size are refused" {
	mkrepo org/tiny
	hub_start
	plan org/tiny
	head -c 300001 /dev/urandom >"$HUB/org/tiny/files/tiny-Q4_K_M.gguf"
	run -65 --separate-stderr hw-model download plan.json
	[ "$stderr" = "hw-model: 'tiny-Q4_K_M.gguf': the hub sent more than its size of 300000 bytes" ]
	nothing_published
}

@test "download: a hub that serves another commit is refused" {
	mkrepo org/tiny
	behave '{"commit":"2222222222222222222222222222222222222222"}'
	hub_start
	plan org/tiny
	run -65 --separate-stderr hw-model download plan.json
	[ "$stderr" = "hw-model: 'tiny-Q4_K_M.gguf': the hub served commit '2222222222222222222222222222222222222222', not the pinned '$SHA'" ]
	nothing_published
}

@test "download: a redirect to the CDN host is followed, and the token stays with the hub" {
	mkrepo org/tiny
	behave '{"redirect":"cdn"}'
	hub_start
	export HF_TOKEN=hf_MARKERtoken0123456789
	plan org/tiny
	run --separate-stderr hw-model download plan.json --progress json
	[ "$status" -eq 0 ]
	id=$(jq -r .selected plan.json)
	cmp "$(published "$id")/tiny-Q4_K_M.gguf" "$HUB/org/tiny/files/tiny-Q4_K_M.gguf"
	jq -e -s '[.[] | select(.host == "cdn")] | length == 1 and
		all(.authorization == null)' "$HUB/requests.jsonl"
	jq -e -s '[.[] | select(.host == "hub")] | length == 2 and
		all(.authorization == "Bearer hf_MARKERtoken0123456789")' \
		"$HUB/requests.jsonl"
	# the token is never written or shown
	refute grep -rq MARKER . plan.json
	[[ "$output$stderr" != *MARKER* ]]
}

@test "download: a relative redirect on the hub is followed" {
	mkrepo org/tiny
	behave '{"redirect":"relative"}'
	hub_start
	plan org/tiny
	run hw-model download plan.json
	[ "$status" -eq 0 ]
	jq -e -s '[.[] | .path | select(startswith("/blob-redirected/"))] |
		length == 1' "$HUB/requests.jsonl"
}

@test "download: a redirect to ftp: is refused" {
	mkrepo org/tiny
	behave '{"redirect":"ftp"}'
	hub_start
	plan org/tiny
	run -69 --separate-stderr hw-model download plan.json
	[[ "$stderr" == "hw-model: cannot download 'tiny-Q4_K_M.gguf': "* ]]
	nothing_published
}

@test "download: a redirect loop is refused" {
	mkrepo org/tiny
	behave '{"redirect":"loop"}'
	hub_start
	plan org/tiny
	run -69 --separate-stderr hw-model download plan.json
	[ "$stderr" = "hw-model: cannot download 'tiny-Q4_K_M.gguf': Number of redirects hit maximum amount" ]
	nothing_published
}

@test "download: a hub error status is 69 and keeps what was staged" {
	mkrepo org/tiny
	behave '{"status":{"tiny-Q4_K_M.gguf":403}}'
	hub_start
	plan org/tiny
	run -69 --separate-stderr hw-model download plan.json
	[ "$stderr" = "hw-model: cannot download 'tiny-Q4_K_M.gguf': status 403" ]
	nothing_published
}

@test "download: a connection dropped midway resumes with a range to the right bytes" {
	mkrepo org/tiny
	behave '{"drop":{"tiny-Q4_K_M.gguf":100000}}'
	hub_start
	plan org/tiny
	run hw-model download plan.json
	[ "$status" -eq 0 ]
	id=$(jq -r .selected plan.json)
	cmp "$(published "$id")/tiny-Q4_K_M.gguf" "$HUB/org/tiny/files/tiny-Q4_K_M.gguf"
	jq -e -s '[.[] | select(.path | contains("resolve")) | .range] ==
		[null, "bytes=100000-"]' "$HUB/requests.jsonl"
}

@test "download: killed midway, the next run resumes with a range to exactly the right bytes" {
	SIZE=1000000 mkrepo org/tiny
	behave '{"throttle":{"tiny-Q4_K_M.gguf":100000}}'
	hub_start
	plan org/tiny
	id=$(jq -r .selected plan.json)
	part=".heartwood/models/.$id.partial/tiny-Q4_K_M.gguf"
	hw-model download plan.json >/dev/null 2>&1 3>&- &
	pid=$!
	for ((i = 0; i < 400; i++)); do
		if [ -f "$part" ] && [ "$(stat -c %s "$part")" -gt 50000 ]; then break; fi
		sleep 0.05
	done
	kill -9 "$pid"
	wait "$pid" || true
	have=$(stat -c %s "$part")
	[ "$have" -gt 0 ]
	[ "$have" -lt 1000000 ]
	nothing_published
	behave '{}'
	run hw-model download plan.json
	[ "$status" -eq 0 ]
	cmp "$(published "$id")/tiny-Q4_K_M.gguf" "$HUB/org/tiny/files/tiny-Q4_K_M.gguf"
	jq -e -s --arg r "bytes=$have-" '[.[] | select(.path | contains("resolve"))
		| .range] == [null, $r]' "$HUB/requests.jsonl"
}

@test "download: a staging directory from another plan is not reused" {
	mkrepo org/tiny
	hub_start
	plan org/tiny
	id=$(jq -r .selected plan.json)
	mkdir -p ".heartwood/models/.$id.partial"
	echo stale >".heartwood/models/.$id.partial/tiny-Q4_K_M.gguf"
	echo '{"schema_version":"other"}' >".heartwood/models/.$id.partial.json"
	run hw-model download plan.json
	[ "$status" -eq 0 ]
	jq -e -s '[.[] | select(.path | contains("resolve")) | .range] == [null]' \
		"$HUB/requests.jsonl"
}

@test "download: another download of the same model holds the lock, 75" {
	mkrepo org/tiny
	hub_start
	plan org/tiny
	id=$(jq -r .selected plan.json)
	mkdir -p .heartwood/models
	exec 9>".heartwood/models/.$id.lock"
	flock 9
	run -75 --separate-stderr hw-model download plan.json
	exec 9>&-
	[ "$stderr" = "hw-model: '$id': another download of this model is running" ]
}

@test "download: too little free space is refused before a byte is fetched" {
	mkrepo org/tiny
	hub_start
	plan org/tiny
	jq '.candidates[0].minimum_free_bytes = 9000000000000000' plan.json >p2.json
	run -74 --separate-stderr hw-model download p2.json
	[[ "$stderr" == "hw-model: not enough free space in '.heartwood/models': 9000000000000000 bytes needed, "*" free" ]]
	[ "$(grep -c resolve "$HUB/requests.jsonl")" -eq 0 ]
}

@test "download: a plan whose model id is not its own is refused" {
	mkrepo org/tiny
	hub_start
	plan org/tiny
	jq '.candidates[0].model_id = "../../x" | .selected = "../../x"' plan.json >p2.json
	run -65 --separate-stderr hw-model download p2.json
	[ "$stderr" = "hw-model: invalid plan: a candidate's model_id is not its own" ]
	[ ! -e .heartwood ]
}

@test "download: a plan with an unsafe file path is refused" {
	mkrepo org/tiny
	hub_start
	plan org/tiny
	jq '.candidates[0].files[0].path = "../x.gguf" |
		.candidates[0].source_path = "../x.gguf"' plan.json >p2.json
	run -65 --separate-stderr hw-model download p2.json
	[ "$stderr" = "hw-model: invalid plan: a file path is missing or unsafe" ]
}

@test "download: a plan that is not JSON is refused" {
	echo '{"schema_version":' >p.json
	run -65 --separate-stderr hw-model download p.json
	[[ "$stderr" == "hw-model: invalid plan 'p.json': "* ]]
}

@test "download: --model-id names an unknown candidate, 66" {
	mkrepo org/tiny
	hub_start
	plan org/tiny
	run -66 --separate-stderr hw-model download plan.json --model-id hf-none-000000000000
	[ "$stderr" = "hw-model: no candidate 'hf-none-000000000000' in the plan" ]
}

@test "download --progress json: progress lines on stderr, one verified line per file" {
	mkrepo org/tiny
	hub_start
	plan org/tiny
	run --separate-stderr hw-model download plan.json --progress json
	[ "$status" -eq 0 ]
	echo "$stderr" | jq -e -s '.[-1] == {"event":"verified",
		"path":"tiny-Q4_K_M.gguf","bytes":300000,"total":300000} and
		all(.event == "progress" or .event == "verified")'
}

@test "token: an owner-only token file is sent" {
	mkrepo org/tiny
	hub_start
	mkdir -p "$HF_HOME"
	echo hf_FILEtoken0123456789 >"$HF_HOME/token"
	chmod 600 "$HF_HOME/token"
	run hw-model inspect org/tiny
	[ "$status" -eq 0 ]
	grep -q '"authorization": "Bearer hf_FILEtoken0123456789"' "$HUB/requests.jsonl"
}

@test "token: a token file others can read is refused" {
	mkrepo org/tiny
	hub_start
	mkdir -p "$HF_HOME"
	echo hf_FILEtoken0123456789 >"$HF_HOME/token"
	chmod 644 "$HF_HOME/token"
	run -65 --separate-stderr hw-model inspect org/tiny
	[ "$stderr" = "hw-model: refusing token file '$HF_HOME/token': not a regular file that only its owner can read" ]
	[ ! -e "$HUB/requests.jsonl" ]
}

@test "token: never an argument" {
	run -2 hw-model download plan.json --token x
	run -2 hw-model inspect org/tiny --token x
}

@test "download: killed at every stage, the next run gets exactly the right bytes" {
	SIZE=200000 mkrepo org/tiny
	hub_start
	plan org/tiny
	id=$(jq -r .selected plan.json)
	want=$(sha256sum <"$HUB/org/tiny/files/tiny-Q4_K_M.gguf")
	for ((n = 1; n < 400; n++)); do
		rm -rf .heartwood
		st=0
		HW_FAULT_KILL_AT=$n hw-model download plan.json >/dev/null 2>&1 || st=$?
		if [ "$st" -eq 0 ]; then break; fi
		[ "$st" -eq 137 ]
		run hw-model download plan.json
		[ "$status" -eq 0 ]
		[ "$(sha256sum <"$(published "$id")/tiny-Q4_K_M.gguf")" = "$want" ]
		(cd "$(published "$id")" && sha256sum -c --quiet SHA256SUMS)
		[ ! -e ".heartwood/models/.$id.partial" ]
		[ ! -e ".heartwood/models/.$id.partial.json" ]
	done
	# every stage was reached: the chunks, the syncs, the publish
	[ "$n" -gt 10 ]
	[ "$n" -lt 400 ]
}

@test "download, then bundle export: a snapshot's provenance goes into the manifest" {
	mkdir -p "$HUB/org/q/files"
	echo '{"model_type":"qwen3"}' >"$HUB/org/q/files/config.json"
	head -c 5000 /dev/urandom >"$HUB/org/q/files/model.safetensors"
	repo_info org/q '.config.model_type = "qwen3"'
	hub_start
	plan org/q --runtime vllm
	id=$(jq -r .selected plan.json)
	hw-model download plan.json >/dev/null
	run hw-model bundle export "$id" q.zip
	[ "$status" -eq 0 ]
	[ "$(python3 "$HW_ROOT/t/bundle.py" check q.zip)" = 4 ]
	hw-model bundle inspect q.zip | jq -e --arg sha "$SHA" '
		.model.source_revision == $sha and .model.context_window == 32768 and
		.model.tool_call_parser == "hermes" and .model.license_id == "Apache-2.0" and
		.model.download_policy == "transformers-safetensors"'
}
