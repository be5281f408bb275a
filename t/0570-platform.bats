#!/usr/bin/env bats
# Platform adapters (hw-policy(7)): detection from environment markers
# only, one case a test; each adapter's capability manifest; Terra's and
# Carina's readiness checks in hw doctor, driven by the environment alone.

load lib

# plat VAR=VALUE...: hw platform in an environment of only these markers
plat() { env -i PATH="$PATH" HOME="$HOME" XDG_STATE_HOME="$XDG_STATE_HOME" "$@" hw platform; }
# doc VAR=VALUE...: hw doctor --json the same way
doc() { env -i PATH="$PATH" HOME="$HOME" XDG_STATE_HOME="$XDG_STATE_HOME" "$@" hw doctor --json; }
# chk JSON ID: the check ID of a report, as status code
chk() { jq -r --arg id "$2" '.checks[] | select(.check_id == $id) | "\(.status) \(.code)"' <<<"$1"; }

detected() { jq -c '[.platform_id, .confidence, .evidence, .recognised, (.note != null)]'; }

@test "detect: no markers is generic" {
	[ "$(plat | detected)" = '["generic",1,"no platform markers",null,false]' ]
}

@test "detect: GOOGLE_PROJECT is Terra" {
	[ "$(plat GOOGLE_PROJECT=p | detected)" = '["terra",1,"GOOGLE_PROJECT",null,false]' ]
}

@test "detect: any WORKSPACE_* is Terra" {
	[ "$(plat WORKSPACE_BUCKET=gs://b | detected)" = '["terra",1,"WORKSPACE_*",null,false]' ]
}

@test "detect: HEARTWOOD_PLATFORM=terra forces Terra over Carina markers" {
	[ "$(plat HEARTWOOD_PLATFORM=terra HEARTWOOD_CARINA=1 | detected)" = '["terra",1,"HEARTWOOD_PLATFORM=terra",null,false]' ]
}

@test "detect: HEARTWOOD_CARINA is Carina" {
	[ "$(plat HEARTWOOD_CARINA=1 | detected)" = '["carina",1,"HEARTWOOD_CARINA",null,false]' ]
}

@test "detect: HEARTWOOD_PLATFORM=carina is Carina" {
	[ "$(plat HEARTWOOD_PLATFORM=carina | detected)" = '["carina",1,"HEARTWOOD_PLATFORM=carina",null,false]' ]
}

@test "detect: SLURM_CLUSTER_NAME carina or carina2 is Carina, another cluster is not" {
	[ "$(plat SLURM_CLUSTER_NAME=carina | detected)" = '["carina",1,"SLURM_CLUSTER_NAME",null,false]' ]
	[ "$(plat SLURM_CLUSTER_NAME=carina2 | detected)" = '["carina",1,"SLURM_CLUSTER_NAME",null,false]' ]
	[ "$(plat SLURM_CLUSTER_NAME=sherlock | detected)" = '["generic",1,"no platform markers",null,false]' ]
}

@test "detect: DNAnexus is recognised without an adapter" {
	run -0 plat DX_PROJECT_CONTEXT_ID=project-1
	[ "$(detected <<<"$output")" = '["generic",0,"DX_*","dnanexus",true]' ]
	[ "$(jq -r .note <<<"$output")" = "DNAnexus was recognised but has no adapter: the generic adapter is used" ]
}

@test "detect: Seven Bridges is recognised without an adapter" {
	[ "$(plat SB_API_ENDPOINT=x | detected)" = '["generic",0,"SB_*","seven-bridges",true]' ]
}

@test "detect: Terra and Carina markers together are ambiguous, with a note" {
	run -0 plat GOOGLE_PROJECT=p SLURM_CLUSTER_NAME=carina
	[ "$(detected <<<"$output")" = '["carina",0.5,"Terra and Carina markers",null,true]' ]
	[[ "$(jq -r .note <<<"$output")" == ambiguous:* ]]
}

@test "detect: an unknown HEARTWOOD_PLATFORM is not a platform" {
	[ "$(plat HEARTWOOD_PLATFORM=mars | detected)" = '["generic",1,"no platform markers",null,false]' ]
}

@test "manifest: generic" {
	run -0 plat
	[ "$(jq -c '.capabilities | [.display_name, .interfaces, .browser_route, .ingress_modes, .default_ingress_mode, .managed_runtimes, .scheduler, .storage_root, .credential_backends]' <<<"$output")" = '["Workstation or container",["terminal","web","notebook"],"direct",["loopback","jupyter","trusted"],"loopback",["llama-cpp","vllm"],"none","project directory",["process","keyring","mounted-file"]]' ]
	[ "$(jq -c '.capabilities | [(.model_sources | length), .platform_isolated_sources, .data_mounts, .validation_level, (.default_policy_endpoints.allowed_model_endpoints | length)]' <<<"$output")" = '[6,[],["fixtures/synthetic"],"ci",5]' ]
}

@test "manifest: Terra" {
	run -0 plat GOOGLE_PROJECT=p
	[ "$(jq -c '.capabilities | [.display_name, .interfaces, .browser_route, .default_ingress_mode, .scheduler, .credential_backends, .data_mounts]' <<<"$output")" = '["Terra",["terminal","notebook"],"unavailable","jupyter","provisioned",["process","mounted-file","managed-identity"],[]]' ]
	[[ "$(jq -r .capabilities.storage_root <<<"$output")" == *"/home/jupyter"* ]]
}

@test "manifest: Carina" {
	run -0 plat HEARTWOOD_CARINA=1
	[ "$(jq -c '.capabilities | [.display_name, .interfaces, .ingress_modes, .default_ingress_mode, .managed_runtimes, .scheduler, .model_sources, .credential_allowlist, .default_policy_endpoints.allowed_model_endpoints]' <<<"$output")" = '["Stanford Carina",["terminal"],["loopback","trusted"],"loopback",["vllm"],"slurm",["heartwood","stanford-ai-api-gateway"],[],["http://127.0.0.1:8765/v1/chat/completions"]]' ]
}

@test "doctor: the platform and its manifest, the evidence" {
	run -0 doc GOOGLE_PROJECT=p HEARTWOOD_PLATFORM_HOME=$(dirname "$PROJ") HEARTWOOD_GPU_RUNTIME=none
	[ "$(jq -r .platform_id <<<"$output")" = terra ]
	[ "$(jq -c .evidence <<<"$output")" = '["GOOGLE_PROJECT"]' ]
	[ "$(jq -r .platform.capabilities.display_name <<<"$output")" = Terra ]
}

@test "doctor: Terra without its persistent disk fails HW-TERRA-001" {
	run -1 doc GOOGLE_PROJECT=p HEARTWOOD_PLATFORM_HOME=$BATS_TEST_TMPDIR/none HEARTWOOD_GPU_RUNTIME=none
	[ "$(chk "$output" terra-project-storage)" = "fail HW-TERRA-001" ]
}

@test "doctor: Terra with the project off the persistent disk warns HW-TERRA-001" {
	mkdir "$BATS_TEST_TMPDIR/disk"
	run -0 doc GOOGLE_PROJECT=p HEARTWOOD_PLATFORM_HOME=$BATS_TEST_TMPDIR/disk HEARTWOOD_GPU_RUNTIME=none
	[ "$(chk "$output" terra-project-storage)" = "warning HW-TERRA-001" ]
	[ "$(chk "$output" terra-gpu)" = "pass null" ]
}

@test "doctor: Terra with the project on the persistent disk passes" {
	run -0 doc GOOGLE_PROJECT=p HEARTWOOD_PLATFORM_HOME=$(dirname "$PROJ") HEARTWOOD_GPU_RUNTIME=none
	[ "$(chk "$output" terra-project-storage)" = "pass null" ]
}

@test "doctor: Terra's GPU runtime: unset warns, bad fails, vllm needs a GPU" {
	H=HEARTWOOD_PLATFORM_HOME=$(dirname "$PROJ")
	run -0 doc GOOGLE_PROJECT=p "$H"
	[ "$(chk "$output" terra-gpu)" = "warning HW-TERRA-002" ]
	run -1 doc GOOGLE_PROJECT=p "$H" HEARTWOOD_GPU_RUNTIME=tpu
	[ "$(chk "$output" terra-gpu)" = "fail HW-TERRA-002" ]
	run -0 doc GOOGLE_PROJECT=p "$H" HEARTWOOD_GPU_RUNTIME=vllm
	[ "$(chk "$output" terra-gpu)" = "warning HW-TERRA-002" ]
	run -0 doc GOOGLE_PROJECT=p "$H" HEARTWOOD_GPU_RUNTIME=vllm CUDA_VISIBLE_DEVICES=0
	[ "$(chk "$output" terra-gpu)" = "pass null" ]
}

@test "doctor: Carina outside an allocation warns for Slurm, scratch and GPU" {
	run -0 doc HEARTWOOD_CARINA=1
	[ "$(chk "$output" slurm-allocation)" = "warning HW-COMPUTE-001" ]
	[ "$(chk "$output" job-scratch)" = "warning HW-COMPUTE-002" ]
	[ "$(chk "$output" gpu)" = "warning HW-COMPUTE-003" ]
}

@test "doctor: Carina inside an allocation with scratch and a GPU passes" {
	mkdir "$BATS_TEST_TMPDIR/scratch"
	run -0 doc HEARTWOOD_CARINA=1 SLURM_JOB_ID=42 LOCAL_SCRATCH_JOB=$BATS_TEST_TMPDIR/scratch SLURM_JOB_GPUS=0
	[ "$(chk "$output" slurm-allocation)" = "pass null" ]
	[ "$(chk "$output" job-scratch)" = "pass null" ]
	[ "$(chk "$output" gpu)" = "pass null" ]
}

@test "doctor: Carina scratch that is not a usable directory fails HW-COMPUTE-002" {
	run -1 doc HEARTWOOD_CARINA=1 SLURM_JOB_ID=42 LOCAL_SCRATCH_JOB=relative/dir
	[ "$(chk "$output" job-scratch)" = "fail HW-COMPUTE-002" ]
	run -1 doc HEARTWOOD_CARINA=1 SLURM_JOB_ID=42 LOCAL_SCRATCH_JOB=$BATS_TEST_TMPDIR/none
	[ "$(chk "$output" job-scratch)" = "fail HW-COMPUTE-002" ]
}

@test "doctor --plan: the platform and its full capabilities" {
	run -0 env -i PATH="$PATH" HOME="$HOME" XDG_STATE_HOME="$XDG_STATE_HOME" HEARTWOOD_CARINA=1 hw doctor --plan
	[ "$(jq -r .platform_id <<<"$output")" = carina ]
	[ "$(jq -r .capabilities.display_name <<<"$output")" = "Stanford Carina" ]
}

@test "doctor: the generic platform has no platform checks" {
	run -0 doc
	[ "$(jq -c '[.checks[].check_id | select(. == "terra-gpu" or . == "slurm-allocation")]' <<<"$output")" = '[]' ]
}
