#!/usr/bin/env bats
# hw-model bundle: export (deterministic bytes, read back by Python's
# zipfile), inspect (no side effects, the manifest digest, the unvalidated
# marking), import (the approved digest, staging, publish), bundles written
# by a small Python writer (t/bundle.py), and each hostile bundle refused
# with nothing written.

load lib

SHA=0123456789abcdef0123456789abcdef01234567
ZERO=0000000000000000000000000000000000000000000000000000000000000000

bundle() { python3 "$HW_ROOT/t/bundle.py" "$@"; }

# a_model: an imported GGUF model; sets ID
a_model() {
	{ printf GGUF; head -c 200000 /dev/urandom; } >m-Q4_K_M.gguf
	ID=$(hw-model import m-Q4_K_M.gguf --source-repository org/m \
		--source-revision "$SHA" --license-posture 'Apache-2.0' \
		--context-window 32768 | jq -r .model_id)
}

# digest_of BUNDLE: the manifest_sha256 inspect shows
digest_of() { hw-model bundle inspect "$1" | jq -r .manifest_sha256; }

@test "export: twice, in two time zones, byte-identical; zipfile reads it and its hashes match" {
	a_model
	run --separate-stderr hw-model bundle export "$ID" b1.zip
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	TZ=Asia/Tokyo hw-model bundle export "$ID" b2.zip >/dev/null
	cmp b1.zip b2.zip
	[ "$(bundle check b1.zip)" = 1 ]
	want=$(python3 -c 'import zipfile,hashlib,sys; print(hashlib.sha256(zipfile.ZipFile(sys.argv[1]).read("heartwood-model-bundle.json")).hexdigest())' b1.zip)
	[ "$(echo "$output" | jq -r .manifest_sha256)" = "$want" ]
	[ "$(digest_of b1.zip)" = "$want" ]
	[ "$(ls -A | sort | paste -sd ' ')" = ".heartwood b1.zip b2.zip m-Q4_K_M.gguf" ]
}

@test "export: a snapshot holds every file, SHA256SUMS and heartwood-model.json too" {
	mkdir -p snap/sub
	echo '{"architectures":["Q"],"model_type":"qwen3","max_position_embeddings":32768}' >snap/config.json
	head -c 3000 /dev/urandom >snap/model.safetensors
	echo '{}' >snap/sub/tokenizer.json
	id=$(hw-model import snap --source-repository org/q --source-revision "$SHA" \
		--license-posture MIT | jq -r .model_id)
	run hw-model bundle export "$id" s.zip
	[ "$status" -eq 0 ]
	[ "$(bundle check s.zip)" = 5 ]
	hw-model bundle inspect s.zip | jq -e '.runtime_profile == "vllm-cuda" and
		.model.tool_call_parser == "hermes" and .model.license_id == "MIT"'
}

@test "export: each file is read to verify it and once more into the bundle; the manifest takes the verified digests" {
	a_model
	# the verify reads the two files SHA256SUMS lists, and the manifest
	# reads none; the copy into the bundle reads the model again (no
	# fault point: not counted here) and checks it against the digest
	run -0 env HW_FAULT_TRACE=1 hw-model bundle export "$ID" b.zip
	[ "$(grep -c ' model-hash$' <<<"$output")" = 2 ]
	[ "$(bundle check b.zip)" = 1 ]
}

@test "export and import: --progress json reports each member, then it verified" {
	a_model
	run -0 --separate-stderr hw-model bundle export "$ID" b.zip --progress json
	[ "$(jq -c 'select(.event == "verified") | [.path, .bytes == .total]' <<<"$stderr")" = '["m-Q4_K_M.gguf",true]' ]
	[ "$(jq -r .event <<<"$stderr" | tail -1)" = verified ]
	d=$(digest_of b.zip)
	mkdir other
	cd other
	run -0 --separate-stderr hw-model bundle import ../b.zip --approve "$d" --progress json
	[ "$(jq -c 'select(.event == "verified") | [.path, .bytes, .total]' <<<"$stderr")" = '["m-Q4_K_M.gguf",200004,200004]' ]
	run -0 --separate-stderr hw-model bundle import ../b.zip --approve "$d" --progress none
	[ -z "$stderr" ]
	run -2 --separate-stderr hw-model bundle inspect ../b.zip --progress json
	run -2 --separate-stderr hw-model bundle export "$ID" c.zip --progress loud
}

@test "export: an output that exists is refused" {
	a_model
	echo x >b.zip
	run -1 --separate-stderr hw-model bundle export "$ID" b.zip
	[ "$stderr" = "hw-model: cannot export to 'b.zip': it exists" ]
	[ "$(cat b.zip)" = x ]
}

@test "export: an unknown model is 66" {
	run -66 --separate-stderr hw-model bundle export imported-0000000000000000 b.zip
	[ "$stderr" = "hw-model: no model 'imported-0000000000000000' in '.heartwood/models'" ]
	[ ! -e b.zip ]
}

@test "export: a model whose bytes changed is refused and nothing is written" {
	a_model
	printf 'X' | dd of=".heartwood/models/$ID/m-Q4_K_M.gguf" conv=notrunc 2>/dev/null
	run -65 --separate-stderr hw-model bundle export "$ID" b.zip
	[ "$stderr" = "hw-model: '.heartwood/models/$ID/m-Q4_K_M.gguf': SHA-256 differs from SHA256SUMS" ]
	[ "$(ls -A | sort | paste -sd ' ')" = ".heartwood m-Q4_K_M.gguf" ]
}

@test "inspect: no side effects; a bundle's own qualification is not believed" {
	bundle gguf g.zip
	run --separate-stderr hw-model bundle inspect g.zip
	[ "$status" -eq 0 ]
	[ ! -e .heartwood ]
	echo "$output" | jq -e '.file_count == 1 and .runtime_profile == "llama-cpp-cpu" and
		.model.qualification == "unvalidated" and .model.validated_platforms == [] and
		.model.qualification_evidence == null and
		.model.catalog_source == "transferred" and (.warnings | length) == 3 and
		.model.label == "tiny \u00fc\ud83d\ude00"'
}

@test "import: a bundle Python wrote, with the approved digest" {
	bundle gguf g.zip
	d=$(digest_of g.zip)
	run --separate-stderr hw-model bundle import g.zip --approve "$d"
	[ "$status" -eq 0 ]
	echo "$output" | jq -e --arg d "$d" '.model_id == "hf-tiny-0123456789ab" and
		.manifest_sha256 == $d and .already_present == false'
	m=.heartwood/models/hf-tiny-0123456789ab
	(cd "$m" && sha256sum -c --quiet SHA256SUMS)
	jq -e --arg d "$d" '.bundle_manifest_sha256 == $d and
		.qualification == "unvalidated"' "$m/heartwood-model.json"
	[ "$(ls -A .heartwood/models | paste -sd ' ')" = ".hf-tiny-0123456789ab.lock hf-tiny-0123456789ab" ]
	run hw-model bundle import g.zip --approve "$d"
	[ "$status" -eq 0 ]
	echo "$output" | jq -e '.already_present == true'
}

@test "import: a vLLM bundle Python wrote, checked against its SHA256SUMS" {
	bundle vllm v.zip
	run hw-model bundle import v.zip --approve "$(digest_of v.zip)"
	[ "$status" -eq 0 ]
	[ -f .heartwood/models/hf-tiny-0123456789ab/tokenizer/vocab.json ]
}

@test "import: exported here, imported in another project, the same bytes" {
	a_model
	hw-model bundle export "$ID" b.zip >/dev/null
	mkdir other
	cd other
	run hw-model bundle import ../b.zip --approve "$(digest_of ../b.zip)"
	[ "$status" -eq 0 ]
	cmp ".heartwood/models/$ID/m-Q4_K_M.gguf" ../m-Q4_K_M.gguf
}

@test "import: a digest other than the manifest's is refused before anything is written" {
	bundle gguf g.zip
	d=$(digest_of g.zip)
	run -1 --separate-stderr hw-model bundle import g.zip --approve "$ZERO"
	[ "$stderr" = "hw-model: refusing 'g.zip': its manifest_sha256 is $d, not the approved $ZERO" ]
	[ ! -e .heartwood ]
}

@test "import: --approve must be a digest" {
	bundle gguf g.zip
	run -2 --separate-stderr hw-model bundle import g.zip --approve yes
	[ "$stderr" = "hw-model: invalid --approve 'yes': expected the 64 hex digits of manifest_sha256" ]
	run -2 hw-model bundle import g.zip
}

@test "import: a member whose bytes differ from the manifest leaves nothing" {
	bundle bytes b.zip
	run -65 --separate-stderr hw-model bundle import b.zip --approve "$(digest_of b.zip)"
	[ "$stderr" = "hw-model: invalid bundle 'b.zip': the bytes of 'tiny-Q4_K_M.gguf' differ from the manifest's SHA-256" ]
	[ "$(ls -A .heartwood/models | paste -sd ' ')" = ".hf-tiny-0123456789ab.lock" ]
}

@test "import: a snapshot whose SHA256SUMS lists another digest than its bytes is refused, nothing published" {
	bundle sums s.zip
	d=$(digest_of s.zip)
	run -65 --separate-stderr hw-model bundle import s.zip --approve "$d"
	[ "$stderr" = "hw-model: '.heartwood/models/.hf-tiny-0123456789ab.import-partial/config.json': SHA-256 differs from SHA256SUMS" ]
	[ -z "$(ls -A .heartwood/models | grep -v '^\.hf-tiny-0123456789ab\.lock$')" ]
}

@test "hostile: a symlink given as the bundle" {
	bundle gguf g.zip
	ln -s g.zip l.zip
	run -65 --separate-stderr hw-model bundle inspect l.zip
	[ "$stderr" = "hw-model: cannot open bundle 'l.zip': a symlink" ]
}

# hostile LIE MESSAGE: the bundle is refused by inspect and import, 65,
# with MESSAGE, and nothing is written
hostile() {
	bundle "$1" h.zip
	run -65 --separate-stderr hw-model bundle inspect h.zip
	[ "$stderr" = "hw-model: $2" ]
	run -65 --separate-stderr hw-model bundle import h.zip --approve "$ZERO"
	[ "$stderr" = "hw-model: $2" ]
	[ ! -e .heartwood ]
}

@test "hostile: a ../ member name" {
	hostile traversal "invalid bundle 'h.zip': an unsafe member name 'model/../evil.gguf'"
}

@test "hostile: an absolute member name" {
	hostile absolute "invalid bundle 'h.zip': an unsafe member name '/etc/evil.gguf'"
}

@test "hostile: a duplicate member" {
	hostile duplicate "invalid bundle 'h.zip': a duplicate member 'model/tiny-Q4_K_M.gguf'"
}

@test "hostile: members that differ only in case" {
	hostile casefold "invalid bundle 'h.zip': a member whose name differs only in case from another 'model/CONFIG.json'"
}

@test "hostile: a compressed member" {
	hostile compressed "invalid bundle 'h.zip': a compressed member 'model/tiny-Q4_K_M.gguf'"
}

@test "hostile: a member marked deflated whose sizes agree" {
	hostile method "invalid bundle 'h.zip': a compressed member 'model/tiny-Q4_K_M.gguf'"
}

@test "hostile: an encrypted member" {
	hostile encrypted "invalid bundle 'h.zip': an encrypted member 'model/tiny-Q4_K_M.gguf'"
}

@test "hostile: a symlink member" {
	hostile symlink "invalid bundle 'h.zip': a member that is not a regular file 'model/tiny-Q4_K_M.gguf'"
}

@test "hostile: a directory entry" {
	hostile directory "invalid bundle 'h.zip': a directory entry 'model/sub/'"
}

@test "hostile: an extra member" {
	hostile extra "invalid bundle 'h.zip': 3 members for 1 files and the manifest"
}

@test "hostile: a missing member" {
	hostile missing "invalid bundle 'h.zip': 1 members for 1 files and the manifest"
}

@test "hostile: a member size that differs from the manifest" {
	hostile size "invalid bundle 'h.zip': a member whose size differs from the manifest: 'tiny-Q4_K_M.gguf'"
}

@test "hostile: a manifest with an unknown key" {
	hostile unknown-key "invalid bundle manifest: model must have exactly its 37 keys"
}

@test "hostile: a manifest over 1 MiB" {
	hostile big-manifest "invalid bundle 'h.zip': a manifest over 1 MiB"
}

@test "hostile: a manifest not in canonical form" {
	hostile noncanonical "invalid bundle manifest: not in canonical form"
}

@test "hostile: a total that is not the sum of the files" {
	hostile total "invalid bundle manifest: total_size_bytes is not the sum of the files"
}

@test "hostile: a truncated central directory" {
	hostile truncated-cd "invalid bundle 'h.zip': a truncated central directory"
}

@test "hostile: more than 100001 entries" {
	hostile entries "invalid bundle 'h.zip': more than 100001 entries"
}

@test "hostile: a file that is not a ZIP" {
	echo 'not a zip' >h.zip
	run -65 --separate-stderr hw-model bundle inspect h.zip
	[ "$stderr" = "hw-model: invalid bundle 'h.zip': too short for a ZIP file" ]
}
