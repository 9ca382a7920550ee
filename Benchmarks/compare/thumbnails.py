#!/usr/bin/env python3
"""TileCache's thumbnails side by side with libvips' vipsthumbnail and Pillow: quality, speed and size.

Usage: thumbnails.py TILECACHE PHOTO_DIR OUT_MD IMAGE_DIR [ROUNDS]
  (make bench-compare runs it with the test photos; needs Pillow and numpy in the Python running it,
  and vipsthumbnail from Debian's libvips-tools.)

Quality: for every photo and width 64/128/256/512, PSNR and SSIM (luma, 11x11 Gaussian window, sigma 1.5) of each
thumbnailer's JPEG (q=82) against Pillow's Image.resize(..., LANCZOS) of the same fully decoded source, converted to
sRGB first when the photo embeds a profile (the reference is what a colour-managed, full-size Lanczos gives).
Pillow's own q=82 JPEG of that reference is the "reference, encoded" row: the best a q=82 JPEG can score.
Speed: thumbnails per second on one thread and on every core, medians of ROUNDS alternating rounds.
Sizes: bytes per thumbnail, JPEG q=82 and WebP q=82.
"""
import io
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np
from PIL import Image, ImageCms

WIDTHS = (64, 128, 256, 512)
QUALITY = 82


def luma(image):
    a = np.asarray(image.convert("RGB"), dtype=np.float64)
    return 0.299 * a[..., 0] + 0.587 * a[..., 1] + 0.114 * a[..., 2]


def gaussian_blur(a, sigma=1.5, radius=5):
    x = np.arange(-radius, radius + 1)
    k = np.exp(-(x ** 2) / (2 * sigma ** 2))
    k /= k.sum()
    pad = np.pad(a, radius, mode="reflect")
    rows = np.apply_along_axis(lambda r: np.convolve(r, k, mode="valid"), 1, pad)
    return np.apply_along_axis(lambda c: np.convolve(c, k, mode="valid"), 0, rows)


def ssim(a, b):
    x, y = luma(a), luma(b)
    c1, c2 = (0.01 * 255) ** 2, (0.03 * 255) ** 2
    mx, my = gaussian_blur(x), gaussian_blur(y)
    sxx = gaussian_blur(x * x) - mx * mx
    syy = gaussian_blur(y * y) - my * my
    sxy = gaussian_blur(x * y) - mx * my
    s = ((2 * mx * my + c1) * (2 * sxy + c2)) / ((mx * mx + my * my + c1) * (sxx + syy + c2))
    return float(s.mean())


def psnr(a, b):
    x = np.asarray(a.convert("RGB"), dtype=np.float64)
    y = np.asarray(b.convert("RGB"), dtype=np.float64)
    mse = ((x - y) ** 2).mean()
    return 99.0 if mse == 0 else float(10 * np.log10(255 ** 2 / mse))


def write_report(path, lines):
    """Writes the report's lines to `path` and prints them."""
    with open(path, "w") as out:
        out.write("\n".join(lines) + "\n")
    print("\n".join(lines))


def reference(path):
    """The fully decoded photo in sRGB (converted from its embedded profile, if any)."""
    image = Image.open(path)
    image.load()
    rgb = image.convert("RGB")
    profile = image.info.get("icc_profile")
    if profile:
        rgb = ImageCms.profileToProfile(rgb, ImageCms.ImageCmsProfile(io.BytesIO(profile)), ImageCms.createProfile("sRGB"),
                                        renderingIntent=ImageCms.Intent.RELATIVE_COLORIMETRIC)
    return rgb


def pillow_thumbnail(path, width, out, fmt="JPEG"):
    """Pillow's fast path, as its docs recommend: draft() (DCT scaling), then thumbnail() (reducing_gap 2, LANCZOS)."""
    image = Image.open(path)
    height = round(image.height * width / image.width)
    image.draft("RGB", (width, height))
    image = image.convert("RGB")
    image.thumbnail((width, 100000), Image.LANCZOS)
    image.save(out, fmt, quality=QUALITY)


def vips_thumbnail(path, width, out, threads=None):
    env = dict(os.environ)
    if threads:
        env["VIPS_CONCURRENCY"] = str(threads)
    subprocess.run(["vipsthumbnail", path, "-s", f"{width}x100000", "--export-profile", "srgb", "-o", f"{out}[Q={QUALITY},strip]"],
                   check=True, env=env)


def tilecache_thumbnail(tilecache, path, width, directory, fmt="jpeg"):
    subprocess.run([tilecache, "thumbnail", path, "-w", str(width), "-o", directory, "--image-format", fmt, "-j", "1",
                    "--overwrite", "--format", "json"], check=True, capture_output=True)
    stem = os.path.splitext(os.path.basename(path))[0]
    return os.path.join(directory, stem + (".jpg" if fmt == "jpeg" else "." + fmt))


# Speed: each tool makes every photo's thumbnail at `width`, `copies` times, on one thread or on every core.

def time_tilecache(tilecache, photos, width, copies, jobs, work):
    args = [tilecache, "thumbnail", *photos, "-w", str(width), "-o", work, "-j", str(jobs), "--repeat", str(copies),
            "--overwrite", "--format", "json"]
    report = json.loads(subprocess.run(args, check=True, capture_output=True, text=True).stdout)
    return report["perSecond"]


def time_vips(photos, width, copies, jobs, work):
    # One vipsthumbnail process per core, each given its share of the files, each with one worker thread.
    files = photos * copies
    shares = [files[i::jobs] for i in range(jobs)]
    started = time.perf_counter()
    procs = [subprocess.Popen(["vipsthumbnail", *share, "-s", f"{width}x100000", "-o", f"{work}/%s-v.jpg[Q={QUALITY},strip]"],
                              env=dict(os.environ, VIPS_CONCURRENCY="1")) for share in shares]
    for proc in procs:
        if proc.wait() != 0:
            raise SystemExit("vipsthumbnail failed")
    return len(files) / (time.perf_counter() - started)


PILLOW_WORKER = """
import sys
from PIL import Image
width, quality, out = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
for index, path in enumerate(sys.argv[4:]):
    image = Image.open(path)
    image.draft("RGB", (width, round(image.height * width / image.width)))
    image = image.convert("RGB")
    image.thumbnail((width, 100000), Image.LANCZOS)
    image.save(f"{out}/p{index % 7}.jpg", "JPEG", quality=quality)
"""


def time_pillow(photos, width, copies, jobs, work):
    files = photos * copies
    shares = [files[i::jobs] for i in range(jobs)]
    started = time.perf_counter()
    procs = [subprocess.Popen([sys.executable, "-c", PILLOW_WORKER, str(width), str(QUALITY), work, *share]) for share in shares]
    for proc in procs:
        if proc.wait() != 0:
            raise SystemExit("the Pillow worker failed")
    return len(files) / (time.perf_counter() - started)


def main():
    tilecache, photo_dir, out_md, image_dir = (os.path.abspath(arg) for arg in sys.argv[1:5])  # vipsthumbnail -o is
    # relative to the input's folder
    rounds = int(sys.argv[5]) if len(sys.argv) > 5 else 5
    photos = sorted(os.path.join(photo_dir, name) for name in os.listdir(photo_dir) if name.endswith(".jpg"))
    work = tempfile.mkdtemp(prefix="tilecache-thumbs.")
    cores = os.cpu_count() or 1
    lines = []
    say = lines.append
    try:
        vips_version = subprocess.run(["vips", "--version"], capture_output=True, text=True).stdout.strip()
        import PIL
        say("# Thumbnails side by side: TileCache, libvips, Pillow")
        say("")
        say(f"Generated by `make bench-compare` (Benchmarks/compare/thumbnails.py) on {time.strftime('%Y-%m-%d')}, this "
            f"{cores}-core machine. Peers: {vips_version} (`vipsthumbnail`, Debian), Pillow {PIL.__version__} (PyPI). "
            f"Photos: the {len(photos)} real photos of Tests/TestSupport/photos (their sources and licences are in "
            "LICENSES.md there; rocket.jpg embeds an Adobe RGB (1998) profile, china.jpg and hubble_deep_field.jpg "
            "sRGB ones). Every tool makes JPEG q=82 thumbnails of the given width; TileCache through `tilecache "
            "thumbnail`, the code `tilecache serve` runs for `?w=`.")
        say("")

        # Quality.
        say("## Quality: PSNR and SSIM against Pillow's LANCZOS of the full-size photo in sRGB")
        say("")
        say("Higher is better. \"reference q82\" is that reference itself saved by Pillow as a q=82 JPEG: the best a q=82 "
            "JPEG scores, the ceiling for everyone. libvips runs with `--export-profile srgb`; Pillow's "
            "`draft()` + `thumbnail()` does not convert colour profiles (hence its lower score on rocket.jpg).")
        say("")
        say("| photo | width | reference q82 PSNR | TileCache PSNR | libvips PSNR | Pillow draft+thumbnail PSNR | TileCache SSIM | libvips SSIM | Pillow SSIM | TileCache - best peer (dB) |")
        say("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        worst = None
        for path in photos:
            source = reference(path)
            name = os.path.basename(path)
            for width in WIDTHS:
                if width > source.width:
                    continue
                height = round(source.height * width / source.width)
                ref = source.resize((width, height), Image.LANCZOS)
                ref_jpeg = os.path.join(work, "ref.jpg")
                ref.save(ref_jpeg, "JPEG", quality=QUALITY)
                tc = tilecache_thumbnail(tilecache, path, width, os.path.join(work, f"tc{width}"))
                vips = os.path.join(work, f"vips{width}.jpg")
                vips_thumbnail(path, width, vips)
                pil = os.path.join(work, f"pil{width}.jpg")
                pillow_thumbnail(path, width, pil)
                scores = {}
                for label, file in (("ref", ref_jpeg), ("tc", tc), ("vips", vips), ("pil", pil)):
                    image = Image.open(file).convert("RGB")
                    if image.size != ref.size:  # libvips rounds heights down: compare the common part
                        image = image.resize(ref.size, Image.LANCZOS) if abs(image.height - ref.height) > 1 else image
                    if image.size != ref.size:
                        crop = (0, 0, min(image.width, ref.width), min(image.height, ref.height))
                        scores[label] = (psnr(image.crop(crop), ref.crop(crop)), ssim(image.crop(crop), ref.crop(crop)))
                    else:
                        scores[label] = (psnr(image, ref), ssim(image, ref))
                best_peer = max(scores["vips"][0], scores["pil"][0])
                gap = scores["tc"][0] - best_peer
                worst = gap if worst is None else min(worst, gap)
                say(f"| {name} | {width} | {scores['ref'][0]:.2f} | {scores['tc'][0]:.2f} | {scores['vips'][0]:.2f} | "
                    f"{scores['pil'][0]:.2f} | {scores['tc'][1]:.4f} | {scores['vips'][1]:.4f} | {scores['pil'][1]:.4f} | {gap:+.2f} |")
        say("")
        say(f"Worst TileCache - best peer: {worst:+.2f} dB (the goal: no worse than -0.5 dB at every width).")
        say("")

        # Sizes.
        say("## Encoded size: bytes per thumbnail (all photos, summed), q=82")
        say("")
        say("| width | TileCache JPEG | libvips JPEG | Pillow JPEG | TileCache WebP | libvips WebP | of which ICC profile | Pillow WebP |")
        say("|---:|---:|---:|---:|---:|---:|---:|---:|")
        for width in WIDTHS:
            totals = [0] * 6
            icc = 0
            for path in photos:
                stem = os.path.splitext(os.path.basename(path))[0]
                totals[0] += os.path.getsize(tilecache_thumbnail(tilecache, path, width, os.path.join(work, "sj")))
                vips_thumbnail(path, width, os.path.join(work, "v.jpg"))
                totals[1] += os.path.getsize(os.path.join(work, "v.jpg"))
                pillow_thumbnail(path, width, os.path.join(work, "p.jpg"))
                totals[2] += os.path.getsize(os.path.join(work, "p.jpg"))
                totals[3] += os.path.getsize(tilecache_thumbnail(tilecache, path, width, os.path.join(work, "sw"), "webp"))
                subprocess.run(["vipsthumbnail", path, "-s", f"{width}x100000", "--export-profile", "srgb",
                                "-o", os.path.join(work, f"v.webp[Q={QUALITY},strip]")], check=True)
                totals[4] += os.path.getsize(os.path.join(work, "v.webp"))
                with open(os.path.join(work, "v.webp"), "rb") as webp:
                    data = webp.read()
                    at = data.find(b"ICCP")
                    icc += int.from_bytes(data[at + 4:at + 8], "little") + 8 if at >= 0 else 0
                pillow_thumbnail(path, width, os.path.join(work, "p.webp"), "WEBP")
                totals[5] += os.path.getsize(os.path.join(work, "p.webp"))
                del stem
            say(f"| {width} | " + " | ".join(f"{t:,}" for t in totals[:5]) + f" | {icc:,} | {totals[5]:,} |")
        say("")
        say("libvips writes the sRGB ICC profile into its WebP files (an ICCP chunk) even with `strip`; TileCache and "
            "Pillow write none (sRGB is the default for both formats), so the libvips WebP column minus that chunk is "
            "the fair comparison. JPEGs: no profile from any of the three.")
        say("")

        # Speed.
        say(f"## Speed: thumbnails per second, median of {rounds} alternating rounds")
        say("")
        say("Each round makes every photo's thumbnail 20 times per tool, the tools one after another (the order rotates "
            "each round). One thread: TileCache `-j 1`; one `vipsthumbnail` process with `VIPS_CONCURRENCY=1`; one "
            "Python process. All cores: TileCache `-j {cores}` in one process; {cores} single-threaded vipsthumbnail "
            "processes; {cores} Python processes. TileCache reads the files before its clock starts; the peers read "
            "them from the page cache. Ratio: TileCache / libvips (the goal: at least 1.0).".format(cores=cores))
        say("")
        say("| width | threads | TileCache | libvips | Pillow | TileCache / libvips | rounds (TileCache; libvips) |")
        say("|---:|---|---:|---:|---:|---:|---|")
        copies = 20
        for width in (128, 256):
            for jobs in (1, cores):
                results = {"tc": [], "vips": [], "pil": []}
                tools = [("tc", lambda: time_tilecache(tilecache, photos, width, copies, jobs, work)),
                         ("vips", lambda: time_vips(photos, width, copies, jobs, work)),
                         ("pil", lambda: time_pillow(photos, width, copies, jobs, work))]
                for round_index in range(rounds):
                    order = tools[round_index % 3:] + tools[:round_index % 3]
                    for label, run in order:
                        results[label].append(run())
                med = {k: statistics.median(v) for k, v in results.items()}
                say(f"| {width} | {jobs} | {med['tc']:.1f} | {med['vips']:.1f} | {med['pil']:.1f} | {med['tc'] / med['vips']:.2f} | "
                    f"{', '.join(f'{v:.0f}' for v in results['tc'])}; {', '.join(f'{v:.0f}' for v in results['vips'])} |")
        say("")

        say("Where the time goes (perf record on `tilecache thumbnail` of the five photos at 256 px, one thread, after "
            "the changes of 2026-11-23): the Lanczos passes about 45% (vertical 33%, horizontal 12%), libjpeg's decode "
            "most of the rest, libm's pow and sin about 4% (the Lanczos taps, and Little CMS building the transform for rocket.jpg's profile). The vertical pass runs "
            "first, on the large input, with SSE2 `pmaddwd` on 16-bit weights; the horizontal pass was scalar (since "
            "2026-11-28 the vertical pass sums sixteen columns' taps in registers and the horizontal one takes a pixel's "
            "channels at once in SSE4.1: both 1.4-1.75x faster, docs/benchmarks.md, \"Issue 35, seventh session\"). "
            "TileCache decodes larger than libvips does when it shrinks on load (it leaves the reduce 3x, libvips 2x: "
            "quality, above), and still makes more thumbnails a second; Pillow's `draft()` shrinks harder, at the "
            "quality the first table shows (its speed is in the table above).")
        say("")

        # Side by side images.
        os.makedirs(image_dir, exist_ok=True)
        say("## Side by side (256 px, JPEG q=82)")
        say("")
        say("| photo | TileCache | libvips | Pillow draft+thumbnail |")
        say("|---|---|---|---|")
        relative = os.path.relpath(image_dir, os.path.dirname(out_md))
        for name in ("rocket.jpg", "retina.jpg", "grace_hopper.jpg"):
            path = os.path.join(photo_dir, name)
            if not os.path.exists(path):
                continue
            stem = os.path.splitext(name)[0]
            shutil.copy(tilecache_thumbnail(tilecache, path, 256, os.path.join(work, "side")), os.path.join(image_dir, f"{stem}-tilecache.jpg"))
            vips_thumbnail(path, 256, os.path.join(image_dir, f"{stem}-libvips.jpg"))
            pillow_thumbnail(path, 256, os.path.join(image_dir, f"{stem}-pillow.jpg"))
            say(f"| {name} | ![TileCache]({relative}/{stem}-tilecache.jpg) | ![libvips]({relative}/{stem}-libvips.jpg) | "
                f"![Pillow]({relative}/{stem}-pillow.jpg) |")
        say("")
        say("rocket.jpg embeds Adobe RGB (1998): TileCache and libvips convert it to sRGB, Pillow's thumbnail keeps the "
            "numbers and shows them as sRGB (duller reds and greens in a browser).")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    write_report(out_md, lines)


if __name__ == "__main__":
    main()
