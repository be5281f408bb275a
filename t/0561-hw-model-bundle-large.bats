#!/usr/bin/env bats
# hw-model bundle past ZIP's classic limits: a sparse GGUF model of 4 GiB
# and 1 MiB (a member and offsets past 4 GiB, so ZIP64), and a snapshot
# of more than 65,535 files (refused: its manifest would pass 1 MiB).
# The model is exported, read back by Python's zipfile with its hash
# checked, and imported into another project with the same bytes; that
# writes about 12 GiB.  Nothing here is timed.

load lib

SHA=0123456789abcdef0123456789abcdef01234567

bundle() { python3 "$HW_ROOT/t/bundle.py" "$@"; }

# sha256 FILE - its SHA-256 in hex, by libcrypto (sha256sum takes six
# times as long over 4 GiB)
sha256() { openssl dgst -sha256 -r "$1" | cut -d' ' -f1; }

@test "ZIP64: a sparse GGUF model of 4 GiB and 1 MiB is exported and imported, byte for byte" {
	local size=4296015872	# 4 GiB and 1 MiB: past 0xffffffff, ZIP's classic bound
	{ printf GGUF; head -c 4096 /dev/urandom; } >m-Q4_K_M.gguf
	truncate -s $size m-Q4_K_M.gguf
	want=$(sha256 m-Q4_K_M.gguf)
	id=$(hw-model import m-Q4_K_M.gguf --source-repository org/m \
		--source-revision "$SHA" --license-posture Apache-2.0 \
		--context-window 32768 --progress none | jq -r .model_id)
	rm m-Q4_K_M.gguf
	run -0 --separate-stderr hw-model bundle export "$id" big.zip --progress none
	[ "$(stat -c %s big.zip)" -gt $size ]
	# zipfile needs the ZIP64 records to read a member this size
	[ "$(bundle check big.zip)" = 1 ]
	[ "$(python3 -c 'import zipfile,sys; i = zipfile.ZipFile(sys.argv[1]).getinfo("model/m-Q4_K_M.gguf"); print(i.file_size, i.compress_size)' big.zip)" = "$size $size" ]
	d=$(hw-model bundle inspect big.zip | jq -r .manifest_sha256)
	rm -r .heartwood
	mkdir other
	cd other
	run -0 --separate-stderr hw-model bundle import ../big.zip --approve "$d" --progress none
	[ "$(jq -r .model_id <<<"$output")" = "$id" ]
	[ "$(sha256 ".heartwood/models/$id/m-Q4_K_M.gguf")" = "$want" ]
	[ "$(stat -c %s ".heartwood/models/$id/m-Q4_K_M.gguf")" = $size ]
}

# More than 65,535 entries cannot be exported: each file's manifest entry
# (path, SHA-256, size) takes about 100 bytes, and the manifest may not
# pass 1 MiB (reference 2), so a bundle holds about 9,000 files at most.
# The reader's ZIP64 entry count is shown by t/0560's "more than 100001
# entries"; here, such a snapshot is refused whole, with nothing left.
@test "ZIP64: a snapshot of 65,539 files is refused for its manifest's size, and nothing is left" {
	python3 - <<'PY'
import json, os
os.makedirs("snap/shards", exist_ok=True)
json.dump({"architectures": ["Q"], "model_type": "qwen3",
           "max_position_embeddings": 32768}, open("snap/config.json", "w"))
open("snap/model.safetensors", "wb").write(os.urandom(4096))
for i in range(65537):
    d = "snap/shards/%03d" % (i // 1000)
    os.makedirs(d, exist_ok=True)
    open("%s/%05d.json" % (d, i), "w").write('{"n":%d}\n' % i)
PY
	id=$(hw-model import snap --source-repository org/q --source-revision "$SHA" \
		--license-posture MIT --progress none | jq -r .model_id)
	run -65 --separate-stderr hw-model bundle export "$id" many.zip --progress none
	[ "$stderr" = "hw-model: '$id': a manifest over 1 MiB" ]
	[ "$(ls -A | sort | paste -sd ' ')" = ".heartwood snap" ]
}
