#!/usr/bin/env python3
"""Peer for comparison 3: validate every file in a directory with Pillow (header, then full decode), printing the
broken ones. Usage: peer_pillow_inspect.py DIR"""
import os
import sys

from PIL import Image

directory = sys.argv[1]
broken = 0
for name in sorted(os.listdir(directory)):
    path = os.path.join(directory, name)
    try:
        with Image.open(path) as image:
            image.verify()
        with Image.open(path) as image:
            image.load()
    except Exception:
        broken += 1
print(f"{broken} broken", file=sys.stderr)
