#!/usr/bin/env bats
# Bundled skills: the ones shipped in the data directory's skills/ count
# as repository-reviewed and are active unless they do not validate, are
# not compatible, or an installed skill of their name or id takes their
# place.  The agent's prompt lists them with their directory, whose files
# file_editor views and never writes.

load lib
load agent

TOOL_CLI=${HW_TOOL_CLI:-$HW_ROOT/t/unit/tool_cli}

setup_file() {
	[ -n "${HW_TOOL_CLI-}" ] || make -s -C "$HW_ROOT" t/unit/tool_cli >/dev/null
}

setup() {
	agent_setup
	unset HW_DATADIR	# the build tree's, bundled skills and all
	B=reproducible-analysis
}
teardown() { agent_teardown; }

# datadir: a copy of the build tree's data directory, in $HW_DATADIR
datadir() {
	cp -r "$HW_ROOT/share" "$BATS_TEST_TMPDIR/share"
	export HW_DATADIR=$BATS_TEST_TMPDIR/share
}

@test "bundled: the shipped skill is listed active, repository-reviewed, with its digest" {
	run -0 hw-skill list
	d=$(hw-skill digest "$HW_ROOT/share/skills/$B" | jq -r .tree_sha256)
	[ "$(jq -c "select(.name == \"$B\") | [.source, .status, .review, .tree_sha256 == \"$d\", .compatibility_reason, .installable]" <<<"$output")" = \
		'["bundled","active","repository-reviewed",true,null,false]' ]
}

@test "bundled: one that does not validate is unsupported, with the reason" {
	datadir
	echo 'Today: !`date`' >>"$HW_DATADIR/skills/$B/SKILL.md"
	run -0 hw-skill list
	[ "$(jq -c "select(.name == \"$B\") | [.source, .status]" <<<"$output")" = '["bundled","unsupported"]' ]
	[[ "$(jq -r "select(.name == \"$B\") | .compatibility_reason" <<<"$output")" == *"dynamic shell context"* ]]
}

@test "bundled: one that needs the network is unsupported and not in the prompt" {
	datadir
	sed -i 's/heartwood.requires-network: "false"/heartwood.requires-network: "true"/' "$HW_DATADIR/skills/$B/SKILL.md"
	run -0 hw-skill list
	[ "$(jq -c "select(.name == \"$B\") | [.status, .compatibility_reason]" <<<"$output")" = '["unsupported","it requires the network"]' ]
	capture
	chat c1 hello
	run -0 hw-agent run session-main
	run -0 sent '.[0].content'
	[[ "$output" != *"$B"* ]]
}

@test "bundled: a skill of a bundled one's name or id is not installed" {
	datadir
	cp -r "$HW_DATADIR/skills/$B" .
	d=$(hw-skill digest "$B" | jq -r .tree_sha256)
	run -1 --separate-stderr hw-skill local install "$B" --expected-tree-sha256 "$d"
	[ "$stderr" = "hw-skill: cannot install '$B': a bundled skill has that name or id" ]
	# the id alone is enough
	mv "$B" other
	sed -i "s/^name: $B\$/name: other/" other/SKILL.md
	d=$(hw-skill digest other | jq -r .tree_sha256)
	run -1 --separate-stderr hw-skill local install other --expected-tree-sha256 "$d"
	[ "$stderr" = "hw-skill: cannot install 'other': a bundled skill has that name or id" ]
	run -0 hw-skill list
	[ "$(jq -r 'select(.source == "installed") | .name' <<<"$output")" = "" ]
	[ -z "$(find .heartwood/skills/artifacts -mindepth 2 2>/dev/null)" ]
}

@test "bundled: an installed skill of its name, there before it was bundled, takes its place" {
	datadir
	mv "$HW_DATADIR/skills/$B" "$BATS_TEST_TMPDIR/later"
	cp -r "$BATS_TEST_TMPDIR/later" "$B"
	sed -i 's/^description: .*/description: The lab'"'"'s own version./' "$B/SKILL.md"
	d=$(hw-skill digest "$B" | jq -r .tree_sha256)
	run -0 hw-skill local install "$B" --expected-tree-sha256 "$d"
	mv "$BATS_TEST_TMPDIR/later" "$HW_DATADIR/skills/$B"	# a later release
	run -0 hw-skill list
	[ "$(jq -c "select(.name == \"$B\") | [.source, .status, .compatibility_reason]" <<<"$output")" = \
		'["installed","active",null]
["bundled","unsupported","an installed skill of its name or id takes its place"]' ]
	capture
	chat c1 hello
	run -0 hw-agent run session-main
	run -0 sent '.[0].content'
	[[ "$output" == *"## Skill $B (local-unreviewed, tree sha256:$d)"* ]]
	[[ "$output" != *"repository-reviewed"* ]]
}

@test "bundled: the agent views a bundled skill's file and writes nothing there" {
	datadir
	k=$(cd "$HW_DATADIR/skills/$B" && pwd -P)
	jq -cn --arg p "$k/references/checklist.md" --arg e "Files: $k/" '{content: "I will read the checklist.", expect: $e, tool_calls: [
		{id: "a", name: "file_editor", arguments: {summary: "Read", command: "view", path: $p, security_risk: "LOW"}},
		{id: "b", name: "file_editor", arguments: {summary: "Change", command: "str_replace", path: $p, old_str: "Every", new_str: "No", security_risk: "LOW"}}]}' >turns.jsonl
	echo '{"content":"Checked.","expect":"Every input is named with its SHA-256."}' >>turns.jsonl
	before=$(cat "$k/references/checklist.md")
	serve turns.jsonl
	chat c1 "finish the analysis"
	run -0 hw-agent run session-main
	g=$(hw-session project session-main | jq -r .pendingApproval.groupId)
	cmd c2 approve "{\"target_type\":\"action-set\",\"target_id\":\"$g\"}" | hw-session command session-main >/dev/null
	run -0 hw-agent run session-main
	run -0 proj '[.lifecycle.status, [.actions[].state], .conversation[-1].content]'
	[ "$output" = '["idle",["succeeded","failed"],"Checked."]' ]
	[ "$(cat "$k/references/checklist.md")" = "$before" ]
}

@test "tools: a directory outside the project is viewed, and only viewed; its neighbours and links are not" {
	datadir
	k=$(cd "$HW_DATADIR/skills/$B" && pwd -P)
	echo secret >"$BATS_TEST_TMPDIR/secret"
	ln -s "$BATS_TEST_TMPDIR/secret" "$k/references/link.md"
	mkdir "$HW_DATADIR/skills/${B}x"
	echo other >"$HW_DATADIR/skills/${B}x/f"
	ed() { jq -cn --arg c "$1" --arg p "$2" '{name: "file_editor", arguments: {command: $c, path: $p, file_text: "x"}}'; }
	run -0 "$TOOL_CLI" "$PROJ" "$k" < <(ed view "$k/references/checklist.md"; ed create "$k/new.md"
		ed view "$k/references/link.md"; ed view "$HW_DATADIR/skills/${B}x/f"; ed view "$k/../${B}x/f")
	nth() { sed -n "${1}p" <<<"$output" | jq -r ".$2"; }
	[ "$(nth 1 exit_code)" = 0 ]
	[[ "$(nth 1 output)" == *"Every input is named"* ]]
	[ "$(nth 1 summary)" = "file_editor view $k/references/checklist.md" ]
	[ "$(nth 2 exit_code)" = 1 ]
	[[ "$(nth 2 output)" == *"a bundled skill's file, which file_editor only views"* ]]
	for i in 3 4 5; do
		[ "$(nth $i exit_code)" = 1 ]
		[[ "$(nth $i output)" == *"It is outside the project"* ]]
	done
	[[ "$output" != *secret* ]]
	[ ! -e "$k/new.md" ]
}
