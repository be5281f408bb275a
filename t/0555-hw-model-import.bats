#!/usr/bin/env bats
# hw-model import: a local GGUF file and a safetensors directory copied
# into .heartwood/models/imported-<16 hex>/ with heartwood-model.json and
# SHA256SUMS; each refused source on its own (no magic, symlinks, Python
# code, custom code, no weights, no parser, a small context, a source in
# the model store, bad arguments), and SIGINT in the middle leaves nothing.

load lib

SHA=0123456789abcdef0123456789abcdef01234567
ARGS=(--source-repository org/model --source-revision "$SHA" --license-posture 'Apache-2.0, read by the lab')

# gguf FILE: a small GGUF file
gguf() { { printf 'GGUF'; head -c 100000 /dev/urandom; } >"$1"; }

# snapdir DIR [MODEL_TYPE]: a safetensors snapshot directory
snapdir() {
	mkdir -p "$1/sub"
	printf '{"architectures":["Qwen3ForCausalLM"],"model_type":"%s","max_position_embeddings":40960}\n' \
		"${2:-qwen3}" >"$1/config.json"
	head -c 5000 /dev/urandom >"$1/model.safetensors"
	echo '{}' >"$1/sub/tokenizer.json"
}

# nothing_left: no model and nothing transient but the lock
nothing_left() {
	run find .heartwood/models -mindepth 1 -maxdepth 1 ! -name '*.lock'
	[ "$status" -eq 0 ]
	[ -z "$output" ]
}

@test "import: a GGUF file, its id, heartwood-model.json and SHA256SUMS" {
	gguf m-Q4_K_M.gguf
	run --separate-stderr hw-model import m-Q4_K_M.gguf "${ARGS[@]}" --context-window 32768
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	h=$(printf 'org/model@%s:m-Q4_K_M.gguf:llama-cpp' "$SHA" | sha256sum | cut -c1-16)
	echo "$output" | jq -e --arg id "imported-$h" '.model_id == $id and
		.runtime == "llama-cpp" and .already_present == false and .files == 2'
	d=.heartwood/models/imported-$h
	cmp "$d/m-Q4_K_M.gguf" m-Q4_K_M.gguf
	(cd "$d" && sha256sum -c --quiet SHA256SUMS)
	jq -e --arg sha "$(sha256sum <m-Q4_K_M.gguf | cut -c1-64)" '
		.schema_version == "heartwood.local-model-import.v1" and
		.artifact_sha256 == $sha and .context_window == 32768 and
		.qualification == "unvalidated" and
		.license_posture == "Apache-2.0, read by the lab"' "$d/heartwood-model.json"
	[ "$(ls -A .heartwood/models | grep -c partial)" -eq 0 ]
}

@test "import: a safetensors directory, nested files, the parser and context from its config" {
	snapdir snap
	run hw-model import snap "${ARGS[@]}"
	[ "$status" -eq 0 ]
	d=$(echo "$output" | jq -r .path)
	cmp "$d/sub/tokenizer.json" snap/sub/tokenizer.json
	(cd "$d" && sha256sum -c --quiet SHA256SUMS)
	[ "$(cut -c67- "$d/SHA256SUMS" | paste -sd ' ')" = "config.json heartwood-model.json model.safetensors sub/tokenizer.json" ]
	jq -e '.runtime == "vllm" and .tool_call_parser == "hermes" and
		.context_window == 40960 and .artifact_sha256 == null' "$d/heartwood-model.json"
}

# hashed CMD...: how many files CMD read to hash (its fault-point trace)
hashed() {
	HW_FAULT_TRACE=1 "$@" 2>&1 >/dev/null | grep -c ' model-hash$' || true
}

@test "import: each file is read once, as it is copied; only heartwood-model.json, written here, is read to hash" {
	snapdir snap
	for i in 1 2 3 4 5 6; do echo "$i" >"snap/sub/$i.json"; done
	# SHA256SUMS written, the staged copy verified, the published one
	# verified: the copy's digests each time, heartwood-model.json read
	[ "$(hashed hw-model import snap "${ARGS[@]}")" = 3 ]
	d=$(echo .heartwood/models/imported-*)
	(cd "$d" && sha256sum -c --quiet SHA256SUMS)
	[ "$(wc -l <"$d/SHA256SUMS")" = 10 ]
	# one already there is verified whole: its ten files
	[ "$(hashed hw-model import snap "${ARGS[@]}")" = 10 ]
}

@test "import: the same import again verifies the model and changes nothing" {
	gguf m.gguf
	hw-model import m.gguf "${ARGS[@]}" --context-window 32768 >/dev/null
	run hw-model import m.gguf "${ARGS[@]}" --context-window 32768
	[ "$status" -eq 0 ]
	echo "$output" | jq -e '.already_present == true'
}

@test "import: a file without the GGUF magic is refused" {
	head -c 1000 /dev/urandom >m.gguf
	run -65 --separate-stderr hw-model import m.gguf "${ARGS[@]}" --context-window 32768
	[ "$stderr" = "hw-model: refusing 'm.gguf': not a GGUF file (no GGUF magic)" ]
	nothing_left
}

@test "import: a GGUF file needs --context-window" {
	gguf m.gguf
	run -2 --separate-stderr hw-model import m.gguf "${ARGS[@]}"
	[ "$stderr" = "hw-model: a GGUF import needs --context-window" ]
}

@test "import: a context window under 18432 is refused" {
	gguf m.gguf
	run -2 --separate-stderr hw-model import m.gguf "${ARGS[@]}" --context-window 8192
	[ "$stderr" = "hw-model: invalid --context-window '8192': expected 18432 to 1048576" ]
}

@test "import: a directory whose config gives a small context is refused" {
	snapdir snap
	jq -c '.max_position_embeddings = 4096' snap/config.json >c
	mv c snap/config.json
	run -65 --separate-stderr hw-model import snap "${ARGS[@]}"
	[ "$stderr" = "hw-model: refusing 'snap': its context window is under 18432 tokens" ]
	nothing_left
}

@test "import: a symlink given as the source is refused" {
	gguf m.gguf
	ln -s m.gguf link.gguf
	run -65 --separate-stderr hw-model import link.gguf "${ARGS[@]}" --context-window 32768
	[ "$stderr" = "hw-model: refusing 'link.gguf': a symlink" ]
}

@test "import: a symlink inside the directory is refused" {
	snapdir snap
	ln -s /etc/passwd snap/sub/passwd.json
	run -65 --separate-stderr hw-model import snap "${ARGS[@]}"
	[ "$stderr" = "hw-model: 'snap/sub/passwd.json': a symlink" ]
	nothing_left
}

@test "import: Python code in the directory is refused" {
	snapdir snap
	echo 'import os' >snap/sub/modeling.py
	run -65 --separate-stderr hw-model import snap "${ARGS[@]}"
	[ "$stderr" = "hw-model: refusing 'snap': it holds Python code 'sub/modeling.py'" ]
}

@test "import: config.auto_map is refused" {
	snapdir snap
	jq -c '.auto_map = {"AutoModel":"m.M"}' snap/config.json >c
	mv c snap/config.json
	run -65 --separate-stderr hw-model import snap "${ARGS[@]}"
	[ "$stderr" = "hw-model: refusing 'snap': it needs custom code (config.auto_map)" ]
}

@test "import: a config without architectures is refused" {
	snapdir snap
	jq -c 'del(.architectures)' snap/config.json >c
	mv c snap/config.json
	run -65 --separate-stderr hw-model import snap "${ARGS[@]}"
	[ "$stderr" = "hw-model: refusing 'snap': config.json has no architectures" ]
}

@test "import: a directory without config.json is refused" {
	snapdir snap
	rm snap/config.json
	run -65 --separate-stderr hw-model import snap "${ARGS[@]}"
	[ "$stderr" = "hw-model: refusing 'snap': no readable config.json" ]
}

@test "import: a directory without safetensors weights is refused" {
	snapdir snap
	rm snap/model.safetensors
	run -65 --separate-stderr hw-model import snap "${ARGS[@]}"
	[ "$stderr" = "hw-model: refusing 'snap': no *.safetensors file" ]
}

@test "import: a model type without a tool-call parser is refused" {
	snapdir snap llama
	run -65 --separate-stderr hw-model import snap "${ARGS[@]}"
	[ "$stderr" = "hw-model: refusing 'snap': no tool-call parser fits its model type" ]
}

@test "import: a directory with its own SHA256SUMS is refused" {
	snapdir snap
	echo x >snap/SHA256SUMS
	run -65 --separate-stderr hw-model import snap "${ARGS[@]}"
	[ "$stderr" = "hw-model: refusing 'snap': it has its own 'SHA256SUMS'" ]
}

@test "import: a source inside the model store is refused" {
	mkdir -p .heartwood/models/x
	snapdir .heartwood/models/x/snap
	run -65 --separate-stderr hw-model import .heartwood/models/x/snap "${ARGS[@]}"
	[ "$stderr" = "hw-model: refusing '.heartwood/models/x/snap': it overlaps the model store" ]
}

@test "import: a source that holds the model store is refused" {
	snapdir .
	mkdir -p .heartwood/models
	run -65 --separate-stderr hw-model import . "${ARGS[@]}"
	[ "$stderr" = "hw-model: refusing '.': it overlaps the model store" ]
}

@test "import: a missing source is 66" {
	run -66 --separate-stderr hw-model import none.gguf "${ARGS[@]}" --context-window 32768
	[ "$stderr" = "hw-model: cannot import 'none.gguf': No such file or directory" ]
}

@test "import: a repository that is not OWNER/NAME is a usage error" {
	gguf m.gguf
	run -2 --separate-stderr hw-model import m.gguf --source-repository x \
		--source-revision "$SHA" --license-posture MIT --context-window 32768
	[ "$stderr" = "hw-model: invalid --source-repository 'x': expected OWNER/NAME" ]
}

@test "import: a short commit is a usage error" {
	gguf m.gguf
	run -2 --separate-stderr hw-model import m.gguf --source-repository o/n \
		--source-revision 96f460f --license-posture MIT --context-window 32768
	[ "$stderr" = "hw-model: invalid --source-revision '96f460f': expected a full commit" ]
}

@test "import: no license posture is a usage error" {
	gguf m.gguf
	run -2 hw-model import m.gguf --source-repository o/n --source-revision "$SHA"
	[[ "$output" == usage:* ]]
}

@test "import: SIGINT in the middle of the copy leaves nothing behind" {
	snapdir snap
	for ((i = 0; i < 3000; i++)); do echo "$i" >"snap/sub/f$i.json"; done
	mkfifo err.fifo
	hw-model import snap "${ARGS[@]}" --progress json 2>err.fifo >out.json 3>&- &
	pid=$!
	exec 8<err.fifo
	# the pipe fills with progress lines and the copy waits on it
	read -r line <&8
	[[ "$line" == '{"event":'* ]]
	kill -INT "$pid"
	cat <&8 >err.rest
	exec 8<&-
	st=0
	wait "$pid" || st=$?
	[ "$st" -eq 130 ]
	[ "$(tail -n 1 err.rest)" = "hw-model: import of 'snap' interrupted" ]
	[ ! -s out.json ]
	nothing_left
}
