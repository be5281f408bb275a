#!/usr/bin/env bats
# hw-model download CATALOG-ID against t/hub.py: a managed catalog entry
# (artifact or snapshot) downloaded by its id, pinned to the catalog's
# commit and checked against the hub's model info there, every byte
# against the catalog's size and SHA-256; each lie (a digest, a size, a
# commit, a moved branch) refused with nothing published; resume after a
# kill; an unknown id; a catalog entry under the agent's context minimum.

load lib
load hub

OLD=89abcdef0123456789abcdef0123456789abcdef

# resolves: the resolve requests' paths, one a line
resolves() { jq -r 'select(.path | contains("/resolve/")) | .path' "$HUB/requests.jsonl"; }

# mksnap REPO: a safetensors repository (and files its policy leaves out)
mksnap() {
	local d="$HUB/$1/files"
	mkdir -p "$d"
	echo '{"model_type":"qwen3"}' >"$d/config.json"
	head -c 50000 /dev/urandom >"$d/model.safetensors"
	echo 'x' >"$d/pytorch_model.bin"
	echo 'print(1)' >"$d/modeling.py"
	mkdir -p "$d/original"
	echo '{}' >"$d/original/params.json"
	repo_info "$1" '.config.model_type = "qwen3"'
}

@test "download CATALOG-ID: a GGUF pinned by the catalog, verified, published with its origin" {
	mkrepo org/tiny
	catalog_gguf tiny-gguf org/tiny tiny-Q4_K_M.gguf
	hub_start
	run -0 --separate-stderr hw-model download tiny-gguf "${CAT[@]}" --progress none
	[ -z "$stderr" ]
	echo "$output" | jq -e --arg sha "$SHA" '.model_id == "tiny-gguf" and
		.kind == "gguf" and .source_revision == $sha and .files == 2 and
		.already_present == false'
	d=$(published tiny-gguf)
	cmp "$d/tiny-Q4_K_M.gguf" "$HUB/org/tiny/files/tiny-Q4_K_M.gguf"
	(cd "$d" && sha256sum -c --quiet SHA256SUMS)
	jq -e --arg sha "$SHA" '.origin == "catalog" and .catalog_id == "tiny-gguf" and
		.model_id == "tiny-gguf" and .source_revision == $sha and
		.runtime == "llama-cpp" and .context_window == 32768 and
		.license_posture == "Apache-2.0; for tests." and
		.files[0].blob_id == null' "$d/HEARTWOOD-SOURCE.json"
	# the info and the file asked at the pinned commit, never a branch
	grep -q "\"path\": \"/api/models/org/tiny/revision/$SHA?blobs=true\"" "$HUB/requests.jsonl"
	[ "$(resolves)" = "/org/tiny/resolve/$SHA/tiny-Q4_K_M.gguf" ]
	[ "$(ls -A .heartwood/models | sort | tr '\n' ' ')" = ".tiny-gguf.lock tiny-gguf " ]
	# a second run verifies it again; select and plan take it
	run -0 hw-model download tiny-gguf "${CAT[@]}"
	echo "$output" | jq -e '.already_present == true'
	run -0 hw-model select tiny-gguf
	echo "$output" | jq -e '.model_id == "tiny-gguf" and .runtime == "llama-cpp"'
	run -0 hw-model bundle export tiny-gguf t.zip
	hw-model bundle inspect t.zip | jq -e '.model.model_id == "tiny-gguf" and
		.model.license_posture == "Apache-2.0; for tests."'
}

@test "download CATALOG-ID: the catalog's SHA-256 differs from the served bytes: refused, nothing published" {
	mkrepo org/tiny 'del(.siblings[].lfs)'
	catalog_gguf tiny-gguf org/tiny tiny-Q4_K_M.gguf "$SHA" 32768 \
		"$(printf 'other bytes' | sha256sum | cut -c1-64)"
	hub_start
	run -65 --separate-stderr hw-model download tiny-gguf "${CAT[@]}"
	[[ "$stderr" == "hw-model: 'tiny-Q4_K_M.gguf': SHA-256 "*", not the published $(printf 'other bytes' | sha256sum | cut -c1-64)" ]]
	nothing_published
	[ ! -e .heartwood/models/.tiny-gguf.partial/tiny-Q4_K_M.gguf ]
}

@test "download CATALOG-ID: the hub's lfs.sha256 differs from the catalog's: refused before a byte is fetched" {
	mkrepo org/tiny
	catalog_gguf tiny-gguf org/tiny tiny-Q4_K_M.gguf "$SHA" 32768 \
		"$(printf 'other bytes' | sha256sum | cut -c1-64)"
	hub_start
	run -65 --separate-stderr hw-model download tiny-gguf "${CAT[@]}"
	[ "$stderr" = "hw-model: catalog entry 'tiny-gguf': the hub's lfs.sha256 of its file differs from the catalog's" ]
	[ -z "$(resolves)" ]
	[ ! -e .heartwood ]
}

@test "download CATALOG-ID: bytes that differ from the hub's and the catalog's digest are refused" {
	mkrepo org/tiny
	catalog_gguf tiny-gguf org/tiny tiny-Q4_K_M.gguf
	behave '{"bytes":{"tiny-Q4_K_M.gguf":"lies"}}'
	hub_start
	run -65 --separate-stderr hw-model download tiny-gguf "${CAT[@]}"
	[[ "$stderr" == "hw-model: 'tiny-Q4_K_M.gguf': 4 bytes, not the published 300000" ]]
	nothing_published
}

@test "download CATALOG-ID: a file size the hub lists otherwise than the catalog is refused" {
	mkrepo org/tiny
	catalog_gguf tiny-gguf org/tiny tiny-Q4_K_M.gguf
	repo_info org/tiny '.siblings |= map(if .rfilename == "tiny-Q4_K_M.gguf" then .size = 7 | .lfs.size = 7 else . end)'
	hub_start
	run -65 --separate-stderr hw-model download tiny-gguf "${CAT[@]}"
	[ "$stderr" = "hw-model: catalog entry 'tiny-gguf': the hub's size of its file differs from the catalog's" ]
	[ ! -e .heartwood ]
}

@test "download CATALOG-ID: a file the hub does not list at the commit is refused" {
	mkrepo org/tiny
	catalog_gguf tiny-gguf org/tiny tiny-Q4_K_M.gguf
	repo_info org/tiny 'del(.siblings[] | select(.rfilename == "tiny-Q4_K_M.gguf"))'
	hub_start
	run -65 --separate-stderr hw-model download tiny-gguf "${CAT[@]}"
	[ "$stderr" = "hw-model: catalog entry 'tiny-gguf': the hub lists no 'tiny-Q4_K_M.gguf' at commit '$SHA'" ]
}

@test "download CATALOG-ID: a hub that answers another commit for the pinned one is refused" {
	mkrepo org/tiny
	catalog_gguf tiny-gguf org/tiny tiny-Q4_K_M.gguf
	behave "{\"info\": $(jq -c --arg o "$OLD" '.sha = $o' "$HUB/org/tiny/info.json" | jq -Rs .)}"
	hub_start
	run -65 --separate-stderr hw-model download tiny-gguf "${CAT[@]}"
	[ "$stderr" = "hw-model: catalog entry 'tiny-gguf': the hub answered commit '$OLD', not the pinned '$SHA'" ]
	[ ! -e .heartwood ]
}

@test "download CATALOG-ID: a longer commit that begins with the full pinned one is refused" {
	mkrepo org/tiny
	catalog_gguf tiny-gguf org/tiny tiny-Q4_K_M.gguf
	long=${SHA}0123456789abcdef01234567
	behave "{\"info\": $(jq -c --arg o "$long" '.sha = $o' "$HUB/org/tiny/info.json" | jq -Rs .)}"
	hub_start
	run -65 --separate-stderr hw-model download tiny-gguf "${CAT[@]}"
	[ "$stderr" = "hw-model: catalog entry 'tiny-gguf': the hub answered commit '$long', not the pinned '$SHA'" ]
}

@test "download CATALOG-ID: a resolve that serves another commit is refused, nothing published" {
	mkrepo org/tiny
	catalog_gguf tiny-gguf org/tiny tiny-Q4_K_M.gguf
	behave "{\"commit\":\"$OLD\"}"
	hub_start
	run -65 --separate-stderr hw-model download tiny-gguf "${CAT[@]}"
	[ "$stderr" = "hw-model: 'tiny-Q4_K_M.gguf': the hub served commit '$OLD', not the pinned '$SHA'" ]
	nothing_published
}

@test "download CATALOG-ID: the branch moved on: the catalog's commit and its bytes are used" {
	# the catalog pins OLD; main now names SHA, with other bytes
	mkrepo org/tiny
	mkdir -p "$HUB/org/tiny/at/$OLD/files"
	head -c 200000 /dev/urandom >"$HUB/org/tiny/at/$OLD/files/tiny-Q4_K_M.gguf"
	cp "$HUB/org/tiny/files/config.json" "$HUB/org/tiny/at/$OLD/files/"
	python3 "$HW_ROOT/t/hub.py" siblings "$HUB/org/tiny/at/$OLD" >"$HUB/sib.json"
	jq --arg o "$OLD" --slurpfile s "$HUB/sib.json" '.sha = $o | .siblings = $s[0]' \
		"$HUB/org/tiny/info.json" >"$HUB/org/tiny/at/$OLD/info.json"
	catalog_gguf tiny-gguf org/tiny tiny-Q4_K_M.gguf "$OLD" 32768 \
		"$(sha256sum <"$HUB/org/tiny/at/$OLD/files/tiny-Q4_K_M.gguf" | cut -c1-64)"
	sed -i "s/^artifact_size_bytes = .*/artifact_size_bytes = 200000/" cat/artifacts/tiny-gguf.toml
	hub_start
	run -0 --separate-stderr hw-model download tiny-gguf "${CAT[@]}"
	cmp "$(published tiny-gguf)/tiny-Q4_K_M.gguf" "$HUB/org/tiny/at/$OLD/files/tiny-Q4_K_M.gguf"
	jq -e --arg o "$OLD" '.source_revision == $o' "$(published tiny-gguf)/HEARTWOOD-SOURCE.json"
	[ "$(resolves)" = "/org/tiny/resolve/$OLD/tiny-Q4_K_M.gguf" ]
	run grep -c '/main\|revision/main' "$HUB/requests.jsonl"
	[ "$output" = 0 ]
}

@test "download CATALOG-ID: a short catalog revision is pinned to the full commit the hub answers" {
	mkrepo org/tiny
	printf '{"main":"%s","0123456":"%s"}\n' "$SHA" "$SHA" >"$HUB/org/tiny/refs.json"
	catalog_gguf tiny-gguf org/tiny tiny-Q4_K_M.gguf 0123456
	hub_start
	run -0 --separate-stderr hw-model download tiny-gguf "${CAT[@]}"
	jq -e --arg sha "$SHA" '.source_revision == $sha' "$(published tiny-gguf)/HEARTWOOD-SOURCE.json"
	[ "$(resolves)" = "/org/tiny/resolve/$SHA/tiny-Q4_K_M.gguf" ]
}

@test "download CATALOG-ID: a short revision the hub answers with a commit it does not begin is refused" {
	mkrepo org/tiny
	printf '{"main":"%s","89abcde":"%s"}\n' "$SHA" "$SHA" >"$HUB/org/tiny/refs.json"
	catalog_gguf tiny-gguf org/tiny tiny-Q4_K_M.gguf 89abcde
	hub_start
	run -65 --separate-stderr hw-model download tiny-gguf "${CAT[@]}"
	[ "$stderr" = "hw-model: catalog entry 'tiny-gguf': the hub answered commit '$SHA', not the pinned '89abcde'" ]
}

@test "download CATALOG-ID: killed midway, the next run resumes with a range to exactly the right bytes" {
	SIZE=1000000 mkrepo org/tiny
	catalog_gguf tiny-gguf org/tiny tiny-Q4_K_M.gguf
	behave '{"throttle":{"tiny-Q4_K_M.gguf":100000}}'
	hub_start
	part=.heartwood/models/.tiny-gguf.partial/tiny-Q4_K_M.gguf
	hw-model download tiny-gguf "${CAT[@]}" >/dev/null 2>&1 3>&- &
	pid=$!
	for ((i = 0; i < 400; i++)); do
		if [ -f "$part" ] && [ "$(stat -c %s "$part")" -gt 50000 ]; then break; fi
		sleep 0.05
	done
	kill -9 "$pid"
	wait "$pid" || true
	have=$(stat -c %s "$part")
	[ "$have" -gt 0 ]
	[ "$have" -lt 1000000 ]
	nothing_published
	jq -e '.model_id == "tiny-gguf"' .heartwood/models/.tiny-gguf.partial.json
	behave '{}'
	run -0 hw-model download tiny-gguf "${CAT[@]}"
	cmp "$(published tiny-gguf)/tiny-Q4_K_M.gguf" "$HUB/org/tiny/files/tiny-Q4_K_M.gguf"
	jq -e -s --arg r "bytes=$have-" '[.[] | select(.path | contains("resolve"))
		| .range] == [null, $r]' "$HUB/requests.jsonl"
	[ ! -e .heartwood/models/.tiny-gguf.partial.json ]
}

@test "download CATALOG-ID: too little free space for the catalog's minimum is refused before a byte is fetched" {
	mkrepo org/tiny
	catalog_gguf tiny-gguf org/tiny tiny-Q4_K_M.gguf
	sed -i 's/^minimum_free_bytes = .*/minimum_free_bytes = 9000000000000000/' cat/artifacts/tiny-gguf.toml
	hub_start
	run -74 --separate-stderr hw-model download tiny-gguf "${CAT[@]}"
	[[ "$stderr" == "hw-model: not enough free space in '.heartwood/models': 9000000000000000 bytes needed, "*" free" ]]
	[ -z "$(resolves)" ]
}

@test "download CATALOG-ID: another download of the same entry holds the lock, 75" {
	mkrepo org/tiny
	catalog_gguf tiny-gguf org/tiny tiny-Q4_K_M.gguf
	hub_start
	mkdir -p .heartwood/models
	exec 9>.heartwood/models/.tiny-gguf.lock
	flock 9
	run -75 --separate-stderr hw-model download tiny-gguf "${CAT[@]}"
	exec 9>&-
	[ "$stderr" = "hw-model: 'tiny-gguf': another download of this model is running" ]
}

@test "download CATALOG-ID: an id neither the catalog nor a file names is 66, nothing created" {
	mkrepo org/tiny
	catalog_gguf tiny-gguf org/tiny tiny-Q4_K_M.gguf
	hub_start
	run -66 --separate-stderr hw-model download no-such-model "${CAT[@]}"
	[ "$stderr" = "hw-model: no catalog entry or plan file 'no-such-model' (hw-model catalog lists the entries)" ]
	[ ! -e .heartwood ]
	[ ! -e "$HUB/requests.jsonl" ]
	# the shipped catalog by default
	run -66 --separate-stderr hw-model download no-such-model
	[ "$stderr" = "hw-model: no catalog entry or plan file 'no-such-model' (hw-model catalog lists the entries)" ]
}

@test "download CATALOG-ID: the shipped catalog's entries are known by their ids" {
	# the hub stand-in has no such repository: its refusal, not 'unknown'
	hub_start
	run -69 --separate-stderr hw-model download llama-cpp-stories260k-ci
	[[ "$stderr" == *"'ggml-org/models-moved'"* ]]
	grep -q '"path": "/api/models/ggml-org/models-moved/revision/96f460f?blobs=true"' "$HUB/requests.jsonl"
}

@test "download CATALOG-ID: --model-id belongs to plans" {
	mkrepo org/tiny
	catalog_gguf tiny-gguf org/tiny tiny-Q4_K_M.gguf
	run -2 --separate-stderr hw-model download tiny-gguf "${CAT[@]}" --model-id x
	[ "$stderr" = "hw-model: --model-id applies to a plan, not to catalog entry 'tiny-gguf'" ]
}

@test "download CATALOG-ID: a catalog id that cannot name a model directory is refused" {
	mkrepo org/tiny
	catalog_gguf Tiny-GGUF org/tiny tiny-Q4_K_M.gguf
	hub_start
	run -65 --separate-stderr hw-model download Tiny-GGUF "${CAT[@]}"
	[ "$stderr" = "hw-model: catalog entry 'Tiny-GGUF': the id cannot name a model directory ([a-z0-9._-])" ]
	[ ! -e .heartwood ]
}

@test "download CATALOG-ID: an entry whose repository needs custom code is refused" {
	mkrepo org/tiny '.tags += ["custom_code"]'
	catalog_gguf tiny-gguf org/tiny tiny-Q4_K_M.gguf
	hub_start
	run -65 --separate-stderr hw-model download tiny-gguf "${CAT[@]}"
	[ "$stderr" = "hw-model: refusing 'org/tiny': it needs custom code (tag custom_code)" ]
}

@test "download CATALOG-ID: a file named ./ID is still a plan" {
	mkrepo org/tiny
	catalog_gguf tiny-gguf org/tiny tiny-Q4_K_M.gguf
	hub_start
	echo '{"schema_version":' >tiny-gguf
	run -65 --separate-stderr hw-model download ./tiny-gguf "${CAT[@]}"
	[[ "$stderr" == "hw-model: invalid plan './tiny-gguf': "* ]]
}

@test "download CATALOG-ID: a context window under 18432 is for tests: downloaded with a warning, not selected" {
	mkrepo org/tiny
	catalog_gguf tiny-smoke org/tiny tiny-Q4_K_M.gguf "$SHA" 2048
	hub_start
	run -0 --separate-stderr hw-model download tiny-smoke "${CAT[@]}"
	[ "$stderr" = "hw-model: warning: 'tiny-smoke' has a context window of 2048 tokens, under the agent's 18432: it is for load and query tests only, and hw-model select refuses it" ]
	(cd "$(published tiny-smoke)" && sha256sum -c --quiet SHA256SUMS)
	run -64 --separate-stderr hw-model select tiny-smoke
	[ "$stderr" = "hw-model: model 'tiny-smoke' has a context window of 2048 tokens, under the agent's minimum of 18432: it is for load and query tests only" ]
	[ ! -e .heartwood/config.toml ]
}

@test "download CATALOG-ID: a snapshot, its policy's files each checked, its qualification recorded" {
	mksnap org/q
	catalog_snapshot q-snap org/q 50000
	hub_start
	run --separate-stderr hw-model download q-snap "${CAT[@]}"
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	echo "$output" | jq -e '.model_id == "q-snap" and .kind == "snapshot" and .files == 3'
	d=$(published q-snap)
	[ "$(cut -c67- "$d/SHA256SUMS")" = "$(printf 'HEARTWOOD-SOURCE.json\nconfig.json\nmodel.safetensors')" ]
	(cd "$d" && sha256sum -c --quiet SHA256SUMS)
	jq -e '.origin == "catalog" and .runtime == "vllm" and .tool_call_parser == "hermes" and
		.qualification == "unvalidated" and .tensor_parallel_size == 1 and
		.minimum_gpu_memory_bytes == 16000000000 and .license == "Apache-2.0" and
		.model_type == "qwen3" and .precision == "BF16" and
		([.files[] | select(.path == "model.safetensors") | .sha256 != null and .blob_id == null] == [true]) and
		([.files[] | select(.path == "config.json") | .blob_id != null] == [true])' "$d/HEARTWOOD-SOURCE.json"
	[ "$(resolves | sort | tr '\n' ' ')" = "/org/q/resolve/$SHA/config.json /org/q/resolve/$SHA/model.safetensors " ]
}

@test "download CATALOG-ID: a snapshot whose files add up to over 20 % off the catalog's size is refused" {
	mksnap org/q
	[ "$(cat "$HUB"/org/q/files/{config.json,model.safetensors} | wc -c)" -eq 50023 ]
	catalog_snapshot q-snap org/q 40000
	hub_start
	run -65 --separate-stderr hw-model download q-snap "${CAT[@]}"
	[ "$stderr" = "hw-model: catalog entry 'q-snap': the hub's total size (over 20 % off) differs from the catalog's" ]
	[ ! -e .heartwood ]
	# 50023 bytes: within 20 % of 62000, not of 63000
	catalog_snapshot q-snap org/q 63000
	run -65 --separate-stderr hw-model download q-snap "${CAT[@]}"
	[ "$stderr" = "hw-model: catalog entry 'q-snap': the hub's total size (over 20 % off) differs from the catalog's" ]
	catalog_snapshot q-snap org/q 62000
	run -0 hw-model download q-snap "${CAT[@]}"
	rm -rf .heartwood
	catalog_snapshot q-snap org/q 42000
	run -0 hw-model download q-snap "${CAT[@]}"
}

@test "download CATALOG-ID: a snapshot without weights at the commit is refused" {
	mksnap org/q
	rm "$HUB/org/q/files/model.safetensors"
	repo_info org/q '.config.model_type = "qwen3"'
	catalog_snapshot q-snap org/q 100
	hub_start
	run -65 --separate-stderr hw-model download q-snap "${CAT[@]}"
	[ "$stderr" = "hw-model: catalog entry 'q-snap': the hub lists no config.json and safetensors weights at commit '$SHA'" ]
}

@test "download CATALOG-ID: a snapshot file whose bytes differ from the hub's lfs.sha256 is refused" {
	mksnap org/q
	catalog_snapshot q-snap org/q 50000
	behave "{\"bytes\":{\"model.safetensors\":\"$(head -c 50000 /dev/zero | tr '\0' a)\"}}"
	hub_start
	run -65 --separate-stderr hw-model download q-snap "${CAT[@]}"
	[[ "$stderr" == "hw-model: 'model.safetensors': SHA-256 "*", not the published "* ]]
	nothing_published
}

@test "download CATALOG-ID: killed at every stage, the next run gets exactly the right bytes" {
	SIZE=200000 mkrepo org/tiny
	catalog_gguf tiny-gguf org/tiny tiny-Q4_K_M.gguf
	hub_start
	want=$(sha256sum <"$HUB/org/tiny/files/tiny-Q4_K_M.gguf")
	for ((n = 1; n < 400; n++)); do
		rm -rf .heartwood
		st=0
		HW_FAULT_KILL_AT=$n hw-model download tiny-gguf "${CAT[@]}" >/dev/null 2>&1 || st=$?
		if [ "$st" -eq 0 ]; then break; fi
		[ "$st" -eq 137 ]
		run hw-model download tiny-gguf "${CAT[@]}"
		[ "$status" -eq 0 ]
		[ "$(sha256sum <"$(published tiny-gguf)/tiny-Q4_K_M.gguf")" = "$want" ]
		(cd "$(published tiny-gguf)" && sha256sum -c --quiet SHA256SUMS)
		[ ! -e .heartwood/models/.tiny-gguf.partial ]
		[ ! -e .heartwood/models/.tiny-gguf.partial.json ]
	done
	[ "$n" -gt 10 ]
	[ "$n" -lt 400 ]
}
