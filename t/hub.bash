# t/hub.bash - the model hub stand-in (t/hub.py) for the hw-model suites
# that download (t/0550, t/0551): each test's project and hub root, a
# repository made from files, the hub's lies, and what was published.
# Load after lib.

SHA=0123456789abcdef0123456789abcdef01234567

# hub_setup, hub_teardown: setup and teardown, for a suite that has its own
hub_setup() {
	PROJ=$(mktemp -d "${BATS_TMPDIR:-/tmp}/hw-test.XXXXXX")
	HUB="$PROJ.hub"
	mkdir -p "$HUB"
	cd "$PROJ" || return 1
	HUBPID=
	unset HF_TOKEN HF_TOKEN_PATH
	export HF_HOME="$HUB/hf-home"
}

hub_teardown() {
	if [ -n "$HUBPID" ]; then
		kill "$HUBPID" 2>/dev/null || true
		wait "$HUBPID" 2>/dev/null || true
	fi
	cd / && rm -rf "$PROJ" "$HUB"
}
setup() { hub_setup; }
teardown() { hub_teardown; }

# mkrepo REPO [JQ]: a repository of one GGUF (SIZE bytes, default 300000)
# and a config.json; JQ edits its model info
mkrepo() {
	local d="$HUB/$1" f
	mkdir -p "$d/files"
	head -c "${SIZE:-300000}" /dev/urandom >"$d/files/tiny-Q4_K_M.gguf"
	echo '{"model_type":"llama"}' >"$d/files/config.json"
	repo_info "$1" "${2:-.}"
}

# repo_info REPO JQ: info.json from the files, edited by JQ
repo_info() {
	python3 "$HW_ROOT/t/hub.py" siblings "$HUB/$1" >"$HUB/sib.json"
	jq -n --arg id "$1" --arg sha "$SHA" --slurpfile s "$HUB/sib.json" \
		'{id:$id, sha:$sha, tags:["gguf"], pipeline_tag:"text-generation",
		  config:{model_type:"llama", max_position_embeddings:32768},
		  cardData:{license:"apache-2.0"}, siblings:$s[0]}' |
		jq "$2" >"$HUB/$1/info.json"
	printf '{"main":"%s","v1.0":"%s"}\n' "$SHA" "$SHA" >"$HUB/$1/refs.json"
}

# behave JSON: how the hub lies from now on
behave() { printf '%s\n' "$1" >"$HUB/behave.json"; }

hub_start() {
	python3 "$HW_ROOT/t/hub.py" serve "$HUB" 3>&- &
	HUBPID=$!
	local i
	for ((i = 0; i < 200; i++)); do
		[ -f "$HUB/ports" ] && break
		sleep 0.05
	done
	read -r HP CP <"$HUB/ports"
	export HF_ENDPOINT="http://127.0.0.1:$HP"
}

# plan REPO: inspect into plan.json
plan() { hw-model inspect "$@" >plan.json; }

# published ID: the model directory
published() { echo ".heartwood/models/$1"; }

# nothing_published: no model directory, only transient files
nothing_published() {
	run find .heartwood/models -mindepth 1 -maxdepth 1 ! -name '.*'
	[ "$status" -eq 0 ]
	[ -z "$output" ]
}

# CAT: the options of a catalog made by catalog_gguf and catalog_snapshot
CAT=(--catalog cat/model-catalog.toml --snapshots cat/snapshots.toml)

# catalog_gguf ID REPO PATH [REV [CONTEXT [SHA256]]]: a catalog artifact ID
# pinning REPO's file PATH (its size and SHA-256 from the hub's files/, or
# SHA256 instead) at REV ($SHA), in cat/ (the shipped snapshots.toml
# beside it unless catalog_snapshot wrote one)
catalog_gguf() {
	local f="$HUB/$2/files/$3"
	mkdir -p cat/artifacts
	[ -f cat/snapshots.toml ] || cp "$HW_ROOT/share/models/snapshots.toml" cat/
	[ -f cat/model-catalog.toml ] ||
		printf 'schema_version = "heartwood.local-model-catalog.v2"\n' >cat/model-catalog.toml
	printf '\n[models.%s]\nstatus = "implemented"\npurpose = "test"\nruntime_profile = "llama-cpp-cpu"\nartifact_manifest = "artifacts/%s.toml"\nquality_claim = false\nproduction_use = false\n' \
		"$1" "$1" >>cat/model-catalog.toml
	cat >"cat/artifacts/$1.toml" <<-TOML
	artifact_id = "$1"
	runtime_profile = "llama-cpp-cpu"
	purpose = "test"
	source_repository = "$2"
	source_path = "$3"
	source_revision = "${4:-$SHA}"
	artifact_format = "GGUF"
	artifact_size_bytes = $(stat -c %s "$f")
	minimum_free_bytes = $(($(stat -c %s "$f") * 2))
	artifact_sha256 = "${6:-$(sha256sum <"$f" | cut -c1-64)}"
	license_posture = "Apache-2.0; for tests."
	model_alias = "tiny"
	context_window = ${5:-32768}
	TOML
}

# catalog_snapshot ID REPO SIZE: cat/snapshots.toml of one unvalidated
# snapshot ID pinning REPO at $SHA, expected to be SIZE bytes
catalog_snapshot() {
	mkdir -p cat
	cat >cat/snapshots.toml <<-TOML
	schema_version = "heartwood.model-snapshot-catalog.v3"

	[download_policies.transformers-safetensors]
	allow_patterns = ["*.json", "*.safetensors", "LICENSE*"]
	ignore_patterns = ["*.bin", "*.py", "original/*"]

	[snapshots.$1]
	runtime_profile = "vllm-cuda"
	purpose = "test"
	model_alias = "tiny snapshot"
	precision = "BF16"
	source_repository = "$2"
	source_revision = "$SHA"
	expected_size_bytes = $3
	minimum_free_bytes = $(($3 * 2))
	license_id = "Apache-2.0"
	license_posture = "Apache-2.0; for tests."
	tier = "standard"
	qualification = "unvalidated"
	minimum_gpu_count = 1
	minimum_gpu_memory_bytes = 16000000000
	recommended_cpu_count = 4
	recommended_ram_bytes = 34359738368
	recommended_disk_bytes = $(($3 * 4))
	context_window = 32768
	maximum_context_window = 262144
	tool_call_parser = "hermes"
	tensor_parallel_size = 1
	startup_seconds_min = 1
	startup_seconds_max = 60
	download_policy = "transformers-safetensors"
	TOML
	[ -f cat/model-catalog.toml ] ||
		printf 'schema_version = "heartwood.local-model-catalog.v2"\n\n[models.planned]\nstatus = "deferred"\npurpose = "test"\nruntime_profile = "vllm-cuda"\nquality_claim = false\nproduction_use = false\n' >cat/model-catalog.toml
}
