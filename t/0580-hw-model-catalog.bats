#!/usr/bin/env bats
# hw-model catalog and recommend: the shipped catalog files of share/models
# (the stories260K GGUF artifact, the two Qwen3-Coder-30B snapshots), every
# rule of model-catalog.toml, the artifact manifests and snapshots.toml its
# own test, the TOML arrays they are written with, and the recommendation
# from a stand-in nvidia-smi on PATH: the platform's highest tier, each
# candidate rule, the winner's ordering, and the GGUF choice figures.

load lib

setup() {
	PROJ=$(mktemp -d "${BATS_TMPDIR:-/tmp}/hw-test.XXXXXX")
	cd "$PROJ" || return 1
	unset HEARTWOOD_PLATFORM GOOGLE_PROJECT HEARTWOOD_CARINA SLURM_CLUSTER_NAME
	cp -R "$HW_ROOT/share/models" cat
	mkdir bin
	ORIGPATH=$PATH
}

CAT=(--catalog cat/model-catalog.toml --snapshots cat/snapshots.toml)

# edit FILE PYTHON-RE REPLACEMENT: a regular-expression edit of a catalog file
edit() {
	python3 -c 'import re,sys; p,a,b=sys.argv[1:]; s=open(p).read(); t=re.sub(a,b,s,count=1,flags=re.M); assert t!=s, "no change"; open(p,"w").write(t)' "cat/$1" "$2" "$3"
}

# refused FILE RE REPL MESSAGE: the edit is refused with MESSAGE (after
# "invalid catalog 'cat/FILE-OR-MANIFEST': ")
refused() {
	edit "$1" "$2" "$3"
	run -65 --separate-stderr hw-model catalog "${CAT[@]}"
	[ "$stderr" = "hw-model: $4" ]
}

SNAP="invalid catalog 'cat/snapshots.toml': snapshot 'qwen3-coder-30b-a3b-instruct-fp8-vllm'"
ART="invalid catalog 'cat/artifacts/stories260k.toml'"
MODEL="invalid catalog 'cat/model-catalog.toml': model 'llama-cpp-stories260k-ci'"

# gpus LINE...: a stand-in nvidia-smi printing these lines
gpus() {
	{
		echo '#!/bin/sh'
		echo '[ "$*" = "--query-gpu=index,name,memory.total,memory.free,driver_version,compute_cap --format=csv,noheader,nounits" ] || exit 9'
		printf "printf '%%s\\\\n'"
		printf " '%s'" "$@"
		echo
	} >bin/nvidia-smi
	chmod +x bin/nvidia-smi
	export PATH="$PROJ/bin:$ORIGPATH"
}

L40S='0, NVIDIA L40S, 46068, 45000, 590.48.01, 8.9'
T4A='0, Tesla T4, 15360, 15000, 535.154.05, 7.5'
T4B='1, Tesla T4, 15360, 15000, 535.154.05, 7.5'

# ---- the shipped catalog ----

@test "catalog: the shipped files load on the embedded default" {
	run -0 --separate-stderr hw-model catalog --json
	echo "$output" | jq -e '.schema_version == "heartwood.local-model-catalog.v2" and .snapshot_schema_version == "heartwood.model-snapshot-catalog.v3"'
	[ "$(echo "$output" | jq -r '[.models[].model_id] | join(" ")')" = "llama-cpp-stories260k-ci" ]
	[ "$(echo "$output" | jq -r '[.snapshots[].snapshot_id] | join(" ")')" = "qwen3-coder-30b-a3b-instruct-fp8-vllm qwen3-coder-30b-a3b-instruct-w4a16-awq-vllm" ]
	echo "$output" | jq -e '.models[0].artifact | .source_revision == "96f460f" and .artifact_size_bytes == 1185376'
	echo "$output" | jq -e '.download_policies[0] == {download_policy_id:"transformers-safetensors",
	    allow_patterns:["*.json","*.jinja","*.model","*.safetensors","*.tiktoken","LICENSE*","NOTICE*","README*"],
	    ignore_patterns:["*.bin","*.py",".git/*","metal/*","original/*"]}'
	echo "$output" | jq -e '.snapshots[1] | .tensor_parallel_size == 2 and .minimum_gpu_count == 2 and .validated_platforms == ["terra"] and .context_window == 18432'
	echo "$output" | jq -e '.defaults.default_smoke_model == "llama-cpp-stories260k-ci"'
}

@test "catalog: the plain listing, one line an artifact or snapshot" {
	run -0 hw-model catalog
	[ "${#lines[@]}" -eq 3 ]
	[[ "${lines[0]}" == "artifact llama-cpp-stories260k-ci "* ]]
}

@test "catalog: a copy given by --catalog and --snapshots is read" {
	edit model-catalog.toml '^default_smoke_model = .*$' ''
	run -0 hw-model catalog "${CAT[@]}" --json
	echo "$output" | jq -e '.defaults.default_smoke_model == null'
}

@test "catalog: an entry without an artifact manifest is skipped" {
	run -0 hw-model catalog "${CAT[@]}" --json
	refute grep -q qwen3-coder-30b-a3b-instruct'"' <<<"$(echo "$output" | jq -c '.models')"
}

# ---- TOML arrays ----

@test "toml: arrays over several lines, with comments and a trailing comma" {
	edit snapshots.toml '^ignore_patterns = .*$' 'ignore_patterns = [\n  "*.bin", # weights we never want\n  "*.py",\n]'
	run -0 hw-model catalog "${CAT[@]}" --json
	echo "$output" | jq -e '.download_policies[0].ignore_patterns == ["*.bin","*.py"]'
}

@test "toml: an array that mixes kinds is refused" {
	refused snapshots.toml '^ignore_patterns = .*$' 'ignore_patterns = ["*.bin", 1]' "cat/snapshots.toml:12: an array mixes kinds of values"
}

@test "toml: a nested array is refused" {
	refused snapshots.toml '^ignore_patterns = .*$' 'ignore_patterns = [["*.bin"]]' "cat/snapshots.toml:12: nested arrays are not supported"
}

@test "toml: an unterminated array is refused" {
	printf 'validated_platforms = ["terra",\n\n' >>cat/snapshots.toml
	run -65 --separate-stderr hw-model catalog "${CAT[@]}"
	[ "$stderr" = "hw-model: cat/snapshots.toml:$(wc -l <cat/snapshots.toml): unterminated array" ]
}

@test "toml: a missing comma in an array is refused" {
	refused snapshots.toml '^ignore_patterns = .*$' 'ignore_patterns = ["*.bin" "*.py"]' "cat/snapshots.toml:12: expected ',' or ']' in an array"
}

# ---- model-catalog.toml ----

@test "catalog: a wrong schema_version is refused" {
	refused model-catalog.toml '^schema_version = .*$' 'schema_version = "heartwood.local-model-catalog.v1"' "invalid catalog 'cat/model-catalog.toml': schema_version: expected heartwood.local-model-catalog.v2"
}

@test "catalog: an unknown top-level key is refused" {
	refused model-catalog.toml '^default_smoke_model' 'high_capability_agent_candidate = "x"\ndefault_smoke_model' "invalid catalog 'cat/model-catalog.toml': unknown key 'high_capability_agent_candidate'"
}

@test "catalog: a default that names no model with a manifest is refused" {
	refused model-catalog.toml '^default_smoke_model = .*$' 'default_smoke_model = "qwen3-coder-30b-a3b-instruct"' "invalid catalog 'cat/model-catalog.toml': default_smoke_model: 'qwen3-coder-30b-a3b-instruct' is not a model with an artifact manifest"
}

@test "catalog: an unknown key of an entry is refused" {
	refused model-catalog.toml '^status = "implemented"$' 'status = "implemented"\nimage_flavors = ["smoke"]' "$MODEL: unknown key 'image_flavors'"
}

@test "catalog: an entry without a required field is refused" {
	refused model-catalog.toml '^production_use = false\n\n\[models.qwen3' '\n[models.qwen3' "$MODEL: production_use is required"
}

@test "catalog: a boolean field of another type is refused" {
	refused model-catalog.toml '^quality_claim = false$' 'quality_claim = "no"' "$MODEL: quality_claim: expected true or false"
}

@test "catalog: an entry id with .. is refused" {
	refused model-catalog.toml '^\[models.llama-cpp-stories260k-ci\]' '[models."a..b"]' "invalid catalog 'cat/model-catalog.toml': model 'a..b': the id must not contain '/' or '..'"
}

@test "catalog: an artifact_manifest that leaves the catalog's directory is refused" {
	refused model-catalog.toml '^artifact_manifest = .*$' 'artifact_manifest = "../stories260k.toml"' "$MODEL: artifact_manifest: expected a relative path without '..'"
}

@test "catalog: an artifact manifest that is a symbolic link is refused" {
	mv cat/artifacts/stories260k.toml cat/real.toml
	ln -s ../real.toml cat/artifacts/stories260k.toml
	run -65 --separate-stderr hw-model catalog "${CAT[@]}"
	[ "$stderr" = "hw-model: refusing to read 'cat/artifacts/stories260k.toml': it is a symbolic link" ]
}

@test "catalog: two entries of one artifact_id are refused" {
	cat >>cat/model-catalog.toml <<'EOF'

[models.again]
status = "implemented"
purpose = "x"
runtime_profile = "llama-cpp-cpu"
artifact_manifest = "artifacts/stories260k.toml"
quality_claim = false
production_use = false
EOF
	run -65 --separate-stderr hw-model catalog "${CAT[@]}"
	[ "$stderr" = "hw-model: invalid catalog 'cat/model-catalog.toml': model 'again': artifact_id 'llama-cpp-stories260k-ci' is used twice" ]
}

# ---- artifact manifests ----

@test "artifact: a missing required field is refused" {
	refused artifacts/stories260k.toml '^model_alias = .*\n' '' "$ART: model_alias is required"
}

@test "artifact: an unknown key is refused, informational ones ignored" {
	edit artifacts/stories260k.toml '^purpose' 'source_url = "https://example.invalid/x"\nbase_model_family = "llama"\nredistribution = "x"\npurpose'
	run -0 hw-model catalog "${CAT[@]}"
	refused artifacts/stories260k.toml '^purpose' 'quantization = "Q4"\npurpose' "$ART: unknown key 'quantization'"
}

@test "artifact: an artifact_id with / or .. is refused" {
	refused artifacts/stories260k.toml '^artifact_id = .*$' 'artifact_id = "a/b"' "$ART: artifact_id: expected an id without '/' or '..'"
	cp -R "$HW_ROOT/share/models/." cat/
	refused artifacts/stories260k.toml '^artifact_id = .*$' 'artifact_id = "a..b"' "$ART: artifact_id: expected an id without '/' or '..'"
}

@test "artifact: a source_repository that is not one owner/name is refused" {
	refused artifacts/stories260k.toml '^source_repository = .*$' 'source_repository = "a/b/c"' "$ART: source_repository: expected one OWNER/NAME"
}

@test "artifact: an absolute or .. source_path is refused" {
	refused artifacts/stories260k.toml '^source_path = .*$' 'source_path = "/etc/x.gguf"' "$ART: source_path: expected a relative path without '..'"
	cp -R "$HW_ROOT/share/models/." cat/
	refused artifacts/stories260k.toml '^source_path = .*$' 'source_path = "a/../x.gguf"' "$ART: source_path: expected a relative path without '..'"
}

@test "artifact: a source_revision that is not 7 to 64 lowercase hex is refused" {
	refused artifacts/stories260k.toml '^source_revision = .*$' 'source_revision = "96f460"' "$ART: source_revision: expected 7 to 64 lowercase hex digits"
	cp -R "$HW_ROOT/share/models/." cat/
	refused artifacts/stories260k.toml '^source_revision = .*$' 'source_revision = "96F460F"' "$ART: source_revision: expected 7 to 64 lowercase hex digits"
}

@test "artifact: minimum_free_bytes below the size is refused" {
	refused artifacts/stories260k.toml '^minimum_free_bytes = .*$' 'minimum_free_bytes = 1185375' "$ART: minimum_free_bytes must be at least artifact_size_bytes"
}

@test "artifact: a context_window outside 2048 to 1048576 is refused" {
	refused artifacts/stories260k.toml '^context_window = .*$' 'context_window = 2047' "$ART: context_window: expected 2048 to 1048576"
	cp -R "$HW_ROOT/share/models/." cat/
	refused artifacts/stories260k.toml '^context_window = .*$' 'context_window = 1048577' "$ART: context_window: expected 2048 to 1048576"
}

@test "artifact: a SHA-256 that is not lowercase hex is refused" {
	refused artifacts/stories260k.toml '^artifact_sha256 = "270cba' 'artifact_sha256 = "270CBA' "$ART: artifact_sha256: expected 64 lowercase hex digits"
}

@test "artifact: a size that is not a positive integer is refused" {
	refused artifacts/stories260k.toml '^artifact_size_bytes = .*$' 'artifact_size_bytes = 0' "$ART: artifact_size_bytes: expected a positive integer"
}

@test "artifact: a format other than GGUF is refused" {
	refused artifacts/stories260k.toml '^artifact_format = .*$' 'artifact_format = "safetensors"' "$ART: artifact_format: expected GGUF"
}

@test "artifact: qualification_date without evidence is refused" {
	refused artifacts/stories260k.toml '^qualification = .*$' 'qualification = "unvalidated"\nqualification_date = "2026-07-21"' "$ART: qualification_date and qualification_evidence must appear together"
}

@test "artifact: a qualified artifact without platforms, test and dated evidence is refused" {
	refused artifacts/stories260k.toml '^qualification = .*$' 'qualification = "qualified"\nvalidated_platforms = ["generic"]\nqualification_date = "2026-07-21"\nqualification_evidence = "e"' "$ART: a qualified entry needs validated_platforms, qualification_test and dated qualification_evidence"
}

@test "artifact: an unvalidated artifact that declares qualification is refused" {
	refused artifacts/stories260k.toml '^qualification = .*$' 'qualification = "unvalidated"\nqualification_test = "heartwood.coding-agent-e2e.v1"' "$ART: an unvalidated entry declares no validated_platforms, qualification_test, qualification_date or qualification_evidence"
}

@test "artifact: only a qualified artifact may be recommended" {
	refused artifacts/stories260k.toml '^qualification = .*$' 'qualification = "unvalidated"\nrecommended = true' "$ART: only a qualified entry may be recommended"
}

@test "artifact: an unknown platform is refused" {
	refused artifacts/stories260k.toml '^qualification = .*$' 'qualification = "qualified"\nvalidated_platforms = ["aws"]' "$ART: validated_platforms: unknown value 'aws'"
}

@test "artifact: a malformed qualification_date is refused" {
	refused artifacts/stories260k.toml '^qualification = .*$' 'qualification = "qualified"\nvalidated_platforms = ["generic"]\nqualification_test = "t"\nqualification_date = "21.07.2026"\nqualification_evidence = "e"' "$ART: qualification_date: expected YYYY-MM-DD"
}

@test "artifact: a qualified artifact with everything loads" {
	edit artifacts/stories260k.toml '^qualification = .*$' 'qualification = "qualified"\nvalidated_platforms = ["generic", "terra"]\nqualification_test = "t"\nqualification_date = "2026-07-21"\nqualification_evidence = "e"\nrecommended = true'
	run -0 hw-model catalog "${CAT[@]}" --json
	echo "$output" | jq -e '.models[0].artifact.validated_platforms == ["generic","terra"]'
}

# ---- snapshots.toml ----

@test "snapshots: a wrong schema_version is refused" {
	refused snapshots.toml '^schema_version = .*$' 'schema_version = "heartwood.model-snapshot-catalog.v1"' "invalid catalog 'cat/snapshots.toml': schema_version: expected heartwood.model-snapshot-catalog.v3"
}

@test "snapshots: no download policy is refused" {
	refused snapshots.toml '^\[download_policies.transformers-safetensors\]\n.*\n.*\n' '' "invalid catalog 'cat/snapshots.toml': download_policies is required"
}

@test "snapshots: a download policy without allow_patterns is refused" {
	refused snapshots.toml '^allow_patterns = .*\n' '' "invalid catalog 'cat/snapshots.toml': download policy 'transformers-safetensors': allow_patterns is required"
}

@test "snapshots: an absolute pattern is refused" {
	refused snapshots.toml '^ignore_patterns = \["\*.bin"' 'ignore_patterns = ["/etc/*"' "invalid catalog 'cat/snapshots.toml': download policy 'transformers-safetensors': ignore_patterns: unsafe pattern '/etc/*': patterns are relative, without '..'"
}

@test "snapshots: a pattern with .. is refused" {
	refused snapshots.toml '^allow_patterns = \["\*.json"' 'allow_patterns = ["../*.json"' "invalid catalog 'cat/snapshots.toml': download policy 'transformers-safetensors': allow_patterns: unsafe pattern '../*.json': patterns are relative, without '..'"
}

@test "snapshots: a pattern listed twice is refused" {
	refused snapshots.toml '^allow_patterns = \["\*.json"' 'allow_patterns = ["*.jinja", "*.json"' "invalid catalog 'cat/snapshots.toml': download policy 'transformers-safetensors': allow_patterns: '*.jinja' is listed twice"
}

@test "snapshots: an unknown key of a policy is refused" {
	refused snapshots.toml '^ignore_patterns' 'max_files = 3\nignore_patterns' "invalid catalog 'cat/snapshots.toml': download policy 'transformers-safetensors': unknown key 'max_files'"
}

@test "snapshots: a missing required field is refused" {
	refused snapshots.toml '^startup_seconds_max = 600\n' '' "$SNAP: startup_seconds_max is required"
}

@test "snapshots: an unknown key is refused" {
	refused snapshots.toml '^precision = "FP8"$' 'precision = "FP8"\nquantization = "fp8"' "$SNAP: unknown key 'quantization'"
}

@test "snapshots: a short source_revision is refused" {
	refused snapshots.toml '^source_revision = "dcaee4d4dfc5ee71ad501f01f530e5652438fde0"$' 'source_revision = "dcaee4d"' "$SNAP: source_revision: expected a full commit of 40 to 64 lowercase hex digits"
}

@test "snapshots: minimum_free_bytes below expected_size_bytes is refused" {
	refused snapshots.toml '^minimum_free_bytes = 40000000000$' 'minimum_free_bytes = 31999999999' "$SNAP: minimum_free_bytes must be at least expected_size_bytes"
}

@test "snapshots: recommended_disk_bytes below minimum_free_bytes is refused" {
	refused snapshots.toml '^recommended_disk_bytes = 64000000000$' 'recommended_disk_bytes = 39999999999' "$SNAP: recommended_disk_bytes must be at least minimum_free_bytes"
}

@test "snapshots: tensor_parallel_size below minimum_gpu_count is refused" {
	refused snapshots.toml '^minimum_gpu_count = 1$' 'minimum_gpu_count = 2' "$SNAP: tensor_parallel_size must be at least minimum_gpu_count"
}

@test "snapshots: a context_window above maximum_context_window is refused" {
	refused snapshots.toml '^context_window = 32768$' 'context_window = 262145' "$SNAP: expected 2048 <= context_window <= maximum_context_window <= 1048576"
}

@test "snapshots: a maximum_context_window above 1048576 is refused" {
	refused snapshots.toml '^maximum_context_window = 262144$' 'maximum_context_window = 1048577' "$SNAP: expected 2048 <= context_window <= maximum_context_window <= 1048576"
}

@test "snapshots: an unknown tier is refused" {
	refused snapshots.toml '^tier = "powerful"$' 'tier = "huge"' "$SNAP: tier: expected standard, powerful or maximum"
}

@test "snapshots: an unknown tool_call_parser is refused" {
	refused snapshots.toml '^tool_call_parser = "qwen3_coder"$' 'tool_call_parser = "qwen3_xml"' "$SNAP: tool_call_parser: expected hermes, openai or qwen3_coder"
}

@test "snapshots: a download_policy that is not defined is refused" {
	refused snapshots.toml '^download_policy = "transformers-safetensors"$' 'download_policy = "everything"' "$SNAP: download_policy: no policy 'everything' in [download_policies]"
}

@test "snapshots: the runtime profile must be vllm-cuda" {
	refused snapshots.toml '^runtime_profile = "vllm-cuda"$' 'runtime_profile = "llama-cpp-cpu"' "$SNAP: runtime_profile: expected vllm-cuda"
}

@test "snapshots: a qualified snapshot without a test is refused" {
	refused snapshots.toml '^qualification_test = .*\n' '' "$SNAP: a qualified entry needs validated_platforms, qualification_test and dated qualification_evidence"
}

@test "snapshots: evidence without a date is refused" {
	refused snapshots.toml '^qualification_date = "2026-07-21"\n' '' "$SNAP: qualification_date and qualification_evidence must appear together"
}

@test "snapshots: an unvalidated but recommended snapshot is refused" {
	refused snapshots.toml '^qualification = "qualified"\nvalidated_platforms = \["carina"\]\nqualification_test = .*\nqualification_date = .*\nqualification_evidence = .*$' 'qualification = "unvalidated"' "$SNAP: only a qualified entry may be recommended"
}

@test "snapshots: startup_seconds_min above startup_seconds_max is refused" {
	refused snapshots.toml '^startup_seconds_min = 180$' 'startup_seconds_min = 601' "$SNAP: startup_seconds_min must not exceed startup_seconds_max"
}

@test "snapshots: a count that is not a positive integer is refused" {
	refused snapshots.toml '^recommended_cpu_count = 8$' 'recommended_cpu_count = "8"' "$SNAP: recommended_cpu_count: expected a positive integer"
}

# ---- recommend ----

@test "recommend: without nvidia-smi there is no GPU and no recommendation" {
	export PATH="$PROJ/bin:/usr/bin:/bin:$HW_ROOT"
	run -0 --separate-stderr hw-model recommend --json
	echo "$output" | jq -e '.recommended == null and .nvidia_smi == false and .gpus == [] and .maximum_tier == "standard" and .platform_id == "generic"'
}

@test "recommend: Carina with an L40S gets the FP8 snapshot" {
	gpus "$L40S"
	HEARTWOOD_PLATFORM=carina run -0 --separate-stderr hw-model recommend --json
	echo "$output" | jq -e '.maximum_tier == "powerful" and .recommended.model_id == "qwen3-coder-30b-a3b-instruct-fp8-vllm"'
	echo "$output" | jq -e '.gpus == [{index:0, name:"NVIDIA L40S", memory_total_bytes:48305799168, memory_free_bytes:47185920000, driver_version:"590.48.01", compute_capability:"8.9"}]'
	echo "$output" | jq -e '.recommended | .runtime == "vllm" and .size_bytes == 32000000000 and .allow_patterns[0] == "*.json" and .tool_call_parser == "qwen3_coder" and .catalog_source == "catalog"'
	echo "$output" | jq -e '.choices[] | select(.model_id == "qwen3-coder-30b-a3b-instruct-w4a16-awq-vllm") | .candidate == false and .reason == "it is not validated on carina"'
}

@test "recommend: Carina with a GPU too small gets none, with the reason" {
	gpus '0, NVIDIA A10, 24564, 24000, 590.48.01, 8.6'
	HEARTWOOD_PLATFORM=carina run -0 hw-model recommend --json
	echo "$output" | jq -e '.recommended == null'
	echo "$output" | jq -e '.choices[] | select(.model_id == "qwen3-coder-30b-a3b-instruct-fp8-vllm") | .reason == "it needs 1 GPU(s) of at least 42000000000 bytes each; 0 present"'
}

@test "recommend: Terra with two T4s gets the AWQ snapshot" {
	gpus "$T4A" "$T4B"
	HEARTWOOD_PLATFORM=terra run -0 hw-model recommend --json
	echo "$output" | jq -e '.maximum_tier == "maximum" and .recommended.model_id == "qwen3-coder-30b-a3b-instruct-w4a16-awq-vllm" and .recommended.tensor_parallel_size == 2'
}

@test "recommend: Terra with one T4 gets none" {
	gpus "$T4A"
	HEARTWOOD_PLATFORM=terra run -0 hw-model recommend --json
	echo "$output" | jq -e '.recommended == null'
}

@test "recommend: --gpus must equal the tensor-parallel size" {
	gpus "$T4A" "$T4B"
	HEARTWOOD_PLATFORM=terra run -0 hw-model recommend --gpus 1 --json
	echo "$output" | jq -e '.recommended == null and .requested_gpus == 1'
	echo "$output" | jq -e '.choices[] | select(.model_id == "qwen3-coder-30b-a3b-instruct-w4a16-awq-vllm") | .reason == "its tensor parallel size 2 is not the 1 GPU(s) asked for"'
	HEARTWOOD_PLATFORM=terra run -0 hw-model recommend --gpus 2 --json
	echo "$output" | jq -e '.recommended.model_id == "qwen3-coder-30b-a3b-instruct-w4a16-awq-vllm"'
}

@test "recommend: a snapshot not validated on the platform is no candidate" {
	gpus "$L40S"
	run -0 hw-model recommend --json
	echo "$output" | jq -e '.recommended == null'
	echo "$output" | jq -e '[.choices[] | select(.runtime == "vllm") | .reason] == ["it is not validated on generic", "it is not validated on generic"]'
}

@test "recommend: a tier above the platform's highest is no candidate" {
	gpus "$L40S"
	edit snapshots.toml '^validated_platforms = \["carina"\]$' 'validated_platforms = ["carina", "generic"]'
	run -0 hw-model recommend "${CAT[@]}" --json
	echo "$output" | jq -e '.recommended == null'
	echo "$output" | jq -e '.choices[] | select(.model_id == "qwen3-coder-30b-a3b-instruct-fp8-vllm") | .reason == "its tier powerful is above standard, the highest on generic"'
}

@test "recommend: an unrecommended snapshot is no candidate" {
	gpus "$L40S"
	edit snapshots.toml '^recommended = true$' 'recommended = false'
	HEARTWOOD_PLATFORM=carina run -0 hw-model recommend "${CAT[@]}" --json
	echo "$output" | jq -e '.recommended == null'
	echo "$output" | jq -e '.choices[] | select(.model_id == "qwen3-coder-30b-a3b-instruct-fp8-vllm") | .reason == "the catalog does not recommend it"'
}

# both snapshots validated on terra, fitting on two 48 GB GPUs
both_on_terra() {
	gpus "$L40S" '1, NVIDIA L40S, 46068, 45000, 590.48.01, 8.9'
	edit snapshots.toml '^validated_platforms = \["carina"\]$' 'validated_platforms = ["carina", "terra"]'
	export HEARTWOOD_PLATFORM=terra
}

@test "recommend: of two candidates the larger tensor-parallel size wins" {
	both_on_terra
	run -0 hw-model recommend "${CAT[@]}" --json
	echo "$output" | jq -e '[.choices[] | select(.candidate) | .model_id] | length == 2'
	echo "$output" | jq -e '.recommended.model_id == "qwen3-coder-30b-a3b-instruct-w4a16-awq-vllm"'
}

@test "recommend: of two candidates the higher tier wins" {
	both_on_terra
	edit snapshots.toml '^tier = "powerful"$' 'tier = "maximum"'
	run -0 hw-model recommend "${CAT[@]}" --json
	echo "$output" | jq -e '.recommended.model_id == "qwen3-coder-30b-a3b-instruct-fp8-vllm"'
}

@test "recommend: of two equal candidates the earlier in the catalog wins" {
	both_on_terra
	edit snapshots.toml '^tensor_parallel_size = 1$' 'tensor_parallel_size = 2'
	run -0 hw-model recommend "${CAT[@]}" --json
	echo "$output" | jq -e '.recommended.model_id == "qwen3-coder-30b-a3b-instruct-fp8-vllm"'
}

@test "recommend: a GGUF artifact's choice: RAM, disk, precision and license" {
	gpus "$L40S"
	edit artifacts/stories260k.toml '^source_path = .*$' 'source_path = "qwen/model-Q4_K_M.gguf"'
	edit artifacts/stories260k.toml '^license_posture = .*$' 'license_posture = "Released under the MIT license; attribution kept."'
	run -0 hw-model recommend "${CAT[@]}" --json
	echo "$output" | jq -e '.choices[0] | .runtime == "llama-cpp" and .precision == "Q4_K_M" and .license_id == "MIT" and
	    .recommended_ram_bytes == 17179869184 and .recommended_disk_bytes == 16777216 and .candidate == false and .tier == "standard"'
	edit artifacts/stories260k.toml '^artifact_size_bytes = .*$' 'artifact_size_bytes = 8000000000'
	edit artifacts/stories260k.toml '^minimum_free_bytes = .*$' 'minimum_free_bytes = 9000000000'
	run -0 hw-model recommend "${CAT[@]}" --json
	echo "$output" | jq -e '.choices[0] | .recommended_ram_bytes == 32000000000 and .recommended_disk_bytes == 24000000000'
}

@test "recommend: the shipped GGUF has no precision token and its license none" {
	run -0 hw-model recommend --json
	echo "$output" | jq -e '.choices[0] | .model_id == "llama-cpp-stories260k-ci" and .precision == null and .license_id == null'
}

@test "recommend: a malformed nvidia-smi line is refused" {
	gpus '0, NVIDIA L40S, lots, 45000, 590.48.01, 8.9'
	run -65 --separate-stderr hw-model recommend
	[ "$stderr" = "hw-model: nvidia-smi: line 1: memory.total and memory.free must be MiB, free at most total" ]
	gpus '0, NVIDIA L40S, 46068, 45000, 590.48.01'
	run -65 --separate-stderr hw-model recommend
	[ "$stderr" = "hw-model: nvidia-smi: line 1: expected index, name, memory.total, memory.free, driver_version and compute_cap" ]
	gpus '0, NVIDIA L40S, 46068, 46069, 590.48.01, 8.9'
	run -65 --separate-stderr hw-model recommend
	[ "$stderr" = "hw-model: nvidia-smi: line 1: memory.total and memory.free must be MiB, free at most total" ]
}

@test "recommend: a failing nvidia-smi is no GPU, with a warning" {
	printf '#!/bin/sh\necho "NVIDIA-SMI has failed" >&2\nexit 9\n' >bin/nvidia-smi
	chmod +x bin/nvidia-smi
	export PATH="$PROJ/bin:$ORIGPATH"
	run -0 --separate-stderr hw-model recommend --json
	# its own message passes through, then ours
	[ "$stderr" = "NVIDIA-SMI has failed
hw-model: nvidia-smi failed (exit 9): no GPU inventory; recommending as for no GPU" ]
	[ "$(jq -c '[.nvidia_smi, .gpus, .recommended, (.choices | length > 0)]' <<<"$output")" = '[false,[],null,true]' ]
}

@test "recommend: the plain listing" {
	gpus "$L40S"
	HEARTWOOD_PLATFORM=carina run -0 hw-model recommend
	[ "${lines[0]}" = "recommended: qwen3-coder-30b-a3b-instruct-fp8-vllm (Qwen3-Coder-30B-A3B-Instruct FP8 for vLLM)" ]
}

@test "recommend: a bad --gpus is a usage error" {
	run -2 --separate-stderr hw-model recommend --gpus 0
	[ "$stderr" = "hw-model: invalid --gpus '0': expected 1 to 64" ]
	run -2 hw-model recommend --gpus x
	run -2 hw-model recommend extra
	run -2 hw-model catalog extra
}
