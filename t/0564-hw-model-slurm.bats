#!/usr/bin/env bats
# hw-model run --slurm: on a Slurm job the model is staged to the job's
# node-local scratch ($LOCAL_SCRATCH_JOB), verified there, and its runtime
# launched through srun once the researcher confirms; stand-in srun and
# llama-server programs written here record what they were given.

load lib
load launch


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
