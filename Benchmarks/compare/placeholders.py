#!/usr/bin/env python3
"""Placeholders per second: TileCache against the reference encoders from PyPI, on the same photos.

Usage: placeholders.py TILECACHE PHOTO_DIR OUT_JSON [ROUNDS]
  (make bench-compare runs it; needs blurhash 1.1.5, thumbhash-rs 0.1.0 and Pillow in the Python running it.)

COPIES copies of every photo in PHOTO_DIR (the real photos of Tests/TestSupport/photos), in one directory. Each tool
makes the placeholders of every file in one process on one thread, start-up included, and is timed whole:
- TileCache: `tilecache inspect --placeholders -j 1`: decode (a JPEG shrunk on load), sRGB, fit into 32 px, then
  BlurHash, ThumbHash, the average and dominant colours and a 16-px WebP LQIP, as `serve` makes them.
- blurhash (PyPI, pure Python, the reference's port) and thumbhash-rs (PyPI, the reference's own Rust encoder): Pillow
  opens each file with `draft` (libjpeg's shrink on load, as TileCache does), converts to RGB(A), fits it into 32 px
  (`thumbnail`, the size the references' READMEs advise against encoding large images), then encodes. Two peers:
  BlurHash alone and ThumbHash alone, so each is the cheapest form of its hash.
Medians of ROUNDS alternating rounds; the result is placeholders per second (files / median wall time).
"""
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

COPIES = 20

PEER = r"""
import os, sys, warnings
warnings.simplefilter("ignore")  # Pillow 12's deprecation of getdata, which blurhash 1.1.5's rows are made from
from PIL import Image
kind = sys.argv[1]
if kind == "blurhash":
    import blurhash
else:
    import thumbhash
for name in sorted(os.listdir(sys.argv[2])):
    image = Image.open(os.path.join(sys.argv[2], name))
    image.draft("RGB", (64, 64))
    image = image.convert("RGBA" if kind == "thumbhash" else "RGB")
    image.thumbnail((32, 32))
    width, height = image.size
    if kind == "blurhash":
        # blurhash 1.1.5 takes rows of pixels; components follow the aspect ratio (4 on the longer side), as TileCache's.
        pixels = list(image.getdata())
        rows = [pixels[y * width:(y + 1) * width] for y in range(height)]
        cx, cy = (4, max(1, round(4 * height / width))) if width >= height else (max(1, round(4 * width / height)), 4)
        blurhash.encode(rows, cx, cy)
    else:
        thumbhash.rgba_to_thumb_hash(width, height, image.tobytes())
"""


def timed(arguments):
    started = time.perf_counter()
    subprocess.run(arguments, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - started


def main():
    binary, photo_dir, out_json = (os.path.abspath(arg) for arg in sys.argv[1:4])
    rounds = int(sys.argv[4]) if len(sys.argv) > 4 else 5
    work = tempfile.mkdtemp(prefix="tilecache-placeholders.")
    try:
        files = os.path.join(work, "files")
        os.makedirs(files)
        photos = sorted(name for name in os.listdir(photo_dir) if name.lower().endswith((".jpg", ".jpeg", ".png")))
        for copy in range(COPIES):
            for name in photos:
                shutil.copy(os.path.join(photo_dir, name), os.path.join(files, f"{copy:03d}-{name}"))
        count = len(os.listdir(files))
        peer = os.path.join(work, "peer.py")
        with open(peer, "w") as file:
            file.write(PEER)
        runs = {
            "tilecache": [binary, "inspect", "--placeholders", "-j", "1", "--format", "json", files],
            "blurhash (PyPI)": [sys.executable, peer, "blurhash", files],
            "thumbhash-rs (PyPI)": [sys.executable, peer, "thumbhash", files],
        }
        for arguments in runs.values():  # warm the page cache and check each runs
            timed(arguments)
        times = {name: [] for name in runs}
        for _ in range(rounds):
            for name, arguments in runs.items():
                times[name].append(timed(arguments))
        medians = {name: statistics.median(values) for name, values in times.items()}
        result = {
            "files": count, "photos": len(photos), "rounds": rounds,
            "rates": {name: count / seconds for name, seconds in medians.items()},
            "seconds": times,
        }
        with open(out_json, "w") as file:
            json.dump(result, file, indent=1)
        for name, rate in result["rates"].items():
            print(f"placeholders: {name}: {rate:.1f}/s (median {medians[name]:.3f} s for {count} files)")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
