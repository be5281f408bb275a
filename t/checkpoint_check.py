#!/usr/bin/python3
"""checkpoint_check.py BUNDLE PUBLIC_KEY.pem

An independent check of a checkpoint bundle's signature with Debian's
python3-cryptography alone: rebuild the signed bytes (the domain string, a
NUL byte, the canonical JSON of the signature fields and the statement)
and verify them with the public key.  Prints "ok" and exits 0, or raises.
"""
import base64
import json
import sys

from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519

cp = json.load(open(sys.argv[1] + "/checkpoint.json"))
sig = cp["signature"]
body = {k: sig[k] for k in ("algorithm", "key_id", "key_version",
                            "public_key_sha256", "signer_id")}
body["statement"] = cp["statement"]
msg = b"heartwood.audit-checkpoint-signature.v1\x00" + json.dumps(
    body, sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode()
key = serialization.load_pem_public_key(open(sys.argv[2], "rb").read())
raw = base64.b64decode(sig["value"], validate=True)
if isinstance(key, ed25519.Ed25519PublicKey):
    key.verify(raw, msg)
else:
    key.verify(raw, msg, ec.ECDSA(hashes.SHA256()))
print("ok")
