#!/usr/bin/env bats
# hw-skill with catalog sources: the registry, refresh through TUF, the
# approval-bound install of a catalog skill with its archive checked
# member by member, hostile archives, revocation, and the end to end path
# from publishing to the agent's prompt.

load lib
load tuf
load agent

SKILLS="$HW_ROOT/t/fixtures/skill"
D=dd6636ce052197188751c0509c774a4df630f8eced1146972185e3ca25ffbabb

setup() {
	PROJ=$(mktemp -d "${BATS_TMPDIR:-/tmp}/hw-test.XXXXXX")
	cd "$PROJ" || return 1
	no_bundled_skills
	mkdir src work
	cp -r "$SKILLS/csv-clean" src/
	export HEARTWOOD_SKILL_SOURCES_FILE="$PROJ/sources.toml"
	unset XDG_CONFIG_HOME
	ETC_MADE=
}

teardown() {
	if [ -n "$ETC_MADE" ]; then rmdir /etc/heartwood; fi
}

# offline: a repository with csv-clean, read as an offline source
offline() {
	sim init -- skill src/csv-clean "$@" -- publish targets
	sources offline
}

# sources KIND: the registry with one source, lab
sources() {
	if [ "$1" = offline ]; then
		printf 'schema_version = "heartwood.skill-sources.v1"\n\n[[sources]]\nid = "lab"\nkind = "offline"\ntrusted-root = "%s"\nrepository = "%s"\n' \
			"$PROJ/sim/repo/metadata/1.root.json" "$PROJ/sim/repo" >sources.toml
	else
		printf 'schema_version = "heartwood.skill-sources.v1"\n\n[[sources]]\nid = "lab"\nkind = "remote"\ntrusted-root = "%s"\nmetadata-url = "%s/metadata"\ntargets-url = "%s/targets"\n' \
			"$PROJ/sim/repo/metadata/1.root.json" "$URL" "$URL" >sources.toml
	fi
}

# in_work CMD... - run CMD in the project directory work/
in_work() { (cd work && "$@"); }

install() { in_work hw-skill install csv-clean --expected-tree-sha256 "${1:-$D}"; }

log_kinds() { jq -r .event_type work/.heartwood/audit/skill-installations.jsonl | tr '\n' ' '; }

# ---- the registry ----

@test "sources: the registry's sources, as read" {
	offline
	run -0 --separate-stderr in_work hw-skill sources
	[ "$output" = "{\"enabled\":true,\"id\":\"lab\",\"kind\":\"offline\",\"metadata_url\":\"file://$PROJ/sim/repo/metadata\",\"targets_url\":\"file://$PROJ/sim/repo/targets\",\"trusted_root\":\"$PROJ/sim/repo/metadata/1.root.json\"}" ]
}

@test "sources: a relative HEARTWOOD_SKILL_SOURCES_FILE, or one missing" {
	HEARTWOOD_SKILL_SOURCES_FILE=sources.toml run -2 --separate-stderr hw-skill sources
	[ "$stderr" = "hw-skill: HEARTWOOD_SKILL_SOURCES_FILE 'sources.toml' is not an absolute path" ]
	run -66 --separate-stderr hw-skill sources
	[ "$stderr" = "hw-skill: no skill sources file '$PROJ/sources.toml'" ]
}

@test "sources: without any registry there is no source" {
	unset HEARTWOOD_SKILL_SOURCES_FILE
	export XDG_CONFIG_HOME="$PROJ/config"
	if [ -e /etc/heartwood/skill-sources.toml ]; then skip "this machine has /etc/heartwood/skill-sources.toml"; fi
	run -0 hw-skill sources
	[ -z "$output" ]
	mkdir -p config/heartwood
	printf 'schema_version = "heartwood.skill-sources.v1"\n[[sources]]\nid = "u"\nkind = "remote"\ntrusted-root = "/r.json"\nmetadata-url = "https://a.example/m"\ntargets-url = "https://a.example/t"\nenabled = false\n' >config/heartwood/skill-sources.toml
	run -0 hw-skill sources
	[ "$(jq -c '[.id, .enabled]' <<<"$output")" = '["u",false]' ]
}

@test "sources: each bad field is refused" {
	base='schema_version = "heartwood.skill-sources.v1"\n[[sources]]\n'
	ok='id = "lab"\nkind = "remote"\ntrusted-root = "/r.json"\nmetadata-url = "https://a.example/m"\ntargets-url = "https://a.example/t"\n'
	printf "$base$ok" >sources.toml
	run -0 hw-skill sources
	for c in 's/id = "lab"/id = "Lab"/' 's/id = "lab"/id = "-lab"/' \
		's/kind = "remote"/kind = "mirror"/' 's|trusted-root = "/r.json"|trusted-root = "r.json"|' \
		's|https://a.example/m|http://a.example/m|' 's|https://a.example/m|https://u:p@a.example/m|' \
		's|https://a.example/m|https://a.example/m?x=1|' 's|https://a.example/t|https://a.example/t#f|' \
		's|https://a.example/m|ftp://a.example/m|' 's|^kind = "remote"|kind = "remote"\nrepository = "/r"|' \
		's|^id = "lab"|id = "lab"\nmirror = "x"|' 's|^id = "lab"|id = "lab"\nenabled = "yes"|' \
		's|^schema_version = .*|schema_version = "heartwood.skill-sources.v2"|'; do
		printf "$base$ok" | sed "$c" >sources.toml
		run -65 --separate-stderr hw-skill sources
		[[ "$stderr" == "hw-skill: "*"'$PROJ/sources.toml'"* ]] || { echo "$c: $stderr"; return 1; }
	done
	printf "$base$ok[[sources]]\n$ok" >sources.toml
	run -65 --separate-stderr hw-skill sources
	[ "$stderr" = "hw-skill: invalid skill sources '$PROJ/sources.toml': source 2: its id is another's" ]
}

@test "sources: http is taken for a loopback host only" {
	printf 'schema_version = "heartwood.skill-sources.v1"\n[[sources]]\nid = "l"\nkind = "remote"\ntrusted-root = "/r.json"\nmetadata-url = "http://127.0.0.1:8/m"\ntargets-url = "http://localhost/t"\n' >sources.toml
	run -0 hw-skill sources
	sed -i 's|http://localhost/t|http://localhost.example/t|' sources.toml
	run -65 hw-skill sources
}

# ---- refresh and install ----

@test "refresh: an offline source; its cache holds the metadata as served" {
	offline
	run -0 --separate-stderr in_work hw-skill refresh
	[ "$output" = '{"entries":1,"revoked":[],"source":"lab"}' ]
	for r in root timestamp snapshot targets; do
		cmp "work/.heartwood/cache/skills/lab/metadata/$r.json" "sim/repo/metadata/$r.json"
	done
	run -66 --separate-stderr in_work hw-skill refresh nosuch
	[ "$stderr" = "hw-skill: no skill source 'nosuch'" ]
}

@test "refresh: a remote source over loopback HTTP, its exact requests" {
	sim init -- skill src/csv-clean -- publish targets
	sim_serve
	sources remote
	run -0 in_work hw-skill refresh lab
	[ "$(reqs)" = "/metadata/2.root.json
/metadata/timestamp.json
/metadata/snapshot.json
/metadata/targets.json
/targets/catalog.json" ]
	run -0 install
	[ "$(reqs | tr '\n' ' ')" = "/metadata/2.root.json /metadata/timestamp.json /targets/catalog.json /metadata/2.root.json /metadata/timestamp.json /targets/catalog.json /targets/skills/csv-clean/1.2.0/$D.zip " ]
}

@test "refresh: a catalog that is not what the repository signed is refused" {
	offline
	printf ' ' >>sim/repo/targets/catalog.json
	run -65 --separate-stderr in_work hw-skill refresh
	[[ "$stderr" == "hw-skill: cannot fetch 'file://$PROJ/sim/repo/targets/catalog.json': more than "* ]]
}

@test "refresh: a catalog entry whose archive is not its signed target is refused" {
	offline
	state '.catalog["csv-clean"].archive_size += 1'
	sim catalog -- publish targets
	run -65 --separate-stderr in_work hw-skill refresh
	[ "$stderr" = "hw-skill: invalid catalog of source 'lab': entry 'csv-clean': its archive's signed length or sha256 is not its archive_size or archive_sha256" ]
}

@test "refresh: catalog entries are checked strictly, each case" {
	offline
	for edit in '.catalog["csv-clean"].tree_sha256 = "'"$(printf 'a%.0s' $(seq 64))"'"' \
		'.catalog["csv-clean"].files[0].size += 1' \
		'.catalog["csv-clean"].files[0].path = "../SKILL.md"' \
		'.catalog["csv-clean"].target = "skills/x.zip"' \
		'.catalog["csv-clean"].review = "local-unreviewed"' \
		'.catalog["csv-clean"].revoked = true' \
		'.catalog["csv-clean"].revocation_reason = "why"' \
		'.catalog["csv-clean"].source_revision = "abc"' \
		'.catalog["csv-clean"].name = "Csv"'; do
		jq .catalog sim/state.json >saved.json
		state "$edit"
		sim catalog -- publish targets
		run -65 --separate-stderr in_work hw-skill refresh
		[[ "$stderr" == "hw-skill: invalid catalog of source 'lab': "* ]] || { echo "$edit: $stderr"; return 1; }
		state '.catalog = $c' --slurpfile c saved.json
		state '.catalog = .catalog[0]'
	done
}

@test "install: the approved digest, the archive checked, the log verifies" {
	offline
	run -0 --separate-stderr install "sha256:$D"
	[ "$(jq -c '[.name, .status, .review, .source_kind, .source_id, .catalog_target]' <<<"$output")" = "[\"csv-clean\",\"active\",\"repository-reviewed\",\"catalog\",\"lab\",\"skills/csv-clean/1.2.0/$D.zip\"]" ]
	a="work/.heartwood/skills/artifacts/sha256/$D/csv-clean"
	[ "$(hw-skill digest "$a" | jq -r .tree_sha256)" = "$D" ]
	[ "$(stat -c %a "$a/scripts/clean.py")" = 755 ]
	[ "$(log_kinds)" = "skill.installation-decision skill.activated " ]
	run -0 hw-audit verify work/.heartwood/audit/skill-installations.jsonl
	run -0 in_work hw-skill list
	[ "$(jq -c 'select(.source == "installed") | [.status, .review, .compatibility_reason]' <<<"$output")" = '["active","repository-reviewed",null]' ]
	# an exact retry
	run -0 install
	[ "$(log_kinds)" = "skill.installation-decision skill.activated " ]
}

@test "install: another digest is denied and recorded; nothing is fetched" {
	offline
	run -1 --separate-stderr install "$(printf 'b%.0s' $(seq 64))"
	[ "$stderr" = "hw-skill: refusing to install 'csv-clean': its tree digest is sha256:$D, not the approved sha256:$(printf 'b%.0s' $(seq 64))" ]
	[ "$(jq -r .payload.decision work/.heartwood/audit/skill-installations.jsonl)" = denied ]
	[ -z "$(ls -A work/.heartwood/skills/artifacts/sha256)" ]
}

@test "install: a revoked entry is refused" {
	offline
	sim revoke csv-clean 'it deletes rows' -- publish targets
	run -1 --separate-stderr install
	[ "$stderr" = "hw-skill: refusing to install 'csv-clean': it is revoked: it deletes rows" ]
	[ ! -e work/.heartwood/audit/skill-installations.jsonl ]
}

@test "install: an unsupported entry (MCP servers) is refused" {
	offline
	state '.catalog["csv-clean"].mcp_servers = ["srv"]'
	sim catalog -- publish targets
	run -1 --separate-stderr install
	[ "$stderr" = "hw-skill: refusing to install 'csv-clean': it uses MCP servers" ]
}

@test "install: a name no catalog lists" {
	offline
	run -66 --separate-stderr in_work hw-skill install nosuch --expected-tree-sha256 "$D"
	[ "$stderr" = "hw-skill: no catalog lists skill 'nosuch'" ]
}

# ---- hostile archives, each its own case ----

# hostile KIND: publish csv-clean with a KIND archive, then install it,
# which must fail with 65 and leave nothing but the log's failure
hostile() {
	python3 "$HW_ROOT/t/skill_zip.py" h.zip src/csv-clean "$1" 2>/dev/null
	sim init -- skill src/csv-clean --zip h.zip -- publish targets
	sources offline
	t=$(jq -r '.catalog["csv-clean"].tree_sha256' sim/state.json)
	run -65 --separate-stderr install "$t"
	[ "$(log_kinds)" = "skill.installation-decision skill.installation-failed " ]
	[ -z "$(ls -A "work/.heartwood/skills/artifacts/sha256/$t")" ]
	[ ! -e escape.txt ] && [ ! -e /tmp/escape.txt ] || { echo escaped; return 1; }
	[ ! -e work/.heartwood/skills/index.json ]
}

@test "archive: a ../ member" {
	hostile dotdot
	[ "$stderr" = "hw-skill: invalid archive of skill 'csv-clean': member 'csv-clean/../escape.txt' is not NAME/PATH of a listed file" ]
}

@test "archive: an absolute member" {
	hostile absolute
	[[ "$stderr" == "hw-skill: invalid archive of skill 'csv-clean': member '"*"escape.txt' is not NAME/PATH of a listed file" ]]
}

@test "archive: a symlink member" {
	hostile symlink
	[ "$stderr" = "hw-skill: invalid archive of skill 'csv-clean': member 'csv-clean/references/rules.md' is not a regular file" ]
}

@test "archive: a device member" {
	hostile device
	[ "$stderr" = "hw-skill: invalid archive of skill 'csv-clean': member 'csv-clean/references/rules.md' is not a regular file" ]
}

@test "archive: a directory member" {
	hostile directory
	[ "$stderr" = "hw-skill: invalid archive of skill 'csv-clean': member 'csv-clean/references/' is not NAME/PATH of a listed file" ]
}

@test "archive: a duplicate member" {
	hostile duplicate
	[ "$stderr" = "hw-skill: invalid archive of skill 'csv-clean': member 'csv-clean/SKILL.md' appears twice" ]
}

@test "archive: a listed file missing" {
	hostile missing
	[ "$stderr" = "hw-skill: invalid archive of skill 'csv-clean': member 'references/rules.md' is listed but missing" ]
}

@test "archive: members under another top directory" {
	hostile othername
	[ "$stderr" = "hw-skill: invalid archive of skill 'csv-clean': member 'csv-cleaX/SKILL.md' is not NAME/PATH of a listed file" ]
}

@test "archive: a member not listed" {
	hostile unlisted
	[ "$stderr" = "hw-skill: invalid archive of skill 'csv-clean': member 'csv-clean/extra.txt' is not NAME/PATH of a listed file" ]
}

@test "archive: a member larger than it declares" {
	hostile bigger
	[[ "$stderr" == "hw-skill: invalid archive of skill 'csv-clean': member 'csv-clean/references/rules.md'"* ]]
}

@test "archive: a zip bomb past the caps (a member of 64 MiB of zeros)" {
	hostile bomb
	[ "$stderr" = "hw-skill: invalid archive of skill 'csv-clean': member 'csv-clean/references/rules.md' does not declare its listed size" ]
}

@test "archive: members that collide after case folding" {
	echo other >src/csv-clean/references/RULES.md
	hostile plain
	[[ "$stderr" == "hw-skill: invalid archive of skill 'csv-clean': member 'csv-clean/references/"*".md' collides with another member after case folding" ]]
}

# ---- revocation ----

@test "revocation: marked revoked in the catalog, with its reason" {
	offline
	run -0 install
	sim revoke csv-clean 'it deletes rows' -- publish targets
	run -0 in_work hw-skill refresh
	[ "$output" = '{"entries":1,"revoked":["csv-clean"],"source":"lab"}' ]
	run -0 in_work hw-skill list
	[ "$(jq -c 'select(.source == "installed") | [.status, .revocation_reason]' <<<"$output")" = '["revoked","it deletes rows"]' ]
	[ "$(log_kinds)" = "skill.installation-decision skill.activated skill.deactivated " ]
	run -0 hw-audit verify work/.heartwood/audit/skill-installations.jsonl
}

@test "revocation: an entry that vanished" {
	offline
	run -0 install
	sim unlist csv-clean -- publish targets
	run -0 in_work hw-skill refresh
	run -0 in_work hw-skill list
	[ "$(jq -c 'select(.source == "installed") | [.status, .revocation_reason]' <<<"$output")" = '["revoked","its entry vanished from the catalog"]' ]
}

@test "revocation: an entry that changed" {
	offline
	run -0 install
	sim skill src/csv-clean --revision "$(printf 'b%.0s' $(seq 40))" -- publish targets
	run -0 in_work hw-skill refresh
	run -0 in_work hw-skill list
	[ "$(jq -c 'select(.source == "installed") | [.status, .revocation_reason]' <<<"$output")" = '["revoked","its catalog entry changed"]' ]
}

@test "revocation: an install from a source no longer configured is an error" {
	offline
	run -0 install
	sed -i 's/id = "lab"/id = "other"/' sources.toml
	run -65 --separate-stderr in_work hw-skill refresh
	[ "$stderr" = "hw-skill: skill 'csv-clean' is installed from source 'lab', which is no longer configured" ]
}

# ---- end to end ----

@test "end to end: publish, install, the prompt lists it, revoke, it is gone" {
	sim init -- skill src/csv-clean -- publish targets
	sim_serve
	sources remote
	printf '%s\n' '[{"type":"text/event-stream","events":["{\"choices\":[{\"index\":0,\"delta\":{\"content\":\"ok\"},\"finish_reason\":\"stop\"}]}"]}]' >script.json
	python3 "$HW_ROOT/t/sse_server.py" script.json model.jsonl >mport 2>model.err &
	MSRV=$!
	for _ in $(seq 100); do [ -s mport ] && break; sleep 0.05; done
	export HW_MODEL=openai/heartwood-replay HW_BASE_URL="http://127.0.0.1:$(cat mport)/v1"
	unset HW_API_KEY_ENV
	run -0 in_work hw-skill install csv-clean --expected-tree-sha256 "$(hw-skill digest src/csv-clean | jq -r .tree_sha256)"
	(cd work && chat c1 'clean data.csv' && hw-agent run session-main >/dev/null)
	[[ "$(tail -1 model.jsonl | jq -r '.body.messages[0].content')" == *"## Skill csv-clean (repository-reviewed, tree sha256:$D)"* ]]
	sim revoke csv-clean 'it deletes rows' -- publish targets
	run -0 in_work hw-skill refresh
	(cd work && chat c2 'again' && hw-agent run session-main >/dev/null)
	kill "$MSRV"
	[[ "$(tail -1 model.jsonl | jq -r '.body.messages[0].content')" != *"csv-clean"* ]]
	[ "$(wc -l <model.jsonl)" = 2 ]
	run -0 hw-audit verify work/.heartwood/audit/skill-installations.jsonl
	[ "$(jq -r .event_count <<<"$output")" = 3 ]
}

@test "list: catalog entries as the last refresh stored them" {
	offline
	run -0 in_work hw-skill list
	[ -z "$output" ]
	run -0 in_work hw-skill refresh
	run -0 in_work hw-skill list
	[ "$(jq -c '[.name, .source, .source_id, .status, .installable, .compatibility_reason]' <<<"$output")" = '["csv-clean","catalog","lab","available",true,null]' ]
	run -0 install
	run -0 in_work hw-skill list
	[ "$(jq -sc 'map([.source, .status, .installable])' <<<"$output")" = '[["installed","active",false],["catalog","available",false]]' ]
	sim revoke csv-clean 'it deletes rows' -- publish targets
	run -0 in_work hw-skill refresh
	run -0 in_work hw-skill list
	[ "$(jq -sc 'map([.source, .status, .revocation_reason])' <<<"$output")" = '[["installed","revoked","it deletes rows"],["catalog","revoked","it deletes rows"]]' ]
}

@test "list: a stored catalog that was tampered with is refused" {
	offline
	run -0 in_work hw-skill refresh
	jq -c '.entries[0].tree_sha256 = "'"$(printf 'c%.0s' $(seq 64))"'"' \
		work/.heartwood/cache/skills/lab/targets/catalog.json >c.json
	mv c.json work/.heartwood/cache/skills/lab/targets/catalog.json
	run -65 --separate-stderr in_work hw-skill list
	[ "$stderr" = "hw-skill: invalid catalog of source 'lab': entry 'csv-clean': its files do not give its tree_sha256" ]
}

@test "hw skill: the driver runs hw-skill" {
	offline
	run -0 in_work hw skill refresh
	[ "$output" = '{"entries":1,"revoked":[],"source":"lab"}' ]
}

@test "inspect: what installing a catalog skill would install" {
	offline
	run -0 --separate-stderr in_work hw-skill inspect csv-clean
	[ "$(jq -c '[.name, .skill_id, .version, .source_id, .status, .file_count, .total_size, .tree_sha256]' <<<"$output")" = "[\"csv-clean\",\"org.example.csv-clean\",\"1.2.0\",\"lab\",\"available\",3,774,\"$D\"]" ]
	[ "$(jq -c '[.files[] | [.path, .role, .size]]' <<<"$output")" = '[["SKILL.md","definition",658],["references/rules.md","reference",42],["scripts/clean.py","script",74]]' ]
	[ "$(jq -r .policy.approval_summary <<<"$output")" = "Reads one CSV and writes a cleaned copy beside it." ]
	sim revoke csv-clean 'it deletes rows' -- publish targets
	run -0 in_work hw-skill inspect csv-clean --source lab
	[ "$(jq -c '[.status, .revocation_reason]' <<<"$output")" = '["revoked","it deletes rows"]' ]
	run -66 --separate-stderr in_work hw-skill inspect nosuch
	[ "$stderr" = "hw-skill: no catalog lists skill 'nosuch'" ]
}

@test "heartwood /skills: list, inspect with the digest, install by that digest" {
	offline
	cd work
	run -0 --separate-stderr heartwood --plain < <(printf '%s\n' /skills \
		'/skills inspect csv-clean' "/skills install csv-clean $(printf 'e%.0s' $(seq 64))" \
		"/skills install csv-clean $D" /skills '/skills bogus')
	[[ "$output" == *"  csv-clean 1.2.0 · available · catalog · reviewed"* ]]
	[[ "$output" == *"  reference        42  references/rules.md"* ]]
	[[ "$output" == *"Tree digest: sha256:$D"* ]]
	[[ "$output" == *"To install exactly this, type: /skills install csv-clean $D"* ]]
	[[ "$output" == *"Installed csv-clean with the digest you confirmed; the agent gets it from its next run."* ]]
	[[ "$output" == *"  csv-clean 1.2.0 · active · installed · reviewed"* ]]
	[[ "$stderr" == *"hw-skill: refusing to install 'csv-clean': its tree digest is sha256:$D, not the approved sha256:$(printf 'e%.0s' $(seq 64))"* ]]
	[[ "$stderr" == *"usage: /skills | /skills inspect NAME | /skills install NAME DIGEST"* ]]
	[ "$(jq -r '.event_type + ":" + (.payload.decision // "")' .heartwood/audit/skill-installations.jsonl | tr '\n' ' ')" = "skill.installation-decision:denied skill.installation-decision:approved skill.activated: " ]
}

# model_up - a loopback model that answers "ok"; sets MSRV
model_up() {
	printf '%s\n' '[{"type":"text/event-stream","events":["{\"choices\":[{\"index\":0,\"delta\":{\"content\":\"ok\"},\"finish_reason\":\"stop\"}]}"]}]' >script.json
	python3 "$HW_ROOT/t/sse_server.py" script.json model.jsonl >mport 2>model.err &
	MSRV=$!
	for _ in $(seq 100); do [ -s mport ] && break; sleep 0.05; done
	export HW_MODEL=openai/heartwood-replay HW_BASE_URL="http://127.0.0.1:$(cat mport)/v1"
	unset HW_API_KEY_ENV
}

@test "agent: its own refresh of the sources revokes before the model sees a skill" {
	offline
	model_up
	run -0 install
	sim revoke csv-clean 'it deletes rows' -- publish targets
	(cd work && chat c1 'clean data.csv' && hw-agent run session-main >/dev/null)
	kill "$MSRV"
	[[ "$(tail -1 model.jsonl | jq -r '.body.messages[0].content')" != *"csv-clean"* ]]
	[ "$(jq -r '.installations[0].status' work/.heartwood/skills/index.json)" = revoked ]
}

@test "agent: a source no longer configured stops the run" {
	offline
	model_up
	run -0 install
	sed -i 's/id = "lab"/id = "other"/' sources.toml
	cd work
	chat c1 'clean data.csv'
	run -65 --separate-stderr hw-agent run session-main
	kill "$MSRV"
	[ "$stderr" = "hw-agent: skill 'csv-clean' is installed from source 'lab', which is no longer configured" ]
}

# ---- controlled-data approvals (the administrator's, in /etc only) ----

@test "sources: controlled-data approvals outside the system file are refused" {
	offline
	printf 'controlled-data-approved-digests = ["%s"]\n' "$D" >>sources.toml
	run -65 --separate-stderr in_work hw-skill sources
	[ "$stderr" = "hw-skill: invalid skill sources '$PROJ/sources.toml': source 1: controlled-data-approved-digests is allowed only in /etc/heartwood/skill-sources.toml" ]
}

# in_etc CMD...: CMD in work/ with etc/ of the project standing in for
# /etc/heartwood (a private mount, through bwrap)
in_etc() {
	bwrap --dev-bind / / --bind "$PROJ/etc" /etc/heartwood --chdir "$PROJ/work" "$@"
}

etc_sources() {
	if [ "$(id -u)" != 0 ] || ! command -v bwrap >/dev/null; then
		skip "needs root and bwrap to stand in for /etc/heartwood"
	fi
	offline
	mkdir -p etc
	# the mount point, taken away again by teardown when it was made here
	if [ ! -e /etc/heartwood ]; then
		mkdir /etc/heartwood
		ETC_MADE=1
	fi
	{ cat sources.toml; printf '%s\n' "$@"; } >etc/skill-sources.toml
	unset HEARTWOOD_SKILL_SOURCES_FILE
}

@test "install: a tree the administrator approved for controlled data is marked ready" {
	etc_sources 'controlled-data-approved-digests = [' "  \"sha256:$D\", # the lab's review" "  \"$(printf 'a%.0s' $(seq 64))\"," ']'
	run -0 --separate-stderr in_etc hw-skill install csv-clean --expected-tree-sha256 "$D"
	[ "$(jq -c '[.name, .controlled_data_ready]' <<<"$output")" = '["csv-clean",true]' ]
	[ "$(jq -c '.. | objects | select(.name == "csv-clean") | .controlled_data_ready' work/.heartwood/skills/index.json)" = true ]
	[ "$(jq -c 'select(.event_type == "skill.activated") | .payload.controlled_data_ready' work/.heartwood/audit/skill-installations.jsonl)" = true ]
}

@test "install: a tree the administrator did not approve is not ready, and a bad digest is refused" {
	etc_sources "controlled-data-approved-digests = [\"$(printf 'a%.0s' $(seq 64))\"]"
	run -0 --separate-stderr in_etc hw-skill install csv-clean --expected-tree-sha256 "$D"
	[ "$(jq -c '[.name, .controlled_data_ready]' <<<"$output")" = '["csv-clean",false]' ]
	etc_sources 'controlled-data-approved-digests = ["sha256:0123"]'
	run -65 --separate-stderr in_etc hw-skill sources
	[ "$stderr" = "hw-skill: invalid skill sources '/etc/heartwood/skill-sources.toml': source 1: controlled-data-approved-digests holds something that is not a sha256 tree digest" ]
	etc_sources 'controlled-data-approved-digests = "x"'
	run -65 --separate-stderr in_etc hw-skill sources
	[ "$stderr" = "hw-skill: invalid skill sources '/etc/heartwood/skill-sources.toml': source 1: controlled-data-approved-digests is not an array of tree digests" ]
}
