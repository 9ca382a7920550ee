#!/usr/bin/env python3
"""The signature of a variant URL as a front end computes it with Python's hmac module (no code of ours): HMAC-SHA256
with KEY over SALT + PATH + "?" + the options sorted by name, URL-safe base64 without padding. Writes it to OUT.

Usage: variant_signature.py KEY_HEX SALT_HEX PATH OPTIONS OUT (ImageOptionsTests: signing)."""
import base64
import hashlib
import hmac
import sys

key, salt, path, options, out = bytes.fromhex(sys.argv[1]), bytes.fromhex(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]
query = "&".join(sorted(options.split("&"), key=lambda pair: pair.split("=")[0]))
digest = hmac.new(key, salt + (path + "?" + query).encode(), hashlib.sha256).digest()
with open(out, "w") as f:
    f.write(base64.urlsafe_b64encode(digest).rstrip(b"=").decode())
