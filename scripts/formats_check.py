#!/usr/bin/env python3
"""GIF and AVIF sources, AVIF and WebP outputs and Accept negotiation, through a real `tilecache serve`, judged by Pillow.

Arguments: SERVICE_URL FILES_BASE KEY_HEX SALT_HEX, where FILES_BASE serves Tests/TestSupport (the GIF test suite and libavif's test
files: no one here made them) and the service allows it with --auto-avif and --auto-webp, signing with KEY_HEX and
SALT_HEX. For each source, imgproxy URLs built and signed by pyimgproxy (PyPI) ask for a 96-pixel-wide variant in PNG,
AVIF, WebP and JPEG; Pillow (its own libavif 1.4 and libwebp) decodes every answer, which must be the asked format and the size
imgproxy's geometry gives (the upright size for an AVIF with irot), and:
- the PNG variant against Pillow's own LANCZOS resize of Pillow's decoding of the source: PSNR >= 35 dB (one
  resampler against another; single-image sources, where both take the same first frame);
- each lossy variant against the PNG variant: PSNR >= 30 dB (AVIF, WebP and JPEG at quality 82; variants at least
  16 pixels wide: 4:2:0 chroma cannot keep a 2x2 picture's colours).
Every comparison is of the images composited over white (transparent pixels' colours are nobody's business).
Then negotiation on an imgproxy URL that names no format: Chromium's Accept gets AVIF, `image/webp` alone WebP, `*/*`
the default, each with `Vary: Accept`. Exits 1 listing the failures; prints a table of bytes and PSNR per format.
"""
import io
import math
import sys
import urllib.request

from PIL import Image, ImageChops, ImageOps, ImageStat
from pyimgproxy import ImgProxy  # github.com/developersociety/pyimgproxy: imgproxy URLs as front ends build them

service, files, key, salt = sys.argv[1:5]
failures = []
CHROMIUM_ACCEPT = "image/avif,image/webp,image/apng,image/svg+xml,image/*,*/*;q=0.8"


imgproxy = ImgProxy(url=service, key=key, salt=salt)


def fetch(url, accept=None):
    request = urllib.request.Request(url, headers={"Accept": accept} if accept else {})
    with urllib.request.urlopen(request, timeout=60) as response:
        return response.status, dict(response.headers), response.read()


def psnr(a, b):
    a, b = a.convert("RGBA"), b.convert("RGBA")
    if a.size != b.size:
        return -1.0
    squares = ImageStat.Stat(ImageChops.difference(a, b)).sum2
    mse = sum(squares) / (a.width * a.height * 4)
    return 99.0 if mse == 0 else 10 * math.log10(255 * 255 / mse)


def flatten(image):
    """RGBA over white, as a JPEG variant is made (and comparisons of opaque formats need)."""
    if image.mode != "RGBA":
        return image.convert("RGB")
    background = Image.new("RGBA", image.size, (255, 255, 255, 255))
    return Image.alpha_composite(background, image).convert("RGB")


SOURCES = [  # (path under FILES_BASE, single image: Pillow's first frame is the image)
    ("gifsuite/high-color.gif", False),
    ("gifsuite/interlace.gif", True),
    ("gifsuite/transparent.gif", True),
    ("avif/kodim23_yuv420_8bpc.avif", True),
    ("avif/paris_icc_exif_xmp.avif", True),
    ("avif/abc_color_irot_alpha_irot.avif", True),
    ("avif/colors-animated-8bpc.avif", False),
    ("avif/colors_sdr_srgb.avif", True),
]
WIDTH = 96
rows = []
for source, single in SOURCES:
    with urllib.request.urlopen(f"{files}/{source}") as response:
        original = Image.open(io.BytesIO(response.read()))
        original.load()
    upright = ImageOps.exif_transpose(original) if source.endswith(".avif") else original
    width, height = upright.size
    expected = (min(WIDTH, width), max(1, round(height * min(WIDTH, width) / width)))
    answers = {}
    for extension in ("png", "avif", "webp", "jpg"):
        status, headers, body = fetch(imgproxy.image(f"{files}/{source}").resize("fit", WIDTH, 0).format(extension).url)
        image = Image.open(io.BytesIO(body))
        image.load()
        answers[extension] = (image, len(body))
        want = {"png": "PNG", "avif": "AVIF", "webp": "WEBP", "jpg": "JPEG"}[extension]
        if status != 200 or image.format != want or image.size != expected:
            failures.append(f"{source}@{extension}: {status} {image.format} {image.size}, expected {want} {expected}")
    png = answers["png"][0]
    reference = upright.convert("RGBA").resize(png.size, Image.LANCZOS) if single else None
    against_pillow = psnr(flatten(png), flatten(reference)) if reference else None
    if against_pillow is not None and against_pillow < 35:
        failures.append(f"{source}: the PNG variant is {against_pillow:.1f} dB from Pillow's resize of the source (< 35)")
    row = [source, f"{png.size[0]}x{png.size[1]}", f"{against_pillow:.1f}" if against_pillow else "-"]
    for extension in ("avif", "webp", "jpg"):
        image, size = answers[extension]
        score = psnr(flatten(image), flatten(png))
        if png.width < 16:  # 4:2:0 chroma cannot keep the colours of a 2x2 picture: nothing to measure
            row += [str(size), "-"]
            continue
        if score < 30:
            failures.append(f"{source}@{extension}: {score:.1f} dB from the PNG variant (< 30)")
        row += [str(size), f"{score:.1f}"]
    row.append(str(answers["png"][1]))
    rows.append(row)

# Negotiation on an imgproxy URL that names no format (the catalogue's routes: ImageOptionsTests).
negotiated = imgproxy.image(f"{files}/avif/kodim23_yuv420_8bpc.avif").resize("fit", WIDTH, 0).url
for accept, want in ((CHROMIUM_ACCEPT, "image/avif"), ("image/webp,*/*", "image/webp"), ("*/*", "image/jpeg")):
    status, headers, body = fetch(negotiated, accept)
    vary = headers.get("Vary", "")
    if status != 200 or headers.get("Content-Type") != want or "Accept" not in vary:
        failures.append(f"Accept {accept}: {status} {headers.get('Content-Type')} Vary: {vary!r}, expected {want} with Vary: Accept")
    elif Image.open(io.BytesIO(body)).format != want.split("/")[1].upper():
        failures.append(f"Accept {accept}: the body is {Image.open(io.BytesIO(body)).format}, not {want}")

print("| source | variant | PNG vs Pillow's LANCZOS (dB) | AVIF bytes | AVIF vs PNG (dB) | WebP bytes | WebP vs PNG (dB) | JPEG bytes | JPEG vs PNG (dB) | PNG bytes |")
print("|---|---|---|---|---|---|---|---|---|---|")
for row in rows:
    print("| " + " | ".join(row) + " |")
if failures:
    print("\n".join(failures), file=sys.stderr)
    sys.exit(f"formats check FAILED: {len(failures)} failures")
print(f"formats check: {len(SOURCES)} GIF and AVIF sources in 4 formats, and negotiation: passed")
