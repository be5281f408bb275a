#!/usr/bin/env bats
# hw-skill: validation, the tree digest against an independent oracle
# (t/skill_digest.py) and committed vectors, hostile trees, and the
# approval-bound install of local skills with its chained log.

load lib

FIX="$HW_ROOT/t/fixtures/skill"

setup() {
	PROJ=$(mktemp -d "${BATS_TMPDIR:-/tmp}/hw-test.XXXXXX")
	cd "$PROJ" || return 1
	no_bundled_skills
}

# skill [NAME] - a valid skill copied into the project as ./NAME
skill() {
	cp -r "$FIX/csv-clean" "./${1:-csv-clean}"
	if [ -n "${1:-}" ]; then
		sed -i "s/^name: csv-clean$/name: $1/" "$1/SKILL.md"
	fi
}

# front FIELD VALUE - set (or with VALUE "-", delete) a frontmatter line
front() {
	if [ "$2" = - ]; then
		sed -i "/^ *$1:/d" csv-clean/SKILL.md
	else
		sed -i "s|^\( *\)$1:.*|\1$1: $2|" csv-clean/SKILL.md
	fi
}

digest() { hw-skill digest "$1" | jq -r .tree_sha256; }

@test "digest: the committed vectors, by hw-skill and by the oracle" {
	while IFS= read -r line; do
		rm -rf tree
		python3 - "$line" <<'PY'
import json, os, sys
v = json.loads(sys.argv[1])
for f in v["files"]:
    p = os.path.join("tree", f["path"])
    os.makedirs(os.path.dirname(p), exist_ok=True)
    open(p, "w").write(f["content"])
    os.chmod(p, int(f["mode"], 8))
PY
		want=$(jq -r .tree_sha256 <<<"$line")
		[ "$(digest tree)" = "$want" ] || { jq -r .case <<<"$line"; return 1; }
		[ "$(/usr/bin/python3 "$HW_ROOT/t/skill_digest.py" tree)" = "$want" ]
	done <"$FIX/digest-vectors.jsonl"
	[ "$(wc -l <"$FIX/digest-vectors.jsonl")" -ge 7 ]
}

@test "digest: the fixture skill, its files as the digest lists them" {
	skill
	run -0 hw-skill digest csv-clean
	[ "$(jq -r '.files[].path' <<<"$output" | tr '\n' ' ')" = "SKILL.md references/rules.md scripts/clean.py " ]
	[ "$(jq -c '.files[2] | [.executable, .role, .size]' <<<"$output")" = '[true,"script",74]' ]
	[ "$(jq -r .tree_sha256 <<<"$output")" = "$(/usr/bin/python3 "$HW_ROOT/t/skill_digest.py" csv-clean)" ]
}

@test "validate: a valid skill" {
	skill
	run -0 --separate-stderr hw-skill validate csv-clean
	[ "$output" = "{\"name\":\"csv-clean\",\"tree_sha256\":\"$(digest csv-clean)\",\"valid\":true}" ]
	[ -z "$stderr" ]
}

@test "local inspect: files, roles, sizes, policy and digest" {
	skill
	run -0 hw-skill local inspect csv-clean
	[ "$(jq -c '[.name, .skill_id, .version, .review, .file_count, .total_size]' <<<"$output")" = '["csv-clean","org.example.csv-clean","1.2.0","local-unreviewed",3,774]' ]
	[ "$(jq -c .policy <<<"$output")" = '{"approval_summary":"Reads one CSV and writes a cleaned copy beside it.","controlled_data":"not-approved","dataset_types":["tabular","csv"],"entrypoint":"scripts/clean.py","id":"org.example.csv-clean","phi_risk":"none","platforms":["linux","generic"],"requires_network":false,"schema_version":"heartwood.skill-policy.v1","version":"1.2.0"}' ]
	[ "$(jq -c .allowed_tools <<<"$output")" = '["terminal"]' ]
}

# ---- hostile trees, each its own case ----

@test "tree: a symlink is refused" {
	skill
	ln -s /etc/passwd csv-clean/references/passwd
	run -65 --separate-stderr hw-skill validate csv-clean
	[ "$stderr" = "hw-skill: invalid skill 'csv-clean': 'references/passwd' is a symlink" ]
}

@test "tree: a symlinked skill directory is refused" {
	skill
	ln -s csv-clean link
	run -74 --separate-stderr hw-skill validate link
	[[ "$stderr" == "hw-skill: cannot open skill directory 'link': "* ]]
}

@test "tree: a hard link is refused" {
	skill
	ln csv-clean/references/rules.md csv-clean/references/again.md
	run -65 --separate-stderr hw-skill validate csv-clean
	[[ "$stderr" == "hw-skill: invalid skill 'csv-clean': 'references/"*".md' is a hard link" ]]
}

@test "tree: a special file is refused" {
	skill
	mkfifo csv-clean/assets-fifo
	run -65 --separate-stderr hw-skill validate csv-clean
	[ "$stderr" = "hw-skill: invalid skill 'csv-clean': 'assets-fifo' is a special file" ]
}

@test "tree: a .git component is refused" {
	skill
	mkdir -p csv-clean/references/.git
	echo x >csv-clean/references/.git/HEAD
	run -65 --separate-stderr hw-skill validate csv-clean
	[ "$stderr" = "hw-skill: invalid skill 'csv-clean': 'references/.git' is a .git component" ]
}

@test "tree: an executable outside scripts/ is refused" {
	skill
	chmod 744 csv-clean/references/rules.md
	run -65 --separate-stderr hw-skill validate csv-clean
	[ "$stderr" = "hw-skill: invalid skill 'csv-clean': 'references/rules.md' is executable outside scripts/" ]
}

@test "tree: two paths equal after case folding are refused" {
	skill
	echo a >csv-clean/references/Rules.md
	run -65 --separate-stderr hw-skill validate csv-clean
	[ "$stderr" = "hw-skill: invalid skill 'csv-clean': 'references/rules.md' collides with another path after case folding" ]
	rm csv-clean/references/Rules.md
	echo a >csv-clean/references/Ärger.md
	echo b >csv-clean/references/ärger.md
	run -65 --separate-stderr hw-skill validate csv-clean
	[[ "$stderr" == *"collides with another path after case folding" ]]
}

@test "tree: a file over 8 MiB is refused" {
	skill
	truncate -s $((8 * 1024 * 1024 + 1)) csv-clean/assets.bin
	run -65 --separate-stderr hw-skill validate csv-clean
	[ "$stderr" = "hw-skill: invalid skill 'csv-clean': 'assets.bin' is over 8 MiB" ]
}

@test "tree: more than 64 MiB in all is refused" {
	skill
	mkdir csv-clean/assets
	for i in 1 2 3 4 5 6 7 8 9; do truncate -s $((8 * 1024 * 1024)) "csv-clean/assets/$i.bin"; done
	run -65 --separate-stderr hw-skill validate csv-clean
	[[ "$stderr" == *"takes the skill past 64 MiB" ]]
}

@test "tree: more than 256 files are refused" {
	skill
	mkdir csv-clean/assets
	# 3 files and 253: the 256 allowed
	for i in $(seq 253); do echo "$i" >"csv-clean/assets/$i"; done
	run -0 hw-skill validate csv-clean
	: >csv-clean/assets/254
	run -65 --separate-stderr hw-skill validate csv-clean
	[[ "$stderr" == *"is past the 256 files a skill may have" ]]
}

@test "tree: a name that is not UTF-8 is refused" {
	skill
	: >"csv-clean/assets-$(printf '\377')"
	run -65 --separate-stderr hw-skill validate csv-clean
	[[ "$stderr" == *"is not a UTF-8 name" ]]
}

@test "tree: a file that changes while it is read is refused" {
	skill
	truncate -s 8000000 csv-clean/assets.bin
	( while :; do touch csv-clean/assets.bin; done ) &
	pid=$!
	changed=0
	for i in $(seq 300); do
		run --separate-stderr hw-skill validate csv-clean
		if [ "$status" = 65 ]; then
			[ "$stderr" = "hw-skill: invalid skill 'csv-clean': 'assets.bin' changed while it was read" ]
			changed=1
			break
		fi
	done
	kill "$pid" 2>/dev/null || :
	wait "$pid" || :
	[ "$changed" = 1 ]
}

@test "tree: .mcp.json (MCP servers) is refused" {
	skill
	echo '{}' >csv-clean/.mcp.json
	run -65 --separate-stderr hw-skill validate csv-clean
	[ "$stderr" = "hw-skill: invalid skill: it uses MCP servers (.mcp.json)" ]
}

@test "SKILL.md: dynamic shell context is refused" {
	skill
	echo 'Today: !`date`' >>csv-clean/SKILL.md
	run -65 --separate-stderr hw-skill validate csv-clean
	[ "$stderr" = "hw-skill: invalid skill: SKILL.md uses dynamic shell context ('!\`')" ]
}

@test "SKILL.md: missing is refused" {
	skill
	rm csv-clean/SKILL.md
	run -65 --separate-stderr hw-skill validate csv-clean
	[ "$stderr" = "hw-skill: invalid skill: it has no SKILL.md" ]
}

@test "SKILL.md: no frontmatter, or one never closed" {
	skill
	printf '# just text\n' >csv-clean/SKILL.md
	run -65 --separate-stderr hw-skill validate csv-clean
	[ "$stderr" = "hw-skill: invalid skill: SKILL.md does not start with a '---' line" ]
	printf -- '---\nname: csv-clean\n' >csv-clean/SKILL.md
	run -65 --separate-stderr hw-skill validate csv-clean
	[ "$stderr" = "hw-skill: invalid skill: SKILL.md has no '---' line ending its frontmatter within 64 KiB" ]
}

@test "SKILL.md: the name must be valid and the directory's" {
	skill
	front name Csv-Clean
	run -65 --separate-stderr hw-skill validate csv-clean
	[ "$stderr" = "hw-skill: invalid skill: name must be 1-64 of a-z 0-9 in words joined by single hyphens" ]
	front name csv--clean
	run -65 hw-skill validate csv-clean
	front name other
	run -65 --separate-stderr hw-skill validate csv-clean
	[ "$stderr" = "hw-skill: invalid skill: its name 'other' is not its directory's name 'csv-clean'" ]
}

@test "SKILL.md: description, license, unknown fields" {
	skill
	front description -
	run -65 --separate-stderr hw-skill validate csv-clean
	[ "$stderr" = "hw-skill: invalid skill: description must be 1-1024 characters" ]
	rm -rf csv-clean
	skill
	front description "$(printf 'é%.0s' $(seq 1025))"
	run -65 hw-skill validate csv-clean
	front description "$(printf 'é%.0s' $(seq 1024))"
	run -0 hw-skill validate csv-clean
	front license -
	run -65 --separate-stderr hw-skill validate csv-clean
	[ "$stderr" = "hw-skill: invalid skill: license is required" ]
	front compatibility 'x'
	sed -i 's/^compatibility: x$/compatibility: x\nlicense: MIT\nhooks: none/' csv-clean/SKILL.md
	run -65 --separate-stderr hw-skill validate csv-clean
	[ "$stderr" = "hw-skill: invalid skill: hooks is not a frontmatter field" ]
}

@test "SKILL.md: each policy field is checked" {
	skill
	for c in 'heartwood.version:1.2' 'heartwood.version:01.2.0' \
		'heartwood.phi-risk:some' 'heartwood.requires-network:"no"' \
		'heartwood.controlled-data:approved' 'heartwood.dataset-types:"a,,b"' \
		'heartwood.entrypoint:../x' 'heartwood.entrypoint:scripts/none.py' \
		'heartwood.id:-' 'heartwood.platforms:-'; do
		rm -rf csv-clean
		skill
		front "${c%%:*}" "${c#*:}"
		run -65 --separate-stderr hw-skill validate csv-clean
		[[ "$stderr" == "hw-skill: invalid skill: "* ]] || { echo "$c: $stderr"; return 1; }
	done
	rm -rf csv-clean
	skill
	front heartwood.approval-summary "$(printf 'a%.0s' $(seq 501))"
	run -65 --separate-stderr hw-skill validate csv-clean
	[ "$stderr" = "hw-skill: invalid skill: heartwood.approval-summary is over 500 characters" ]
}

@test "SKILL.md: YAML that is not a string where one is needed" {
	skill
	front heartwood.requires-network false
	run -65 --separate-stderr hw-skill validate csv-clean
	[ "$stderr" = "hw-skill: invalid skill: SKILL.md:13: a value this subset does not read as a string (quote it)" ]
	front heartwood.requires-network '"false"'
	front heartwood.version 1.2
	run -65 hw-skill validate csv-clean
	front heartwood.version '"1.2.0"'
	sed -i 's/^license: MIT$/license: MIT\nlicense: MIT/' csv-clean/SKILL.md
	run -65 --separate-stderr hw-skill validate csv-clean
	[ "$stderr" = "hw-skill: invalid skill: SKILL.md:5: a key given twice" ]
}

@test "SKILL.md: allowed-tools as a string, a block list or a flow list" {
	skill
	run -0 hw-skill local inspect csv-clean
	[ "$(jq -c .allowed_tools <<<"$output")" = '["terminal"]' ]
	front allowed-tools '[terminal, file_editor]'
	run -0 hw-skill local inspect csv-clean
	[ "$(jq -c .allowed_tools <<<"$output")" = '["terminal","file_editor"]' ]
	sed -i 's/^allowed-tools:.*/allowed-tools:\n  - terminal\n  - "think"/' csv-clean/SKILL.md
	run -0 hw-skill local inspect csv-clean
	[ "$(jq -c .allowed_tools <<<"$output")" = '["terminal","think"]' ]
}

# ---- local install, the index, the log ----

@test "local install: the approved digest installs, logs and lists it" {
	skill
	d=$(digest csv-clean)
	run -0 --separate-stderr hw-skill local install csv-clean --expected-tree-sha256 "sha256:$d"
	[ "$(jq -c '[.name, .status, .review, .source_kind, .source_id, .controlled_data_ready]' <<<"$output")" = '["csv-clean","active","local-unreviewed","local","local",false]' ]
	a=".heartwood/skills/artifacts/sha256/$d/csv-clean"
	[ "$(digest "$a")" = "$d" ]
	[ "$(stat -c %a "$a/scripts/clean.py")" = 755 ]
	[ "$(stat -c %a "$a/SKILL.md")" = 644 ]
	[ "$(jq -r '.installations[].name' .heartwood/skills/index.json)" = csv-clean ]
	run -0 hw-audit verify .heartwood/audit/skill-installations.jsonl
	[ "$(jq -r .event_count <<<"$output")" = 2 ]
	[ "$(jq -r '.event_type + " " + (.payload.decision // "")' .heartwood/audit/skill-installations.jsonl | tr '\n' ,)" = "skill.installation-decision approved,skill.activated ," ]
	run -0 hw-skill list
	[ "$(jq -c '[.name, .source, .status, .compatibility_reason, .allowed_tools]' <<<"$output")" = '["csv-clean","installed","active",null,["terminal"]]' ]
}

@test "local install: another digest is denied, recorded, and installs nothing" {
	skill
	run -1 --separate-stderr hw-skill local install csv-clean --expected-tree-sha256 "$(printf '0%.0s' $(seq 64))"
	[ "$stderr" = "hw-skill: refusing to install 'csv-clean': its tree digest is sha256:$(digest csv-clean), not the approved sha256:$(printf '0%.0s' $(seq 64))" ]
	[ "$(jq -r .payload.decision .heartwood/audit/skill-installations.jsonl)" = denied ]
	[ ! -e .heartwood/skills/index.json ]
	[ -z "$(ls -A .heartwood/skills/artifacts/sha256)" ]
	run -0 hw-audit verify .heartwood/audit/skill-installations.jsonl
}

@test "local install: a malformed digest is a usage error" {
	skill
	run -2 --separate-stderr hw-skill local install csv-clean --expected-tree-sha256 ABC
	[ "$stderr" = "hw-skill: invalid tree digest 'ABC': not 64 lowercase hex digits" ]
	run -2 --separate-stderr hw-skill local install csv-clean
	[[ "$stderr" == usage:* ]]
	[ ! -e .heartwood ]
}

@test "local install: an exact retry changes nothing; a conflict is refused" {
	skill
	d=$(digest csv-clean)
	run -0 hw-skill local install csv-clean --expected-tree-sha256 "$d"
	run -0 hw-skill local install csv-clean --expected-tree-sha256 "$d"
	[ "$(wc -l <.heartwood/audit/skill-installations.jsonl)" = 2 ]
	echo more >>csv-clean/references/rules.md
	run -1 --separate-stderr hw-skill local install csv-clean --expected-tree-sha256 "$(digest csv-clean)"
	[ "$stderr" = "hw-skill: cannot install 'csv-clean': a skill with that name or id is installed (hw-skill remove it first)" ]
}

@test "local install: a skill outside the project or in .heartwood is refused" {
	skill
	mkdir -p "$BATS_TEST_TMPDIR/out"
	cp -r csv-clean "$BATS_TEST_TMPDIR/out/"
	run -1 --separate-stderr hw-skill local install "$BATS_TEST_TMPDIR/out/csv-clean" --expected-tree-sha256 "$(digest csv-clean)"
	[ "$stderr" = "hw-skill: refusing local skill '$BATS_TEST_TMPDIR/out/csv-clean': it is not inside the project" ]
	mkdir -p .heartwood/x
	cp -r csv-clean .heartwood/x/
	run -1 --separate-stderr hw-skill local install .heartwood/x/csv-clean --expected-tree-sha256 "$(digest csv-clean)"
	[ "$stderr" = "hw-skill: refusing local skill '.heartwood/x/csv-clean': it is inside .heartwood" ]
}

@test "local install: an invalid skill is refused before any decision" {
	skill
	d=$(digest csv-clean)
	chmod 755 csv-clean/references/rules.md
	run -65 hw-skill local install csv-clean --expected-tree-sha256 "$d"
	[ ! -e .heartwood/audit/skill-installations.jsonl ]
}

@test "remove: the record goes, the artifact stays, the log says so" {
	skill
	d=$(digest csv-clean)
	run -0 hw-skill local install csv-clean --expected-tree-sha256 "$d"
	run -0 hw-skill remove csv-clean
	[ "$(jq -c .installations .heartwood/skills/index.json)" = '[]' ]
	[ -d ".heartwood/skills/artifacts/sha256/$d/csv-clean" ]
	[ "$(tail -1 .heartwood/audit/skill-installations.jsonl | jq -r .event_type)" = skill.deactivated ]
	run -0 hw-audit verify .heartwood/audit/skill-installations.jsonl
	run -66 --separate-stderr hw-skill remove csv-clean
	[ "$stderr" = "hw-skill: skill 'csv-clean' is not installed" ]
	run -0 hw-skill list
	[ -z "$output" ]
	# installed again, the artifact there is reused
	run -0 hw-skill local install csv-clean --expected-tree-sha256 "$d"
}

@test "list: an artifact that no longer has its digest is reported" {
	skill
	d=$(digest csv-clean)
	run -0 hw-skill local install csv-clean --expected-tree-sha256 "$d"
	echo tampered >>".heartwood/skills/artifacts/sha256/$d/csv-clean/references/rules.md"
	run -0 hw-skill list
	[ "$(jq -r .compatibility_reason <<<"$output")" = "its artifact does not have its digest" ]
}

@test "list: a skill that needs the network is not compatible" {
	skill
	front heartwood.requires-network '"true"'
	run -0 hw-skill local install csv-clean --expected-tree-sha256 "$(digest csv-clean)"
	run -0 hw-skill list
	[ "$(jq -r .compatibility_reason <<<"$output")" = "it requires the network" ]
}

@test "list: a corrupt index is refused" {
	mkdir -p .heartwood/skills
	echo '{"schema_version":"x"}' >.heartwood/skills/index.json
	run -65 --separate-stderr hw-skill list
	[ "$stderr" = "hw-skill: invalid skill index '.heartwood/skills/index.json'" ]
}

@test "local inspect: a local candidate's summary, canonical JSON" {
	skill
	run -0 hw-skill local inspect csv-clean
	[ "$(jq -c '[.source, .status, .compatibility_reason, .installable]' <<<"$output")" = '["local-candidate","available",null,true]' ]
	[ "$output" = "$(jq -cS . <<<"$output")" ]
	front heartwood.requires-network '"true"'
	run -0 hw-skill local inspect csv-clean
	[ "$(jq -c '[.compatibility_reason, .installable]' <<<"$output")" = '["it requires the network",false]' ]
}
