#!/usr/bin/env bats
# Canonical JSON against Python's json.dumps(sort_keys=True,
# separators=(",",":"), ensure_ascii=True) on many random values: floats of
# every magnitude, huge integers, strings from the whole of Unicode, and
# nested objects whose keys sort differently by byte and by UTF-16 unit.

load lib

setup_file() {
	make -s -C "$HW_ROOT" t/unit/json_test >/dev/null
}

@test "canonical: 20,000 random values encode exactly as Python does" {
	python3 - >cases.jsonl <<'PY'
import json, random, struct
r = random.Random(20261202)
def rfloat():
    k = r.random()
    if k < 0.4:
        return struct.unpack("<d", struct.pack("<Q", r.getrandbits(64)))[0]
    if k < 0.7:
        return r.uniform(-1, 1) * 10 ** r.randint(-30, 30)
    return round(r.uniform(-1e6, 1e6), r.randint(0, 6))
def rstr():
    out = []
    for _ in range(r.randint(0, 12)):
        k = r.random()
        if k < 0.4: out.append(chr(r.randint(0, 0x7f)))
        elif k < 0.7: out.append(chr(r.randint(0x80, 0xffff)))
        else: out.append(chr(r.randint(0x10000, 0x10ffff)))
    s = "".join(out)
    return s.encode("utf-8", "surrogatepass").decode("utf-8", "replace")
def rval(d=0):
    k = r.random()
    if d > 3 or k < 0.25:
        f = rfloat()
        return f if f == f and abs(f) != float("inf") else 0.5
    if k < 0.4: return r.randint(-2**200, 2**200)
    if k < 0.6: return rstr()
    if k < 0.7: return r.choice([True, False, None])
    if k < 0.85: return [rval(d + 1) for _ in range(r.randint(0, 4))]
    return {rstr(): rval(d + 1) for _ in range(r.randint(0, 5))}
for _ in range(20000):
    v = rval()
    # the input is deliberately not canonical: raw UTF-8, spaces, unsorted
    print(json.dumps({"in": json.dumps(v, ensure_ascii=False, indent=None),
                      "want": json.dumps(v, sort_keys=True, separators=(",", ":"), ensure_ascii=True)}))
PY
	python3 -c '
import json, sys
for l in open("cases.jsonl"):
    print(json.loads(l)["in"])' >in.jsonl
	python3 -c '
import json
for l in open("cases.jsonl"):
    print(json.loads(l)["want"])' >want.jsonl
	"$HW_ROOT/t/unit/json_test" --canon <in.jsonl >got.jsonl
	diff want.jsonl got.jsonl | head -20
	cmp want.jsonl got.jsonl
}

@test "canonical: invalid input is reported, not guessed" {
	printf '%s\n' '[1,' '{"a":NaN}' '"\ud800\udc00x"' >in.jsonl
	run -1 "$HW_ROOT/t/unit/json_test" --canon <in.jsonl
	[ "${lines[0]}" = "ERROR unexpected end of input at byte 5" ]
	[ "${lines[1]}" = "ERROR invalid JSON value at byte 6" ]
	[ "${lines[2]}" = '"\ud800\udc00x"' ]
}

@test "canonical: 20,000 mutated inputs are accepted only as Python accepts them" {
	python3 - "$HW_ROOT/t/fixtures/reference" >in.jsonl <<'PY'
import json, random, sys
r = random.Random(7)
d = sys.argv[1]
seeds = [json.loads(l)["input"] for l in open(d + "/canonical-json.jsonl")]
seeds.append(open(d + "/session-commit-v1.json").read().strip())
out = []
for _ in range(20000):
    s = bytearray(r.choice(seeds).encode())
    for _ in range(r.randint(1, 6)):
        if not s:
            break
        p, k = r.randrange(len(s)), r.random()
        if k < 0.3: s[p] = r.randrange(256)
        elif k < 0.5: del s[p]
        elif k < 0.7: s.insert(p, r.choice(b'{}[]",:\\u0123456789eE.-+ \x00\xff\xc3\xed'))
        else: s[p:p] = s[r.randrange(len(s)):][:r.randint(1, 20)]
    out.append(bytes(s).replace(b"\n", b" "))
sys.stdout.buffer.write(b"\n".join(out) + b"\n")
PY
	"$HW_ROOT/t/unit/json_test" --canon <in.jsonl >out.jsonl || true
	python3 - <<'PY'
import json
ins = open("in.jsonl", "rb").read().split(b"\n")[:-1]
outs = open("out.jsonl", "rb").read().split(b"\n")[:-1]
assert len(ins) == len(outs) == 20000
accepted = 0
for i, o in zip(ins, outs):
    try:
        py = json.dumps(json.loads(i.decode("utf-8")), sort_keys=True,
                        separators=(",", ":"), ensure_ascii=True).encode()
    except Exception:
        py = None
    if o.startswith(b"ERROR"):
        # stricter than Python only by design: duplicate keys, overflow
        assert py is None or b"duplicate key" in o or b"out of range" in o, (i, o)
    else:
        accepted += 1
        assert py == o, (i, o, py)
assert accepted > 1000, accepted
print(accepted)
PY
}
