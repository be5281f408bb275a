#!/usr/bin/python3
"""sign_check.py PUBLIC_KEY.pem ALGORITHM MESSAGE_FILE SIGNATURE_FILE

An independent check of heartwood's signatures, using python3-cryptography
alone (Debian 12: version 38).  ALGORITHM is "ed25519" or
"ecdsa-p256-sha256" (SHA-256, DER-encoded ECDSA signature); the message
and signature files hold raw bytes.

Exit status: 0 when the signature verifies, and then the key's fingerprint
("sha256:" + hex of the SHA-256 of its DER SubjectPublicKeyInfo) is printed
on stdout; 1 when it does not verify or the key is not of ALGORITHM; 2 on
bad usage or an unreadable key.  Reasons go to stderr.
"""
import hashlib
import sys

from cryptography.exceptions import InvalidSignature, UnsupportedAlgorithm
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519

ALGORITHMS = ("ed25519", "ecdsa-p256-sha256")


def fail(code, why):
    print("sign_check: " + why, file=sys.stderr)
    return code


def read(path):
    with open(path, "rb") as f:
        return f.read()


def verify(key, alg, msg, sig):
    """True when sig is alg's signature of msg by key."""
    try:
        if alg == "ed25519":
            if not isinstance(key, ed25519.Ed25519PublicKey):
                return False
            key.verify(sig, msg)
        else:
            if not isinstance(key, ec.EllipticCurvePublicKey) or \
                    key.curve.name != "secp256r1":
                return False
            key.verify(sig, msg, ec.ECDSA(hashes.SHA256()))
    except InvalidSignature:
        return False
    return True


def main(argv):
    if len(argv) != 5 or argv[2] not in ALGORITHMS:
        return fail(2, "usage: sign_check.py PUBLIC_KEY.pem "
                    "ed25519|ecdsa-p256-sha256 MESSAGE SIGNATURE")
    pem, alg, msgfile, sigfile = argv[1:]
    try:
        key = serialization.load_pem_public_key(read(pem))
        msg, sig = read(msgfile), read(sigfile)
    except (OSError, ValueError, UnsupportedAlgorithm) as e:
        return fail(2, "cannot read input: %s" % e)
    if not verify(key, alg, msg, sig):
        return fail(1, "%s signature does not verify" % alg)
    spki = key.public_bytes(serialization.Encoding.DER,
                            serialization.PublicFormat.SubjectPublicKeyInfo)
    print("sha256:" + hashlib.sha256(spki).hexdigest())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
