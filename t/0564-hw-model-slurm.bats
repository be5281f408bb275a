#!/usr/bin/env bats
# hw-model run --slurm: on a Slurm job the model is staged to the job's
# node-local scratch ($LOCAL_SCRATCH_JOB), verified there, and its runtime
# launched through srun once the researcher confirms; stand-in srun and
# llama-server programs written here record what they were given.

load lib

SHA=0123456789abcdef0123456789abcdef01234567
ARGS=(--source-repository org/model --source-revision "$SHA" --license-posture 'Apache-2.0')

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
	printf 'MemAvailable:   67108864 kB\n' >sys/proc/meminfo
	printf '#!/bin/sh\nexit 9\n' >bin/nvidia-smi
	chmod +x bin/nvidia-smi
	unset HW_MODEL HW_BASE_URL HW_API_KEY_ENV
	RUN_PID=
	PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
}

teardown() {
	if [ -n "$RUN_PID" ]; then
		kill "$RUN_PID" 2>/dev/null
		wait "$RUN_PID" 2>/dev/null
	fi
	if [ -s child.pid ]; then kill "$(cat child.pid)" 2>/dev/null; fi
	cd / && rm -rf "$PROJ"
}

gguf_model() {
	{ printf 'GGUF'; head -c 100000 /dev/zero; } >m-Q4_K_M.gguf
	ID=$(hw-model import m-Q4_K_M.gguf "${ARGS[@]}" --context-window 32768 | jq -r .model_id)
}

snap_model() {
	mkdir -p snap
	printf '{"architectures":["Qwen3ForCausalLM"],"model_type":"qwen3","max_position_embeddings":40960}\n' >snap/config.json
	head -c 5000 /dev/zero >snap/model.safetensors
	ID=$(hw-model import snap "${ARGS[@]}" | jq -r .model_id)
}

# standin NAME [BODY]: a stand-in runtime that records its argv (one per
# line) in NAME.argv, its environment in NAME.env and its pid in child.pid,
# then runs BODY (by default: serve the replay model's turns.jsonl on the
# --port it was given, listing the served id)
standin() {
	local body=${2:-}
	if [ -z "$body" ]; then
		body='port=; alias=; prev=
for a in "$@"; do
	case $prev in --port) port=$a;; --alias|--served-model-name) alias=$a;; esac
	prev=$a
done
exec hw-model serve --replay '"$PROJ"'/turns.jsonl --port "$port" --served-model-name "$alias"'
	fi
	{
		echo '#!/bin/bash'
		echo "if [ \"\$1\" = __heartwood_verify_runtime__ ]; then exit \$(cat '$PROJ/verify.status' 2>/dev/null || echo 0); fi"
		echo "printf '%s\n' \"\$@\" >'$PROJ/$1.argv'"
		echo "env >'$PROJ/$1.env'"
		echo "echo \$\$ >'$PROJ/child.pid'"
		printf '%s\n' "$body"
	} >"bin/$1"
	chmod +x "bin/$1"
}

# hwrun ARGS...: hw-model run, stopped after 60 s should it hang (status 124)
hwrun() { timeout 60 hw-model run "$@"; }

# start ARGS...: hw-model run in the background; waits for its ready line
start() {
	hw-model run "$@" >run.out 2>run.err &
	RUN_PID=$!
	for _ in $(seq 400); do
		if [ -s run.out ] && jq -e .event run.out >/dev/null 2>&1; then return 0; fi
		if ! kill -0 "$RUN_PID" 2>/dev/null; then break; fi
		sleep 0.05
	done
	echo "hw-model run did not become ready"; cat run.err
	return 1
}

# stop_run: SIGTERM to hw-model run; its status in STOPPED
stop_run() {
	kill -TERM "$RUN_PID"
	STOPPED=0
	wait "$RUN_PID" || STOPPED=$?
	RUN_PID=
}


# slurm_setup: a stand-in srun that records its argv and environment and
# runs the command after its options; a scratch directory
slurm_setup() {
	mkdir -p scratch
	export LOCAL_SCRATCH_JOB=$PROJ/scratch SLURM_JOB_ID=4242 SLURM_NODELIST=node7
	{
		echo '#!/bin/bash'
		echo "printf '%s\n' \"\$@\" >'$PROJ/srun.argv'"
		echo "env >'$PROJ/srun.env'"
		echo 'while [[ $1 == --* ]]; do shift; done'
		echo 'exec "$@"'
	} >bin/srun
	chmod +x bin/srun
	gguf_model
	hw-model select "$ID" --port "$PORT" >/dev/null
	standin llama-server
	echo '{"content":"Hello from the node."}' >turns.jsonl
}

@test "run --slurm: staged to scratch, verified, launched through srun after a yes" {
	slurm_setup
	echo y >answer
	hw-model run --slurm <answer >run.out 2>run.err &
	RUN_PID=$!
	for _ in $(seq 400); do
		if [ -s run.out ] && jq -e .event run.out >/dev/null 2>&1; then break; fi
		sleep 0.05
	done
	[ -s run.out ]
	d=$PROJ/scratch/heartwood-models/$ID
	cmp "$d/m-Q4_K_M.gguf" m-Q4_K_M.gguf
	(cd "$d" && sha256sum -c --quiet SHA256SUMS)
	[ "$(stat -c %a "$PROJ/scratch/heartwood-models")" = 700 ]
	printf '%s\n' --nodes=1 --ntasks=1 llama-server --model "$d/m-Q4_K_M.gguf" \
		--jinja --alias heartwood-managed-model --host 127.0.0.1 \
		--port "$PORT" --ctx-size 32768 >want.argv
	diff want.argv srun.argv
	grep -qx 'SLURM_JOB_ID=4242' srun.env
	grep -qx 'SLURM_NODELIST=node7' srun.env
	[ "$(grep -c '^SLURM_JOB_ID=' srun.env)" -eq 1 ]
	grep -q "^hw-model: launch it through srun? \[y/N\] hw-model: model '$ID' staged to $d and verified$" run.err
	run -0 --separate-stderr hw ask hello
	[ "$(jq -r '.conversation[-1].content' <<<"${lines[1]}")" = "Hello from the node." ]
	stop_run
	[ "$STOPPED" -eq 0 ]
}

@test "run --slurm: without a yes nothing is staged or started" {
	slurm_setup
	echo n >answer
	run -1 --separate-stderr hwrun --slurm <answer
	[[ "$stderr" == *"hw-model: not confirmed: nothing was staged or started" ]]
	[[ "$stderr" == *"  srun --nodes=1 --ntasks=1 llama-server --model $PROJ/scratch/heartwood-models/$ID/m-Q4_K_M.gguf"* ]]
	[ ! -e srun.argv ]
	[ ! -e scratch/heartwood-models ]
	run -1 --separate-stderr hwrun --slurm </dev/null
	[ ! -e srun.argv ]
}

@test "run --slurm: a staged copy that no longer verifies is staged again" {
	slurm_setup
	start --slurm --yes
	stop_run
	d=scratch/heartwood-models/$ID
	printf 'X' >>"$d/m-Q4_K_M.gguf"
	rm srun.argv
	start --slurm --yes
	cmp "$d/m-Q4_K_M.gguf" m-Q4_K_M.gguf
	grep -q "^hw-model: model '$ID' staged to " run.err
	stop_run
	start --slurm --yes
	grep -q "^hw-model: model '$ID' already staged in " run.err
	stop_run
	[ "$STOPPED" -eq 0 ]
}

@test "run --slurm: no scratch, scratch that is not a directory, a linked store: 72" {
	slurm_setup
	unset LOCAL_SCRATCH_JOB
	run -72 --separate-stderr hwrun --slurm --yes
	[ "${stderr##*$'\n'}" = "hw-model: LOCAL_SCRATCH_JOB is not set: the node-local scratch of the job is needed" ]
	run -72 --separate-stderr env LOCAL_SCRATCH_JOB=scratch hw-model run --slurm --yes
	[ "${stderr##*$'\n'}" = "hw-model: LOCAL_SCRATCH_JOB is not an absolute path: the node-local scratch of the job is needed" ]
	touch "$PROJ/file"
	run -72 --separate-stderr env LOCAL_SCRATCH_JOB="$PROJ/file" hw-model run --slurm --yes
	[ "${stderr##*$'\n'}" = "hw-model: LOCAL_SCRATCH_JOB is not an absolute path to a writable directory: the node-local scratch of the job is needed" ]
	# the store in scratch is never reached through a symbolic link
	export LOCAL_SCRATCH_JOB=$PROJ/scratch
	mkdir elsewhere
	ln -s "$PROJ/elsewhere" scratch/heartwood-models
	run -72 --separate-stderr hwrun --slurm --yes
	[[ "${stderr##*$'\n'}" == "hw-model: "*"scratch/heartwood-models"* ]]
	[ -z "$(ls -A elsewhere)" ]
	[ ! -e srun.argv ]
}

@test "run --slurm: srun missing is 69; --yes without --slurm is a usage error" {
	gguf_model
	hw-model select "$ID" --port "$PORT" >/dev/null
	standin llama-server
	export LOCAL_SCRATCH_JOB=$PROJ
	run -69 --separate-stderr hwrun --slurm --yes
	[ "${stderr##*$'\n'}" = "hw-model: srun is not installed (not on PATH)" ]
	run -2 hwrun --yes
}
