#!/usr/bin/env python3
"""bundle.py - a small writer of heartwood model bundles (reference §2),
for the tests of hw-model bundle: Python's zipfile, STORED members, fixed
times and modes, the canonical manifest first.

  bundle.py gguf OUT          a GGUF bundle of one small file
  bundle.py vllm OUT          a vLLM snapshot bundle
  bundle.py LIE OUT           a hostile bundle (see LIES)
  bundle.py check BUNDLE      read a bundle with zipfile, check each hash
"""
import hashlib
import json
import stat
import sys
import zipfile

SHA = "0123456789abcdef0123456789abcdef01234567"
NULLS = ["maximum_context_window", "minimum_resource_envelope",
         "recommended_resource_envelope", "recommended_cpu_count",
         "startup_seconds_min", "startup_seconds_max", "allow_patterns",
         "ignore_patterns", "qualification_test", "qualification_date",
         "qualification_evidence", "model_type", "precision"]


def canon(v):
    return (json.dumps(v, sort_keys=True, separators=(",", ":"),
                       ensure_ascii=True) + "\n").encode()


def model(runtime, files, size):
    m = {k: None for k in NULLS}
    gguf = runtime == "llama-cpp"
    m.update({
        "model_id": "hf-tiny-0123456789ab", "label": "tiny \u00fc\U0001F600",
        "purpose": "coding-agent", "runtime": runtime,
        "source_repository": "org/tiny", "source_revision": SHA,
        "source_path": files[0][0] if gguf else None,
        "artifact_sha256": hashlib.sha256(files[0][1]).hexdigest()
        if gguf else None,
        "size_bytes": size, "minimum_free_bytes": size,
        "license_posture": "Apache-2.0", "license_id": "Apache-2.0",
        "catalog_source": "catalog", "tier": None if gguf else "standard",
        "context_window": 32768,
        "minimum_gpu_count": None if gguf else 1,
        "minimum_gpu_memory_bytes": None if gguf else 16000000000,
        "recommended_ram_bytes": 17179869184,
        "recommended_disk_bytes": 3 * size,
        "tool_call_parser": None if gguf else "hermes",
        "tensor_parallel_size": None if gguf else 1,
        "download_policy": None if gguf else "transformers-safetensors",
        "qualification": "qualified", "validated_platforms": ["terra"],
        "qualification_test": "smoke", "qualification_date": "2026-01-01",
        "qualification_evidence": "log"})
    return m


def files_of(kind):
    if kind == "gguf":
        return "llama-cpp", [("tiny-Q4_K_M.gguf", b"GGUF" + bytes(range(256)) * 40)]
    fs = [("config.json", b'{"model_type":"qwen3"}\n'),
          ("model.safetensors", bytes(range(256)) * 20),
          ("tokenizer/vocab.json", b"{}\n")]
    sums = "".join("%s  %s\n" % (hashlib.sha256(d).hexdigest(), p)
                   for p, d in sorted(fs))
    fs.append(("SHA256SUMS", sums.encode()))
    return "vllm", sorted(fs)


def info(name, mode=0o100600):
    zi = zipfile.ZipInfo(name, (1980, 1, 1, 0, 0, 0))
    zi.create_system = 3
    zi.external_attr = mode << 16
    zi.compress_type = zipfile.ZIP_STORED
    return zi


def write(out, kind, lie=None):
    runtime, fs = files_of(kind)
    if lie == "sums":       # SHA256SUMS lists another digest for config.json
        cfg = hashlib.sha256(dict(fs)["config.json"]).hexdigest().encode()
        fs = [(p, d.replace(cfg, b"0" * 64) if p == "SHA256SUMS" else d)
              for p, d in fs]
    size = sum(len(d) for _, d in fs)
    man = {"schema_version": "heartwood.model-bundle.v1",
           "runtime_profile": "llama-cpp-cpu" if kind == "gguf"
           else "vllm-cuda",
           "model": model(runtime, fs, size),
           "files": [{"path": p, "size_bytes": len(d),
                      "sha256": hashlib.sha256(d).hexdigest()}
                     for p, d in fs],
           "total_size_bytes": size}
    members = [("model/" + p, d) for p, d in fs]
    extra = {}
    if lie == "traversal":
        members[0] = ("model/../evil.gguf", members[0][1])
    elif lie == "absolute":
        members[0] = ("/etc/evil.gguf", members[0][1])
    elif lie == "duplicate":
        members.append(members[0])
    elif lie == "casefold":
        members.append(("model/CONFIG.json", b"{}"))
    elif lie == "extra":
        members.append(("model/extra.txt", b"x"))
    elif lie == "missing":
        members.pop()
    elif lie == "size":
        members[0] = (members[0][0], members[0][1] + b"x")
    elif lie == "bytes":
        d = bytearray(members[0][1])
        d[-1] ^= 1
        members[0] = (members[0][0], bytes(d))
    elif lie == "unknown-key":
        man["model"]["favourite_colour"] = "green"
    elif lie == "big-manifest":
        man["model"]["label"] = "x" * (1 << 20)
    elif lie == "noncanonical":
        extra["manifest"] = json.dumps(man, indent=1).encode()
    elif lie == "total":
        man["total_size_bytes"] += 1
    elif lie == "qualified":
        pass
    mb = extra.get("manifest", canon(man))
    with zipfile.ZipFile(out, "w", allowZip64=True) as z:
        z.writestr(info("heartwood-model-bundle.json"), mb)
        for i, (name, data) in enumerate(members):
            zi = info(name)
            if lie == "compressed" and i == 0:
                zi.compress_type = zipfile.ZIP_DEFLATED
            if lie == "symlink" and i == 0:
                zi.external_attr = (stat.S_IFLNK | 0o777) << 16
            z.writestr(zi, data)
        if lie == "directory":
            z.writestr(info("model/sub/", 0o40700), b"")
        if lie == "entries":
            for i in range(100001):
                z.writestr(info("model/f%d" % i), b"")
    if lie == "method":
        # a STORED member relabelled as deflated: the sizes still agree
        b = bytearray(open(out, "rb").read())
        loc = b.find(b"PK\x03\x04", 4)
        cd = b.find(b"PK\x01\x02", b.find(b"PK\x01\x02") + 4)
        b[loc + 8] = 8
        b[cd + 10] = 8
        open(out, "wb").write(bytes(b))
    if lie == "encrypted":
        # zipfile clears flag_bits when it writes: set bit 0 (encrypted)
        # in the first model member's local header and directory entry
        b = bytearray(open(out, "rb").read())
        loc = b.find(b"PK\x03\x04", 4)
        cd = b.find(b"PK\x01\x02", b.find(b"PK\x01\x02") + 4)
        b[loc + 6] |= 1
        b[cd + 8] |= 1
        open(out, "wb").write(bytes(b))
    if lie == "truncated-cd":
        b = open(out, "rb").read()
        end = b.rfind(b"PK\x05\x06")
        open(out, "wb").write(b[:end - 10] + b[end:])


def check(path):
    z = zipfile.ZipFile(path)
    names = [i.filename for i in z.infolist()]
    assert names[0] == "heartwood-model-bundle.json", names
    man = json.loads(z.read(names[0]))
    assert z.read(names[0]) == canon(man)
    for f in man["files"]:
        h, n = hashlib.sha256(), 0
        with z.open("model/" + f["path"]) as r:
            while chunk := r.read(1 << 20):
                h.update(chunk)
                n += len(chunk)
        assert h.hexdigest() == f["sha256"], f["path"]
        assert n == f["size_bytes"]
    for i in z.infolist():
        assert i.compress_type == zipfile.ZIP_STORED
        assert i.date_time == (1980, 1, 1, 0, 0, 0)
        assert i.create_system == 3
        assert i.external_attr >> 16 == 0o100600, oct(i.external_attr)
    print(len(man["files"]))


if __name__ == "__main__":
    what, out = sys.argv[1], sys.argv[2]
    if what == "check":
        check(out)
    elif what in ("gguf", "vllm"):
        write(out, what)
    else:
        write(out, "vllm" if what in ("casefold", "sums") else "gguf", what)
