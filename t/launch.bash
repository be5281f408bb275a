# t/launch.bash - helpers for the hw-model select/run suites (t/0563,
# t/0564, t/0606): stand-in runtimes that record their argv and environment and
# serve the replay model, the model fixtures, and the runner.  Load
# after lib.

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
	launch_setup
}

# launch_setup, launch_teardown: the stand-ins' PATH, system files and port
# in the current directory $PROJ, and their processes stopped (for a suite
# with a setup of its own)
launch_setup() {
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
	launch_teardown
	cd / && rm -rf "$PROJ"
}

launch_teardown() {
	if [ -n "$RUN_PID" ]; then
		kill "$RUN_PID" 2>/dev/null
		wait "$RUN_PID" 2>/dev/null
	fi
	if [ -s "$PROJ/child.pid" ]; then kill "$(cat "$PROJ/child.pid")" 2>/dev/null; fi
	return 0
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
