#!/usr/bin/env python3
"""TileCache's smart crop (imgproxy's g:sm) against libvips' own (`vips smartcrop --interesting attention`).

Arguments: SERVICE_URL FILES_BASE KEY_HEX SALT_HEX. FILES_BASE serves Tests/TestSupport; every real photo there and
libavif's kodim23 is cropped to squares and to the other orientation's 2:3 or 3:2 box with one side the photo's own
(so neither tool scales: the answer is a plain crop), by the service (`rs:fill:W:H/g:sm`, PNG, the URL built and
signed by pyimgproxy from PyPI) and by libvips. Each
crop is found in the source (the offset whose pixels differ least), and the two windows compared: the distance between
their left (or top) edges as a share of the room the crop had to move in, and their overlap (intersection over union).
Prints a table; fails when the median share is above 0.25 or any crop overlaps libvips' by less than a third (a crop
on the other side of the picture).
"""
import io
import os
import statistics
import subprocess
import sys
import tempfile
import urllib.request

from PIL import Image, ImageChops, ImageStat
from pyimgproxy import ImgProxy  # github.com/developersociety/pyimgproxy

service, files, key, salt = sys.argv[1:5]
root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "Tests", "TestSupport")


imgproxy = ImgProxy(url=service, key=key, salt=salt)


def locate(source, crop):
    """The (left, top) offset of `crop` in `source` where their pixels differ least: one axis moves (the other side is
    the source's own), compared on three lines across the crop."""
    source, crop = source.convert("RGB"), crop.convert("RGB")
    horizontal = crop.height == source.height
    room = (source.width - crop.width) if horizontal else (source.height - crop.height)
    best = None
    for offset in range(room + 1):
        score = 0
        for fraction in (0.25, 0.5, 0.75):
            if horizontal:
                y = int(crop.height * fraction)
                ours, theirs = crop.crop((0, y, crop.width, y + 1)), source.crop((offset, y, offset + crop.width, y + 1))
            else:
                x = int(crop.width * fraction)
                ours, theirs = crop.crop((x, 0, x + 1, crop.height)), source.crop((x, offset, x + 1, offset + crop.height))
            score += sum(ImageStat.Stat(ImageChops.difference(ours, theirs)).sum)
        if best is None or score < best[0]:
            best = (score, offset)
    return (best[1], 0) if horizontal else (0, best[1])


def overlap(a, b, size):
    (al, at), (bl, bt), (w, h) = a, b, size
    iw, ih = max(0, w - abs(al - bl)), max(0, h - abs(at - bt))
    return iw * ih / (2 * w * h - iw * ih)


cases = [(f"photos/{name}", name) for name in sorted(os.listdir(os.path.join(root, "photos"))) if name.endswith(".jpg")]
cases.append(("avif/kodim23_yuv420_8bpc.avif", "kodim23_yuv420_8bpc.avif"))
rows, shares, failures = [], [], []
work = tempfile.mkdtemp(prefix="tilecache-smartcrop-")
for relative, name in cases:
    local = os.path.join(root, relative)
    if name.endswith(".avif"):  # vips reads AVIF through libheif; a PNG of Pillow's decoding is the same picture
        local_png = os.path.join(work, name + ".png")
        Image.open(local).convert("RGB").save(local_png)
        local = local_png
    source = Image.open(local).convert("RGB")
    width, height = source.size
    side = min(width, height)
    boxes = [(side, side), (height * 2 // 3, height) if width > height else (width, width * 2 // 3)]
    for box in boxes:
        url = imgproxy.image(f"{files}/{relative}").resize("fill", box[0], box[1]).gravity("sm").format("png").url
        with urllib.request.urlopen(url, timeout=60) as response:
            ours = Image.open(io.BytesIO(response.read()))
            ours.load()
        out = os.path.join(work, "vips.png")
        subprocess.run(["vips", "smartcrop", local, out, str(box[0]), str(box[1]), "--interesting", "attention"], check=True)
        theirs = Image.open(out)
        if ours.size != box or theirs.size != box:
            failures.append(f"{name} {box}: sizes {ours.size} and {theirs.size}")
            continue
        ours_at, theirs_at = locate(source, ours), locate(source, theirs)
        room = max(width - box[0], height - box[1])
        share = abs((ours_at[0] - theirs_at[0]) + (ours_at[1] - theirs_at[1])) / room if room else 0
        iou = overlap(ours_at, theirs_at, box)
        shares.append(share)
        if iou < 1 / 3:
            failures.append(f"{name} {box[0]}x{box[1]}: TileCache's crop at {ours_at} overlaps libvips' at {theirs_at} by {iou:.2f}")
        rows.append(f"| {name} | {width}x{height} | {box[0]}x{box[1]} | {ours_at} | {theirs_at} | {share:.2f} | {iou:.2f} |")

print("| photo | size | crop | TileCache's window (left, top) | libvips' window | offset difference / room | overlap (IoU) |")
print("|---|---|---|---|---|---|---|")
print("\n".join(rows))
median = statistics.median(shares) if shares else 1
print(f"smartcrop check: {len(rows)} crops, median offset difference {median:.2f} of the room, "
      f"worst overlap {min((float(r.split('|')[7]) for r in rows), default=0):.2f}")
if median > 0.25:
    failures.append(f"the median offset difference is {median:.2f} of the room (> 0.25)")
if failures:
    print("\n".join(failures), file=sys.stderr)
    sys.exit(f"smartcrop check FAILED: {len(failures)} failures")
print("smartcrop check: passed")
