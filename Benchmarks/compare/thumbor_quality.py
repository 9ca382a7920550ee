#!/usr/bin/env python3
"""How close TileCache's and thumbor's thumbnails are to a full-size Lanczos reduce: what shrink on load costs each.

Usage: thumbor_quality.py TILECACHE THUMBOR PHOTO_DIR   (the Python running it needs Pillow and numpy:
       .build/compare-venv after `make bench-compare`, whose thumbor it can use too)

Both servers fetch the JPEGs in PHOTO_DIR from a file server on loopback and make 64- and 128-px-wide thumbnails at
quality 95 (so the encoders' loss is small): TileCache as `/_/rs:fit:W:0/q:95/plain/<source>` (shrink on load leaving
the reduce a factor of three), thumbor 7.8 as `/unsafe/Wx0/filters:quality(95)/<source>` (PIL's `draft`: the smallest
DCT scale still at least W wide). Each is compared with Pillow's LANCZOS reduce of the full decode (PSNR over RGB).
Pillow takes the pixels as they are: for a photo with a non-sRGB profile (rocket.jpg, Adobe RGB) the reference is not
converted, while TileCache converts to sRGB, so that row says nothing about the resize.
"""
import http.client, io, os, subprocess, sys, tempfile

import numpy
from PIL import Image

from bench_support import free_port, stop, wait_http

TILECACHE, THUMBOR, PHOTOS = sys.argv[1], sys.argv[2], sys.argv[3]
work = tempfile.mkdtemp(prefix="tilecache-thumbor-quality-")
processes = []


def fetch(port, path):
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    connection.request("GET", path)
    response = connection.getresponse()
    body = response.read()
    if response.status != 200:
        raise SystemExit(f"thumbor_quality: {path} gave {response.status}: {body[:200]!r}")
    return Image.open(io.BytesIO(body)).convert("RGB")


def psnr(image, reference):
    if image.size != reference.size:  # a row more or less by rounding
        image = image.resize(reference.size, Image.LANCZOS)
    difference = numpy.asarray(image, dtype=numpy.float64) - numpy.asarray(reference, dtype=numpy.float64)
    return 10 * numpy.log10(255 ** 2 / (difference ** 2).mean())


try:
    file_port, tc_port, thumbor_port = free_port(), free_port(), free_port()
    processes.append(subprocess.Popen([sys.executable, "-m", "http.server", str(file_port), "--bind", "127.0.0.1", "-d", PHOTOS],
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
    os.makedirs(os.path.join(work, "cache"))
    processes.append(subprocess.Popen([TILECACHE, "serve", "--port", str(tc_port), "--cache-dir", os.path.join(work, "cache"),
                                       "--db", os.path.join(work, "service.sqlite"), "--allowed-sources", f"http://127.0.0.1:{file_port}/",
                                       "--allow-private-sources"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
    with open(os.path.join(work, "thumbor.conf"), "w") as file:
        file.write("ALLOW_UNSAFE_URL = True\n")
    processes.append(subprocess.Popen([THUMBOR, "--port", str(thumbor_port), "--ip", "127.0.0.1", "--conf", os.path.join(work, "thumbor.conf")],
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
    wait_http(file_port, "/", "thumbor_quality")
    wait_http(tc_port, "/healthz", "thumbor_quality")
    wait_http(thumbor_port, "/healthcheck", "thumbor_quality")
    print("| photo | full size | width | TileCache PSNR | thumbor PSNR |\n|---|---|---|---|---|")
    for name in sorted(os.listdir(PHOTOS)):
        if not name.endswith(".jpg"):
            continue
        full = Image.open(os.path.join(PHOTOS, name)).convert("RGB")
        for width in (64, 128):
            reference = full.resize((width, round(full.height * width / full.width)), Image.LANCZOS)
            ours = fetch(tc_port, f"/_/rs:fit:{width}:0/q:95/plain/http://127.0.0.1:{file_port}/{name}")
            theirs = fetch(thumbor_port, f"/unsafe/{width}x0/filters:quality(95)/127.0.0.1:{file_port}/{name}")
            print(f"| {name} | {full.width}x{full.height} | {width} | {psnr(ours, reference):.2f} dB | {psnr(theirs, reference):.2f} dB |")
finally:
    stop(processes, work)
