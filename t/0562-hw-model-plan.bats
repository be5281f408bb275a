#!/usr/bin/env bats
# hw-model plan: the resource planner of hw-model(1) PLANNING with the
# reference's numbers: the context tiers, 128 KiB a token, 80 % of the
# memory available (MemAvailable, cgroup v2 and v1, through the test root
# HW_TEST_SYSROOT), the overheads and multipliers, the budgets, and the
# GPU inventory of stand-in nvidia-smi and sinfo programs.

load lib

SHA=0123456789abcdef0123456789abcdef01234567
ARGS=(--source-repository org/model --source-revision "$SHA" --license-posture 'Apache-2.0')
GIB=1073741824

# has JQ-ARGS...: standard input is not empty and jq -e holds on it (jq 1.6
# -e passes on empty input)
has() {
	local in
	in=$(cat)
	[ -n "$in" ] && jq -e "$@" <<<"$in" >/dev/null
}

setup() {
	PROJ=$(mktemp -d "${BATS_TMPDIR:-/tmp}/hw-test.XXXXXX")
	cd "$PROJ" || return 1
	mkdir -p bin sys/proc/self
	export PATH="$PROJ/bin:$PATH" HW_TEST_SYSROOT="$PROJ/sys"
	echo '0::/' >sys/proc/self/cgroup
	meminfo 67108864
	# no GPU unless a test says so: nvidia-smi as without a driver
	printf '#!/bin/sh\necho "No devices were found"\nexit 9\n' >bin/nvidia-smi
	chmod +x bin/nvidia-smi
}

# meminfo KB: /proc/meminfo with MemAvailable KB
meminfo() {
	printf 'MemTotal:       999999999 kB\nMemFree:        1 kB\nMemAvailable:   %s kB\n' "$1" >sys/proc/meminfo
}

# gguf_model [CONTEXT]: a small GGUF model imported; its id in ID, size in SIZE
gguf_model() {
	{ printf 'GGUF'; head -c 100000 /dev/zero; } >m-Q4_K_M.gguf
	SIZE=100004
	ID=$(hw-model import m-Q4_K_M.gguf "${ARGS[@]}" --context-window "${1:-1048576}" | jq -r .model_id)
}

# snap_model [CONTEXT]: a safetensors directory imported for vLLM (ID)
snap_model() {
	mkdir -p snap
	printf '{"architectures":["Qwen3ForCausalLM"],"model_type":"qwen3","max_position_embeddings":%s}\n' \
		"${1:-262144}" >snap/config.json
	head -c 5000 /dev/zero >snap/model.safetensors
	ID=$(hw-model import snap "${ARGS[@]}" | jq -r .model_id)
}

# mem_for TOKENS: the MemAvailable (kB) that leaves room for exactly
# TOKENS tokens of llama.cpp context for the GGUF model
mem_for() {
	local w=$((SIZE * 5 / 4)) f=$((4 * GIB))
	echo $(( ((w + f + $1 * 131072) * 5 / 4 + 1023) / 1024 ))
}

# gpus LINE...: a stand-in nvidia-smi printing each line
gpus() {
	{
		echo '#!/bin/sh'
		echo 'case "$*" in *"--query-gpu=index,name,memory.total,memory.free,driver_version,compute_cap --format=csv,noheader,nounits"*) ;; *) exit 2;; esac'
		for l in "$@"; do printf 'echo "%s"\n' "$l"; done
	} >bin/nvidia-smi
}

# meta JQ: edit the imported model's heartwood-model.json (plan does not
# verify the files; run does)
meta() {
	local m=.heartwood/models/$ID/heartwood-model.json
	jq -c "$1" "$m" >m.tmp
	mv m.tmp "$m"
}

@test "plan: exactly room for 18,432 tokens gives 18,432: 16,384 in, 2,048 out" {
	gguf_model
	meminfo "$(mem_for 18432)"
	run -0 --separate-stderr hw-model plan "$ID" --json
	[ -z "$stderr" ]
	echo "$output" | has --argjson s "$SIZE" '
		.schema_version == "heartwood.model-resource-plan.v1" and
		.runtime == "llama-cpp" and .memory == "ram" and
		.model_size_bytes == $s and
		.context_window == 18432 and .max_input_tokens == 16384 and
		.max_output_tokens == 2048 and .max_message_chars == 65536 and
		.enforce_eager == false and .gpu_source == null'
	# the estimate: int(1.25 size) + 4 GiB + 18432 x 128 KiB
	[ "$(echo "$output" | jq .estimate_bytes)" -eq $((SIZE * 5 / 4 + 4 * GIB + 18432 * 131072)) ]
}

@test "plan: one token short of 18,432 is refused" {
	gguf_model
	meminfo "$(mem_for 18431)"
	run -69 --separate-stderr hw-model plan "$ID" --json
	[ -z "$output" ]
	[[ "$stderr" == "hw-model: model '$ID' does not fit: "*"leave room for 18431 tokens of context, 18432 needed" ]]
}

@test "plan: room for 40,000 tokens gives the 32,768 tier: 28,672 in, 4,096 out" {
	gguf_model
	meminfo "$(mem_for 40000)"
	run -0 hw-model plan "$ID" --json
	echo "$output" | has '.context_window == 32768 and
		.max_input_tokens == 28672 and .max_output_tokens == 4096 and
		.max_message_chars == 114688'
}

@test "plan: each tier is the largest at or below the room" {
	gguf_model
	for t in 32767:18432 65535:32768 65536:65536 200000:131072 262144:262144 600000:524288 2000000:1048576; do
		meminfo "$(mem_for "${t%%:*}")"
		run -0 hw-model plan "$ID" --json
		[ "$(echo "$output" | jq .context_window)" -eq "${t##*:}" ]
	done
}

@test "plan: the model's own context window caps the choice" {
	gguf_model 32768
	meminfo "$(mem_for 200000)"
	run -0 hw-model plan "$ID" --json
	echo "$output" | has '.context_window == 32768'
}

@test "plan: the cgroup v2 limit less its usage wins over MemAvailable" {
	gguf_model
	meminfo "$(mem_for 200000)"
	mkdir -p sys/sys/fs/cgroup/work.slice
	echo '0::/work.slice' >sys/proc/self/cgroup
	echo $(( $(mem_for 40000) * 1024 + 5 * GIB )) >sys/sys/fs/cgroup/work.slice/memory.max
	echo $((5 * GIB)) >sys/sys/fs/cgroup/work.slice/memory.current
	run -0 hw-model plan "$ID" --json
	echo "$output" | has --argjson r $(( $(mem_for 40000) * 1024 )) '
		.context_window == 32768 and .ram_available_bytes == $r'
	# "max" is no limit
	echo max >sys/sys/fs/cgroup/work.slice/memory.max
	run -0 hw-model plan "$ID" --json
	echo "$output" | has '.context_window == 131072'
}

@test "plan: the cgroup v1 limit less its usage wins over MemAvailable" {
	gguf_model
	meminfo "$(mem_for 200000)"
	mkdir -p sys/sys/fs/cgroup/memory
	printf '0::/\n4:memory:/\n' >sys/proc/self/cgroup
	echo $(( $(mem_for 20000) * 1024 + GIB )) >sys/sys/fs/cgroup/memory/memory.limit_in_bytes
	echo "$GIB" >sys/sys/fs/cgroup/memory/memory.usage_in_bytes
	run -0 hw-model plan "$ID" --json
	echo "$output" | has '.context_window == 18432'
}

@test "plan: memory that cannot be read plans the minimum, 18,432" {
	gguf_model
	rm sys/proc/meminfo
	run -0 hw-model plan "$ID" --json
	echo "$output" | has '.context_window == 18432 and
		.ram_available_bytes == null and .max_output_tokens == 2048'
}

@test "plan: vLLM on one GPU with 16 GiB free: 2 GiB + 1.15 x size, --enforce-eager" {
	snap_model
	gpus "0, NVIDIA T4, 16384, 16384, 550.54.15, 7.5"
	run -0 --separate-stderr hw-model plan "$ID" --json
	echo "$output" | has '.runtime == "vllm" and .memory == "gpu" and
		.gpu_source == "nvidia-smi" and .available_bytes == 17179869184 and
		.context_window == 65536 and .max_input_tokens == 61440 and
		.max_output_tokens == 4096 and .enforce_eager == true and
		.tensor_parallel_size == 1 and .gpus[0].compute_capability == "7.5" and
		.gpus[0].driver_version == "550.54.15"'
	s=$(echo "$output" | jq .model_size_bytes)
	[ "$(echo "$output" | jq .estimate_bytes)" -eq $((s / 100 * 115 + s % 100 * 115 / 100 + 2 * GIB + 65536 * 131072)) ]
}

@test "plan: vLLM uses the GPU with most free memory; over 20 GiB no --enforce-eager" {
	snap_model
	gpus "0, NVIDIA L40S, 46068, 1000, 550.54.15, 8.9" "1, NVIDIA L40S, 46068, 24576, 550.54.15, 8.9"
	run -0 hw-model plan "$ID" --json
	echo "$output" | has '.available_bytes == 25769803776 and
		.context_window == 131072 and .enforce_eager == false'
}

@test "plan: tensor parallel 2 adds the two largest; too few GPUs is refused" {
	snap_model
	meta '.tensor_parallel_size = 2'
	gpus "0, NVIDIA T4, 16384, 8192, 550.54.15, 7.5" "1, NVIDIA T4, 16384, 4096, 550.54.15, 7.5" "2, NVIDIA T4, 16384, 2048, 550.54.15, 7.5"
	run -0 hw-model plan "$ID" --json
	echo "$output" | has '.available_bytes == 12884901888 and
		.tensor_parallel_size == 2 and .enforce_eager == true'
	gpus "0, NVIDIA T4, 16384, 8192, 550.54.15, 7.5"
	run -69 --separate-stderr hw-model plan "$ID"
	[ "$stderr" = "hw-model: model '$ID' needs 2 GPUs (tensor parallel), 1 found" ]
}

@test "plan: vLLM without a GPU is refused" {
	snap_model
	run -69 --separate-stderr hw-model plan "$ID"
	[ "$stderr" = "hw-model: model '$ID' runs on vLLM, which needs a GPU: none found (nvidia-smi, sinfo)" ]
}

@test "plan: compute capability below 7.5 is refused for vLLM" {
	snap_model
	gpus "0, Tesla V100, 32768, 32768, 550.54.15, 7.0"
	run -69 --separate-stderr hw-model plan "$ID"
	[ "$stderr" = "hw-model: GPU 0 ('Tesla V100'): compute capability 7.0, model '$ID' needs 7.5" ]
}

@test "plan: an FP8 model needs compute capability 8.9, gpt-oss 8.0" {
	snap_model
	meta '.precision = "FP8"'
	gpus "0, NVIDIA A100, 40960, 40960, 550.54.15, 8.0"
	run -69 --separate-stderr hw-model plan "$ID"
	[ "$stderr" = "hw-model: GPU 0 ('NVIDIA A100'): compute capability 8.0, model '$ID' needs 8.9" ]
	meta '.precision = null | .model_type = "gpt_oss"'
	run -0 hw-model plan "$ID" --json
	gpus "0, NVIDIA T4, 16384, 16384, 550.54.15, 7.5"
	run -69 --separate-stderr hw-model plan "$ID"
	[ "$stderr" = "hw-model: GPU 0 ('NVIDIA T4'): compute capability 7.5, model '$ID' needs 8.0" ]
}

@test "plan: a driver older than 525.60.13 is refused for vLLM" {
	snap_model
	gpus "0, NVIDIA L40S, 46068, 46068, 525.60.12, 8.9"
	run -69 --separate-stderr hw-model plan "$ID"
	[ "$stderr" = "hw-model: GPU 0: driver 525.60.12, vLLM needs 525.60.13 or later" ]
	gpus "0, NVIDIA L40S, 46068, 46068, 525.60.13, 8.9"
	run -0 hw-model plan "$ID" --json
}

@test "plan: a qualified catalog model keeps its context and needs its GPU memory" {
	snap_model
	meta '.qualification = "qualified" | .context_window = 32768 | .minimum_gpu_memory_bytes = 42000000000'
	gpus "0, NVIDIA L40S, 46068, 40000, 550.54.15, 8.9"
	run -69 --separate-stderr hw-model plan "$ID"
	[ "$stderr" = "hw-model: model '$ID' needs 42000000000 bytes of GPU memory, 41943040000 available" ]
	gpus "0, NVIDIA L40S, 46068, 46068, 550.54.15, 8.9"
	run -0 hw-model plan "$ID" --json
	echo "$output" | has '.context_window == 32768 and .max_input_tokens == 28672'
}

@test "plan: an nvidia-smi line that does not parse is refused" {
	snap_model
	gpus "0, NVIDIA L40S, lots, 46068, 550.54.15, 8.9"
	run -65 --separate-stderr hw-model plan "$ID"
	[ "$stderr" = "hw-model: nvidia-smi: line 1: memory.total and memory.free must be MiB, free at most total" ]
}

@test "plan: under Slurm the GPUs come from sinfo and the known-model table" {
	snap_model
	cat >bin/sinfo <<'EOF'
#!/bin/sh
[ "$*" = "--noheader --format=%P|%G|%a|%m|%c" ] || exit 2
echo 'cpu|(null)|up|256000|32'
echo 'gpu*|gpu:l40s:4(S:0-1)|up|512000|64'
echo 'old|gpu:t4:8|down|64000|16'
echo 'odd|gpu:h999:8|up|64000|16'
EOF
	chmod +x bin/sinfo
	run -0 hw-model plan "$ID" --json
	echo "$output" | has '.gpu_source == "sinfo" and (.gpus | length) == 4 and
		.gpus[0].name == "l40s" and .gpus[0].partition == "gpu" and
		.gpus[0].memory_total_bytes == 48000000000 and
		.available_bytes == 48000000000 and .enforce_eager == false and
		.context_window == 262144'
	printf '#!/bin/sh\necho "t|gpu:t4:2|up|1|1"\n' >bin/sinfo
	run -0 hw-model plan "$ID" --json
	echo "$output" | has '.available_bytes == 16000000000 and .enforce_eager == true'
}

@test "plan: the selected model by default; without one it is a configuration error" {
	run -64 --separate-stderr hw-model plan
	[ "$stderr" = "hw-model: no model selected: name one or run 'hw-model select ID'" ]
	gguf_model
	meminfo "$(mem_for 40000)"
	hw-model select "$ID" >/dev/null
	run -0 --separate-stderr hw-model plan
	[ "${lines[0]}" = "model     $ID (llama-cpp, $SIZE bytes)" ]
	[ "${lines[2]}" = "context   32768 tokens: 28672 in, 4096 out" ]
}

@test "plan: an unknown model is 66, a bad id 2, a bad option 2" {
	run -66 --separate-stderr hw-model plan imported-0000000000000000
	[ "$stderr" = "hw-model: no model 'imported-0000000000000000' in '.heartwood/models'" ]
	run -2 --separate-stderr hw-model plan ../x
	[ "$stderr" = "hw-model: invalid model id '../x'" ]
	run -2 hw-model plan --fast
	run -2 hw-model plan a b
}
