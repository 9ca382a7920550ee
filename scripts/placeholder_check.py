#!/usr/bin/env python3
"""TileCache's placeholders against the reference implementations from PyPI (part of `make test`).

1. The same pixels give the same string. Small images (at most 32 px a side, so TileCache computes on them as they
   are) are made with Pillow from other projects' test images: the real photos, PngSuite, the GIF test suite. TileCache's
   `inspect --placeholders` must give, for each:
   - the BlurHash that `blurhash` 1.1.5 (PyPI, a port of Wolt's reference) gives for the same RGB pixels and components
     (opaque images: BlurHash has no alpha, and TileCache flattens transparency over white first);
   - the ThumbHash bytes that `thumbhash-rs` 0.1.0 (PyPI, the reference's own Rust encoder) gives for the same RGBA
     pixels, alpha included.
   Where the bytes differ, the reference decoder must draw both alike (see `drawn_alike`). On random pixels (24 images,
   seeded) and the photos the bytes must be equal; a test pattern with exact symmetries (PngSuite's, the GIF suite's)
   has coefficients that are pure rounding noise, which no two implementations round alike (thumbhash-rs and PyPI's
   thumbhash differ there too): those are counted, not failed.
   The PyPI package `thumbhash` 0.1.2 is compared too, on opaque images, and its agreement reported: it computes in
   double precision and rounds half to even, so a few bytes may differ; with alpha it fails (a tuple is unpacked
   wrongly), and its decoder renders every pixel with the first pixel's cosines.
2. The reference decoders read TileCache's strings, and what they draw is close to the image. For every test image at
   full size (the photos, PngSuite, GIFs, AVIFs, WebP): `blurhash.decode` and `thumbhash_rs.thumb_hash_to_rgba` draw the
   placeholder, and Pillow box-downscales the image (TileCache's upright rendering at 100 px, see `renderings`;
   flattened over white for BlurHash, RGBA for ThumbHash) to the same size. The measure is the mean absolute difference per channel (0-255). Each placeholder must be closer
   to the image than the image's flat average colour is (it carries structure, not just a colour), and within
   `MAX_MEAN_ERROR` of it.
   TileCache enlarges images smaller than 8 px on a side before hashing (the reference encoders alias on them: a 1x1
   white image is drawn as light and dark bands); those are compared here too, at full size.
3. The LQIP is a data URI of at most 600 bytes that Pillow decodes, at most 16 px a side, in the image's aspect ratio;
   the average colour (TileCache's, of the image at 32 px) is Pillow's alpha-weighted mean of the 100-px rendering
   within 3 levels (resampling keeps the mean).

Usage: scripts/placeholder_check.py TILECACHE_BINARY
"""
import base64
import importlib.util
import io
import json
import math
import os
import random
import subprocess
import sys
import tempfile

import blurhash
import thumbhash as thumbhash_rs  # the thumbhash-rs package installs as `thumbhash`
from PIL import Image, ImageOps

MAX_MEAN_ERROR = 20  # ThumbHash, at its grid; and at most SLACK above the flat average colour's
# BlurHash, at its grid. Its quantisation (a square root of 19 levels under one maximum, in linear light) draws dark and
# low-contrast photographs a few levels off even where a flat colour is closer; the strings are the reference
# encoder's for the same pixels (part 1), so what is left is the format's.
MAX_BLURHASH_ERROR = 40
# libavif's test files that are photographs (the rest are test patterns and grids of flat colour).
PHOTOGRAPH_AVIFS = ("kodim", "sofa", "weld", "paris", "arc_triomphe")
SLACK = 3  # how much worse than the image's flat average colour a placeholder may be (a fine pattern has no better blur)
ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
SUPPORT = os.path.join(ROOT, "Tests", "TestSupport")

binary = sys.argv[1]
failures = []


def fail(message):
    failures.append(message)
    print("placeholder check: FAIL " + message, file=sys.stderr)


def inspect(paths):
    run = subprocess.run([binary, "inspect", "--placeholders", "--format", "json", "--lenient", *paths],
                         capture_output=True, text=True)
    if run.returncode not in (0, 2):
        sys.exit(f"placeholder check: inspect failed ({run.returncode}): {run.stderr}")
    return {result["path"]: result for result in json.loads(run.stdout)}


def pypi_thumbhash():
    """The PyPI package `thumbhash` 0.1.2, installed apart (it shares the module name with thumbhash-rs)."""
    path = os.environ.get("PYPI_THUMBHASH_DIR")
    if not path:
        return None
    spec = importlib.util.spec_from_file_location("thumbhash_pypi", os.path.join(path, "thumbhash", "__init__.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def components(width, height):
    long, short = max(width, height), min(width, height)
    other = min(9, max(1, math.floor(4 * short / long + 0.5)))  # Swift's rounded(): half away from zero
    return (4, other) if width >= height else (other, 4)


def sources():
    """Other projects' test images, by kind."""
    photos = [os.path.join(SUPPORT, "photos", name) for name in sorted(os.listdir(os.path.join(SUPPORT, "photos")))
              if name.endswith(".jpg")]
    pngs = [os.path.join(SUPPORT, "pngsuite", name) for name in sorted(os.listdir(os.path.join(SUPPORT, "pngsuite")))
            if name.endswith(".png") and not name.startswith("x") and name != "PngSuite.png"]
    gifs = [os.path.join(SUPPORT, "gifsuite", name) for name in sorted(os.listdir(os.path.join(SUPPORT, "gifsuite")))
            if name.endswith(".gif")]
    avifs = [os.path.join(SUPPORT, "avif", name) for name in sorted(os.listdir(os.path.join(SUPPORT, "avif")))
             if name.endswith(".avif")]
    webps = [os.path.join(SUPPORT, "libwebp", "test.webp")]
    return photos, pngs, gifs, avifs, webps


def small_images(work, photos, pngs, gifs):
    """PNGs of at most 32 px a side made by Pillow, opaque and with alpha, each with the pixels it holds."""
    made = {}
    for path in photos + pngs + gifs:
        try:
            image = ImageOps.exif_transpose(Image.open(path))
            image.load()
        except Exception:
            continue
        has_alpha = image.mode in ("RGBA", "LA", "PA") or (image.mode == "P" and "transparency" in image.info)
        image = image.convert("RGBA" if has_alpha else "RGB")
        image.thumbnail((32, 32), Image.LANCZOS)
        image.info = {}  # no transparency key, no ICC profile: the PNG holds the pixels as they are
        if min(image.size) < 8:
            continue  # TileCache enlarges an image this small first (the hashes alias on a few pixels)
        name = os.path.join(work, os.path.basename(path).rsplit(".", 1)[0] + ("-alpha" if has_alpha else "") + ".png")
        image.save(name)
        made[name] = image.convert("RGBA")
    # Random pixels, opaque and with alpha (seeded): no symmetry, so every coefficient is well above rounding noise.
    generator = random.Random(34)
    for index in range(24):
        width, height = generator.randint(8, 32), generator.randint(8, 32)
        alpha = index % 2 == 1
        image = Image.frombytes("RGBA", (width, height), bytes(
            generator.randrange(256) if alpha or i % 4 != 3 else 255 for i in range(width * height * 4)))
        name = os.path.join(work, f"random-{index}" + ("-alpha" if alpha else "") + ".png")
        (image if alpha else image.convert("RGB")).save(name)
        made[name] = image
    # A synthetic gradient with graded alpha, for ThumbHash's alpha channel.
    gradient = Image.new("RGBA", (30, 20))
    gradient.putdata([(x * 8, y * 12, 255 - x * 8, min(255, (x + y) * 5)) for y in range(20) for x in range(30)])
    name = os.path.join(work, "gradient-alpha.png")
    gradient.save(name)
    made[name] = gradient
    return made


def same_pixels(work, made):
    results = inspect(list(made))
    legacy = pypi_thumbhash()
    blurhash_equal = thumbhash_equal = thumbhash_alike = thumbhash_noise = legacy_equal = legacy_compared = opaque = 0
    photo_names = {os.path.join(work, name.rsplit(".", 1)[0]) for name in os.listdir(os.path.join(SUPPORT, "photos"))}
    for path, image in made.items():
        result = results.get(path)
        if not result or not result.get("placeholder"):
            fail(f"{os.path.basename(path)}: no placeholder ({result and result.get('message')})")
            continue
        ours = result["placeholder"]
        width, height = image.size
        rgba = image.tobytes()
        theirs = bytes(thumbhash_rs.rgba_to_thumb_hash(width, height, rgba))
        mine = base64.b64decode(ours["thumbhash"])
        strict = os.path.basename(path).startswith("random-") or path.rsplit("-alpha", 1)[0].rsplit(".", 1)[0] in photo_names
        if mine == theirs:
            thumbhash_equal += 1
        elif drawn_alike(mine, theirs):
            thumbhash_alike += 1
        elif not strict:
            thumbhash_noise += 1  # a test pattern's symmetry: see the docstring
        else:
            fail(f"{os.path.basename(path)}: ThumbHash {ours['thumbhash']} != thumbhash-rs {base64.b64encode(theirs).decode()}")
        if all(pixel[3] == 255 for pixel in image.getdata()):
            opaque += 1
            rgb = image.convert("RGB")
            rows = [[rgb.getpixel((x, y)) for x in range(width)] for y in range(height)]
            cx, cy = components(width, height)
            reference = blurhash.encode(rows, cx, cy)
            if reference == ours["blurhash"]:
                blurhash_equal += 1
            else:
                fail(f"{os.path.basename(path)}: BlurHash {ours['blurhash']} != blurhash {reference} ({cx}x{cy})")
            if legacy:
                legacy_compared += 1
                legacy_equal += bytes(legacy.rgba_to_thumb_hash(width, height, list(rgba))) == base64.b64decode(ours["thumbhash"])
    print(f"placeholder check: same pixels, same string: BlurHash {blurhash_equal}/{opaque} opaque images equal to blurhash 1.1.5; "
          f"ThumbHash {thumbhash_equal}/{len(made)} equal to thumbhash-rs 0.1.0, {thumbhash_alike} more drawn alike by it, "
          f"{thumbhash_noise} test patterns apart in rounding noise"
          + (f"; PyPI thumbhash 0.1.2 (double precision) equal on {legacy_equal}/{legacy_compared} opaque images" if legacy else ""))


def drawn_alike(mine, theirs):
    """Whether the reference decoder draws two ThumbHashes the same, within 1 level a channel. Where a channel does
    not vary (a grey image's colour channels, a flat pattern's axes), its coefficients are rounding noise, and each
    implementation's noise differs (single or double precision, the order of the sums, libm's cosf): a quarter-step
    nibble then rounds the other way. The decoder multiplies such noise by a scale near 0: within 3 levels."""
    a, b = thumbhash_rs.thumb_hash_to_rgba(mine), thumbhash_rs.thumb_hash_to_rgba(theirs)
    return a[:2] == b[:2] and max(abs(x - y) for x, y in zip(a[2], b[2])) <= 3


def mean_error(a, b):
    """Mean absolute difference per channel of two images of one size and mode."""
    total = sum(abs(x - y) for x, y in zip(a.tobytes(), b.tobytes()))
    return total / len(a.tobytes())


def renderings(work, paths):
    """TileCache's own rendering of each image fitted into 100 px (PNG, upright, in sRGB: what its placeholder is
    computed from), by `tilecache thumbnail`; the placeholders are compared with these, so a file that TileCache and
    Pillow decode differently (the GIF suite's composition, AVIFs libavif 0.11 reads otherwise) tests the placeholder,
    not the decoder."""
    made = {}
    for folder in sorted({os.path.dirname(path) for path in paths}):
        inputs = [path for path in paths if os.path.dirname(path) == folder]
        output = os.path.join(work, "rendered-" + os.path.basename(folder))
        subprocess.run([binary, "thumbnail", *inputs, "--width", "100", "--height", "100", "--image-format", "png",
                        "--output", output + "/%s.%e"], capture_output=True, text=True)
        for path in inputs:
            rendered = os.path.join(output, os.path.basename(path).rsplit(".", 1)[0] + ".png")
            if os.path.exists(rendered):
                made[path] = rendered
    return made


def close_to_image(work, paths, judged_paths):
    results = inspect(paths)
    rendered = renderings(work, paths)
    errors = []
    worst = {"blurhash": 0.0, "thumbhash": 0.0}
    checked = 0
    lqip_largest = 0
    for path in paths:
        result = results.get(path)
        if not result or not result.get("valid"):
            continue  # a test file meant to fail
        ours = result.get("placeholder")
        if not ours:
            fail(f"{os.path.basename(path)}: valid but no placeholder")
            continue
        if path not in rendered:
            fail(f"{os.path.basename(path)}: valid but `tilecache thumbnail` made nothing of it")
            continue
        image = Image.open(rendered[path]).convert("RGBA")
        if min(image.size) < 32:
            continue  # drawing it at 32 px would enlarge it: a blur of a few pixels is no downscale
        checked += 1
        judged = path in judged_paths
        flat = Image.alpha_composite(Image.new("RGBA", image.size, (255, 255, 255, 255)), image).convert("RGB")
        # BlurHash, drawn at 32 px on the longer side.
        w, h = (32, max(1, round(32 * image.height / image.width))) if image.width >= image.height \
            else (max(1, round(32 * image.width / image.height)), 32)
        drawn = Image.new("RGB", (w, h))
        drawn.putdata([tuple(pixel) for row in blurhash.decode(ours["blurhash"], w, h) for pixel in row])
        # Compared at the detail a BlurHash keeps: its components' grid.
        cx, cy = blurhash.components(ours["blurhash"])
        target = flat.resize((cx, cy), Image.BOX)
        average = Image.new("RGB", (cx, cy), tuple(round(sum(c) / len(c)) for c in zip(*flat.resize((32, 32), Image.BOX).getdata())))
        error, baseline = mean_error(drawn.resize((cx, cy), Image.BOX), target), mean_error(average, target)
        worst["blurhash"] = max(worst["blurhash"], error)
        errors.append(("BlurHash", os.path.basename(path), error, baseline))
        if judged and error > MAX_BLURHASH_ERROR:
            fail(f"{os.path.basename(path)}: BlurHash drawn is {error:.1f} from the image (flat average: {baseline:.1f})")
        # ThumbHash, drawn by the reference decoder at its own size (32 px on the longer side).
        tw, th, rgba = thumbhash_rs.thumb_hash_to_rgba(base64.b64decode(ours["thumbhash"]))
        drawn = Image.frombytes("RGBA", (tw, th), bytes(rgba))
        # At the detail a ThumbHash keeps: 7 luminance components on the longer side (5 with alpha).
        side = 5 if ours["average_alpha"] < 1 else 7
        grid = (side, max(1, round(side * th / tw))) if tw >= th else (max(1, round(side * tw / th)), side)
        target = image.resize(grid, Image.BOX)
        flat_rgba = Image.new("RGBA", grid, tuple(round(sum(c) / len(c)) for c in zip(*target.getdata())))
        error, baseline = mean_error(drawn.resize(grid, Image.BOX), target), mean_error(flat_rgba, target)
        worst["thumbhash"] = max(worst["thumbhash"], error)
        errors.append(("ThumbHash", os.path.basename(path), error, baseline))
        if judged and (error > MAX_MEAN_ERROR or error > baseline + SLACK):
            fail(f"{os.path.basename(path)}: ThumbHash drawn is {error:.1f} from the image (flat average: {baseline:.1f})")
        ratio = image.width / image.height
        if abs(tw / th - ratio) > max(0.35 * ratio, 0.35):
            fail(f"{os.path.basename(path)}: ThumbHash aspect {tw}x{th} for an image of {image.width}x{image.height}")
        # The LQIP.
        prefix = "data:image/webp;base64,"
        if not ours["lqip"].startswith(prefix):
            fail(f"{os.path.basename(path)}: LQIP is not a WebP data URI")
            continue
        lqip_largest = max(lqip_largest, len(ours["lqip"]))
        tiny = Image.open(io.BytesIO(base64.b64decode(ours["lqip"][len(prefix):])))
        if len(ours["lqip"]) > 600 or max(tiny.size) > 16 or abs(tiny.width / tiny.height - ratio) > max(0.25 * ratio, 0.5) \
                and min(image.size) > 1:
            fail(f"{os.path.basename(path)}: LQIP {tiny.size}, {len(ours['lqip'])} bytes, for {image.width}x{image.height}")
        # The average colour, alpha-weighted, of the image fitted into 100 px.
        pixels = list(image.getdata())
        alpha = sum(p[3] for p in pixels)
        if alpha:
            mean = [sum(p[c] * p[3] for p in pixels) / alpha for c in range(3)]
            got = [int(ours["average_color"][i:i + 2], 16) for i in (1, 3, 5)]
            if max(abs(a - b) for a, b in zip(mean, got)) > 3:
                fail(f"{os.path.basename(path)}: average colour {ours['average_color']}, Pillow's {mean}")
    for kind, name, error, baseline in errors:
        if name in {os.path.basename(p) for p in judged_paths}:
            print(f"placeholder check: {kind} of {name}: {error:.1f} from the image, its flat average colour {baseline:.1f}")
    judged_errors = [e for e in errors if e[1] in {os.path.basename(p) for p in judged_paths}]
    print(f"placeholder check: {checked} images drawn by the reference decoders; on the {len(judged_errors) // 2} photographs, worst "
          f"mean error at the hash's grid BlurHash {max(e[2] for e in judged_errors if e[0] == 'BlurHash'):.1f} (limit "
          f"{MAX_BLURHASH_ERROR}), ThumbHash {max(e[2] for e in judged_errors if e[0] == 'ThumbHash'):.1f} (limit "
          f"{MAX_MEAN_ERROR}, and at most {SLACK} above the flat average colour's); largest LQIP {lqip_largest} bytes")
    return checked


with tempfile.TemporaryDirectory() as work:
    photos, pngs, gifs, avifs, webps = sources()
    made = small_images(work, photos, pngs, gifs)
    same_pixels(work, made)
    photographs = photos + webps + [path for path in avifs if any(name in path for name in PHOTOGRAPH_AVIFS)]
    checked = close_to_image(work, photos + pngs + gifs + avifs + webps, set(photographs))
    if checked < 100:
        fail(f"only {checked} images compared")
if failures:
    sys.exit(f"placeholder check: {len(failures)} failures")
print("placeholder check: ok")
