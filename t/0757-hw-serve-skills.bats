#!/usr/bin/env bats
# hw-serve's skill settings routes (reference 3.1): the same library calls
# as hw-skill(1).  GET /settings/skills lists the installed skills; POST
# .../local/inspect shows a local skill and its digest; an install needs
# the researcher's approval and the digest approved, and installs exactly
# that tree; DELETE removes one; every malformed body is its own status.

load lib
load serve

FIX="$HW_ROOT/t/fixtures/skill"

setup() {
	PROJ=$(mktemp -d "${BATS_TMPDIR:-/tmp}/hw-test.XXXXXX")
	cd "$PROJ" || return 1
	no_bundled_skills
	SERVE_PID=
	cp -r "$FIX/csv-clean" ./csv-clean
	D=$(hw-skill digest csv-clean | jq -r .tree_sha256)
	serve_start
}

teardown() {
	if [ -n "$SERVE_PID" ]; then kill "$SERVE_PID" 2>/dev/null; wait "$SERVE_PID" 2>/dev/null; fi
	cd / && rm -rf "$PROJ"
}

post() { req POST "$1" -H 'Content-Type: application/json' --data-binary "$2"; }

@test "skills routes: none installed is an empty list" {
	run -0 req GET /settings/skills
	[ "$output" = '200 {"skills":[]}' ]
}

@test "skills routes: a local skill is inspected with its digest, as hw-skill local inspect shows it" {
	run -0 post /settings/skills/local/inspect '{"path":"csv-clean"}'
	[ "${output%% *}" = 200 ]
	[ "${output#* }" = "$(hw-skill local inspect csv-clean)" ]
	[ "$(jq -r .tree_sha256 <<<"${output#* }")" = "$D" ]
}

@test "skills routes: the approved digest installs the skill, which is then listed and can be removed" {
	run -0 post /settings/skills/local/install "{\"path\":\"csv-clean\",\"approved\":true,\"expected_tree_sha256\":\"sha256:$D\"}"
	[ "${output%% *}" = 200 ]
	[ "$(jq -r '[.name, .status] | join(" ")' <<<"${output#* }")" = "csv-clean active" ]
	run -0 req GET /settings/skills
	[ "$(jq -c '[.skills[] | [.name, .status, .tree_sha256]]' <<<"${output#* }")" = "[[\"csv-clean\",\"active\",\"$D\"]]" ]
	run -0 hw-audit verify .heartwood/audit/skill-installations.jsonl
	run -0 req DELETE /settings/skills/csv-clean
	[ "${output%% *}" = 200 ]
	run -0 req GET /settings/skills
	[ "$output" = '200 {"skills":[]}' ]
	run -0 req DELETE /settings/skills/csv-clean
	[ "${output%% *}" = 404 ]
}

@test "skills routes: another digest is declined and installs nothing" {
	run -0 post /settings/skills/local/install "{\"path\":\"csv-clean\",\"approved\":true,\"expected_tree_sha256\":\"$(printf '0%.0s' $(seq 64))\"}"
	[ "$output" = "422 {\"error\":\"refusing to install 'csv-clean': its tree digest is sha256:$D, not the approved sha256:$(printf '0%.0s' $(seq 64))\"}" ]
	[ -z "$(ls -A .heartwood/skills/artifacts/sha256)" ]
	[ "$(jq -r .payload.decision .heartwood/audit/skill-installations.jsonl)" = denied ]
	run -0 req GET /settings/skills
	[ "$output" = '200 {"skills":[]}' ]
}

@test "skills routes: an install without the researcher's approval is 409 and installs nothing" {
	run -0 post /settings/skills/local/install "{\"path\":\"csv-clean\",\"approved\":false,\"expected_tree_sha256\":\"$D\"}"
	[ "$output" = '409 {"error":"the install was not approved: nothing was installed"}' ]
	refute test -e .heartwood/skills
}

@test "skills routes: a missing approval or digest is 422" {
	run -0 post /settings/skills/local/install "{\"path\":\"csv-clean\",\"expected_tree_sha256\":\"$D\"}"
	[ "$output" = '422 {"error":"`approved` is required"}' ]
	run -0 post /settings/skills/local/install '{"path":"csv-clean","approved":true}'
	[ "$output" = '422 {"error":"`expected_tree_sha256` is required"}' ]
}

@test "skills routes: an unknown field is 422" {
	run -0 post /settings/skills/local/inspect '{"path":"csv-clean","force":true}'
	[ "$output" = '422 {"error":"request contains unsupported fields"}' ]
}

@test "skills routes: a field of the wrong type is 422" {
	run -0 post /settings/skills/local/inspect '{"path":7}'
	[ "$output" = '422 {"error":"`path` must be a string"}' ]
	run -0 post /settings/skills/local/install "{\"path\":\"csv-clean\",\"approved\":\"yes\",\"expected_tree_sha256\":\"$D\"}"
	[ "$output" = '422 {"error":"`approved` must be a boolean"}' ]
}

@test "skills routes: a body that is not an object, not JSON or not UTF-8 is refused" {
	run -0 post /settings/skills/local/inspect '["csv-clean"]'
	[ "$output" = '422 {"error":"the request body must be an object"}' ]
	run -0 post /settings/skills/local/inspect '{"path":'
	[ "${output%% *}" = 400 ]
	printf '{"path":"\377"}' >bad.json
	run -0 req POST /settings/skills/local/inspect -H 'Content-Type: application/json' --data-binary @bad.json
	[ "$output" = '400 {"error":"the request body is not UTF-8"}' ]
}

@test "skills routes: a local skill that is not a skill directory is 404 or 422 with hw-skill's reason" {
	run -0 post /settings/skills/local/inspect '{"path":"nowhere"}'
	[ "$output" = "404 {\"error\":\"no skill directory 'nowhere'\"}" ]
	mkdir empty
	run -0 post /settings/skills/local/inspect '{"path":"empty"}'
	[ "${output%% *}" = 422 ]
}

@test "skills routes: a catalog install with no sources says so, and installs nothing" {
	run -0 post /settings/skills/install "{\"name\":\"csv-clean\",\"approved\":true,\"expected_tree_sha256\":\"$D\"}"
	[ "$output" = "404 {\"error\":\"no catalog lists skill 'csv-clean'\"}" ]
	refute test -e .heartwood/skills/index.json
}

@test "skills routes: wrong methods are 405, unknown routes 404" {
	run -0 req POST /settings/skills
	[ "${output%% *}" = 405 ]
	run -0 req GET /settings/skills/local/install
	[ "${output%% *}" = 405 ]
	run -0 req GET /settings/skills/csv-clean
	[ "${output%% *}" = 405 ]
	run -0 req GET /settings/skills/a/b
	[ "${output%% *}" = 404 ]
}

# ---- GET /settings/specialists: the catalogue the agent reads ----

@test "specialists route: none configured is an empty catalogue" {
	run -0 req GET /settings/specialists
	[ "$output" = '200 {"schema_version":"heartwood.specialists.v1","specialists":[]}' ]
}

@test "specialists route: the bundled catalogue in order, the implementer unavailable with its reason, no prompt" {
	cp -r "$HW_ROOT/share/skills" "$HW_ROOT/share/specialists" "$HW_DATADIR/"
	run -0 req GET /settings/specialists
	[ "${output%% *}" = 200 ]
	body=${output#200 }
	[ "$(jq -c '[.specialists[] | [.name, .order, .capability, .availability, .max_iteration_per_run]]' <<<"$body")" = \
		'[["research-planner",10,"advisory","available",12],["data-quality-reviewer",20,"advisory","available",12],["cohort-feature-reviewer",30,"advisory","available",12],["statistical-reviewer",40,"advisory","available",14],["reproducibility-reviewer",50,"advisory","available",12],["analysis-implementer",60,"project-actions","unavailable",40]]' ]
	[ "$(jq -c '.specialists[5] | [.label, .tools, .max_budget_per_run, (.unavailable_reason | startswith("A specialist that acts"))]' <<<"$body")" = \
		'["Analysis implementer",["terminal","heartwood_project_file_editor"],2,true]' ]
	[ "$(jq -c '[.specialists[0] | keys[]] | index("prompt")' <<<"$body")" = null ]
	[ "$(jq -c '.specialists[4].skills' <<<"$body")" = '["reproducible-analysis"]' ]
}

@test "specialists route: an invalid specialist file is 500 naming it and the rule" {
	cp -r "$HW_ROOT/share/skills" "$HW_ROOT/share/specialists" "$HW_DATADIR/"
	sed -i 's/^model: inherit$/model: other/' "$HW_DATADIR/specialists/statistical-reviewer.md"
	run -0 req GET /settings/specialists
	[ "$output" = "500 {\"error\":\"invalid specialist '$HW_DATADIR/specialists/statistical-reviewer.md': model must be 'inherit'\"}" ]
}

@test "specialists route: only GET" {
	run -0 req POST /settings/specialists -H 'Content-Type: application/json' --data-binary '{}'
	[ "${output%% *}" = 405 ]
}
