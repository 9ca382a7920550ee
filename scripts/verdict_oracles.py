#!/usr/bin/env python3
"""Judges the verdict corpus with tools no one here made, and compares with `tilecache inspect`.

For every file: Pillow (Image.open + load, truncated images not allowed), libvips (`vips avg` on one thread, default
`fail_on`, then `fail_on=truncated` and `fail_on=warning`), libjpeg-turbo's djpeg (exit 0 clean, 2 with a warning, 1
on an error) for JPEGs, and Chromium (an <img> per file in a headless page: loaded, and its natural size). Prints one
row per disagreement and a summary table. Fails when a rule below breaks:

1. Every file TileCache calls valid opens in Pillow, libvips and Chromium, at the size TileCache reports (stored, or
   upright where the file's orientation turns it: an AVIF's irot, which libvips and Chromium apply and Pillow reports).
   libvips is not asked about AVIF image sequences: Debian 12's libvips reads AVIF through libheif 1.15, which reads
   no sequences (and hands them to ImageMagick, which fails).
2. Every JPEG TileCache calls truncated or corrupt makes djpeg warn or fail: the damage is libjpeg's own finding,
   not ours. (libvips is not asked: it stops reading after the last row, so it never sees bytes left over before
   the end marker, which is how most damage to entropy-coded data shows.)
3. Every file TileCache calls truncated fails in libvips with fail_on=truncated, or in Pillow (its truncation check).
4. Every JPEG TileCache calls valid without a warning is clean for djpeg (exit 0).

KNOWN_DIFFERENCES below lists the files where TileCache knowingly disagrees, each with the reason; they are reported,
not failed.

The peers' verdicts depend only on a file's bytes and each tool's version, so they are kept in
scripts/verdict-oracles.json by SHA-256, with the versions they were made with: a run asks a tool anew only about the
files the record does not hold, and about every file only when that tool's own version changed (a Chromium update
from Debian reloads the 438 files in Chromium, 3 s, not every peer on every file, 111 s); `--record` (what
`make verdicts` uses) judges everything again and rewrites the record. TileCache's own verdicts are always today's.

Usage: scripts/verdict_oracles.py CORPUS_DIR INSPECT_JSON [--record]
"""
import concurrent.futures
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

from PIL import Image

# File name: why TileCache's verdict or size differs from the peers', by design.
KNOWN_DIFFERENCES = {
    "gifsuite-image-outside-bg.gif": "an image reaching past the 2x2 logical screen: Pillow, libvips and Chromium grow the"
    " screen to 4x4; TileCache keeps the screen's declared size and clips the image, as the GIF spec and Robert Ancell's"
    " GIF test suite (which this file comes from) say",
    "gifsuite-image-overlap-bg.gif": "as gifsuite-image-outside-bg.gif (3x3 by the peers)",
}

corpus, report = sys.argv[1], sys.argv[2]
rerecord = "--record" in sys.argv[3:]
RECORD = os.path.join(os.path.dirname(os.path.abspath(__file__)), "verdict-oracles.json")
verdicts = {os.path.basename(r["path"]): r for r in json.load(open(report))}
work = tempfile.mkdtemp(prefix="tilecache-oracles-")


def verdict(result):
    if result["valid"]:
        return "valid-with-warning" if result["warnings"] else "valid"
    return result["reason"]


def pillow(path):
    """Opens and loads every frame (an animation's later frames hold data a first-frame load never reads)."""
    try:
        with Image.open(path) as image:
            size = image.size
            for frame in range(getattr(image, "n_frames", 1)):
                image.seek(frame)
                image.load()
            return ("ok", size)
    except Exception as error:  # Pillow raises many types for bad files
        return ("fail: " + str(error).splitlines()[0], None)


# libvips on one thread. With its default worker threads, a damaged file's error sometimes does not reach the result:
# the same `vips avg FILE[fail_on=warning]` exited 0 in some runs and 1 in others on 6 of the 438 corpus files (four
# runs each; an error in a tile, a libpng CRC error), and never varied over four runs each with one thread.
VIPS_ENVIRONMENT = {**os.environ, "VIPS_CONCURRENCY": "1"}


def vips(path, fail_on):
    """Decodes every pixel (`vips avg`, one thread) with the given fail_on; returns the outcome and, when it worked,
    the size."""
    result = subprocess.run(["vips", "avg", f"{path}[fail_on={fail_on}]"], capture_output=True, text=True,
                            env=VIPS_ENVIRONMENT)
    if result.returncode != 0:
        return ("fail: " + (result.stderr.strip().splitlines() or ["?"])[0], None)
    header = subprocess.run(["vipsheader", path], capture_output=True, text=True).stdout
    match = re.search(r": (\d+)x(\d+) ", header)
    return ("ok", (int(match.group(1)), int(match.group(2))) if match else None)


def djpeg(path):
    result = subprocess.run(["djpeg", "-outfile", "/dev/null", path], capture_output=True, text=True)
    return {0: "clean", 2: "warning", 1: "error"}.get(result.returncode, f"exit {result.returncode}"), result.stderr.strip()


def chromium_sizes(names):
    """Loads every file as an <img> in headless Chromium; returns {name: (width, height) or None}."""
    page = os.path.join(work, "page.html")
    script = """
      const results = {};
      const images = [...document.images];
      let pending = images.length;
      const finish = () => { document.getElementById('out').textContent = JSON.stringify(results); };
      images.forEach(img => {
        const done = ok => { results[img.dataset.name] = ok ? [img.naturalWidth, img.naturalHeight] : null;
                             if (--pending === 0) finish(); };
        if (img.complete) { done(img.naturalWidth > 0); pending; } else {
          img.onload = () => done(true); img.onerror = () => done(false); }
      });
    """
    with open(page, "w") as out:
        out.write("<!doctype html><html><body><pre id=out></pre>")
        for name in names:
            # An absolute path: a file:// URL of a relative one (verdict-check's usual `.build/verdict-corpus`) names
            # no file, and every image failed once Chromium's version changed and its verdicts were judged anew.
            out.write(f'<img data-name="{name}" src="file://{os.path.abspath(os.path.join(corpus, name))}">')
        out.write(f"<script>window.addEventListener('load', () => {{{script}}});</script></body></html>")
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if browser is None:
        raise SystemExit("verdict oracles: chromium is not installed (scripts/browser-check.sh installs it)")
    result = subprocess.run([browser, "--headless=new", "--no-sandbox", "--disable-gpu", "--allow-file-access-from-files",
                             f"--user-data-dir={os.path.join(work, 'profile')}", "--virtual-time-budget=20000",
                             "--dump-dom", "file://" + page], capture_output=True, text=True, timeout=180)
    match = re.search(r"<pre id=\"out\">(.*?)</pre>", result.stdout, re.S)
    if not match or not match.group(1).strip():
        raise SystemExit(f"verdict oracles: Chromium gave no results: {result.stderr[-400:]}")
    return {name: tuple(size) if size else None for name, size in json.loads(match.group(1).replace("&quot;", '"')).items()}


def tool_versions():
    """The versions the peers' verdicts depend on."""
    import PIL
    def first_line(command):
        run = subprocess.run(command, capture_output=True, text=True)
        return (run.stdout.strip() or run.stderr.strip()).splitlines()[0] if (run.stdout or run.stderr) else "?"
    browser = shutil.which("chromium") or shutil.which("chromium-browser") or "chromium"
    # (vips's verdicts are made on one thread: its key says so, so verdicts made with its threads are not kept.)
    vips_version = f"{first_line(['vips', '--version'])}, VIPS_CONCURRENCY={VIPS_ENVIRONMENT['VIPS_CONCURRENCY']}"
    return {"pillow": PIL.__version__, "vips": vips_version, "djpeg": first_line(["djpeg", "-version"]),
            "chromium": first_line([browser, "--version"])}


names = sorted(os.listdir(corpus))
missing = [name for name in names if name not in verdicts]
if missing:
    raise SystemExit(f"verdict oracles: not in the report: {missing[:5]}")
started = time.time()
digests = {name: hashlib.sha256(open(os.path.join(corpus, name), "rb").read()).hexdigest() for name in names}
versions = tool_versions()
recorded = {}
stale = set(versions)  # the tools whose recorded verdicts were made with another version: asked about every file
if not rerecord and os.path.exists(RECORD):
    stored = json.load(open(RECORD))
    recorded = stored.get("files", {})
    stale = {tool for tool in versions if stored.get("tools", {}).get(tool) != versions[tool]}
    if stale:
        made = ", ".join(f"{tool} {stored.get('tools', {}).get(tool)}" for tool in sorted(stale))
        now = ", ".join(versions[tool] for tool in sorted(stale))
        print(f"verdict oracles: the record was made with {made}; these are {now}: those tools judge every file again")
fresh = {name for name in names if digests[name] not in recorded}
# The files each tool is asked about now: those the record lacks, and every file for a tool whose version changed.
asked = {tool: set(names) if tool in stale else fresh for tool in versions}
started_chromium = time.time()
browser = chromium_sizes(sorted(asked["chromium"])) if asked["chromium"] else {}
chromium_seconds = time.time() - started_chromium


def judge(name):
    """The five peer verdicts of `name`: today's from each tool asked about it, the record's from the others (a file
    the record lacks is asked of every tool)."""
    path = os.path.join(corpus, name)
    is_jpeg = verdicts[name]["format"] == "jpeg"
    kept = from_record(recorded[digests[name]])[0] if name not in fresh else None
    return (pillow(path) if name in asked["pillow"] else kept[0],
            vips(path, "none") if name in asked["vips"] else kept[1],
            vips(path, "truncated") if name in asked["vips"] else kept[2],
            vips(path, "warning") if name in asked["vips"] else kept[3],
            (djpeg(path) if is_jpeg else ("-", "")) if name in asked["djpeg"] else kept[4])


def stable(text):
    """A tool's message without what changes from run to run: the corpus's folder, vips's process id and time."""
    text = text.replace(corpus.rstrip("/") + "/", "")
    return re.sub(r"\(vips:\d+\): VIPS-WARNING \*\*: [\d:.]+: ", "VIPS-WARNING: ", text)


def as_record(peer, chrome):
    """A file's verdicts as the record keeps them: each message without the corpus's folder, then cut to 86 characters
    (cut first, a record depended on the length of the folder's path)."""
    return {"peers": [[stable(outcome)[:86], list(size) if isinstance(size, tuple) else stable(size) if size else size]
                      for outcome, size in peer],
            "chromium": list(chrome) if chrome else None}


def from_record(entry):
    peers = tuple((outcome, tuple(size) if isinstance(size, list) else size) for outcome, size in entry["peers"])
    return peers, tuple(entry["chromium"]) if entry["chromium"] else None


again = sorted(asked["pillow"] | asked["vips"] | asked["djpeg"])
with concurrent.futures.ThreadPoolExecutor(max_workers=4) as pool:
    judged_now = dict(zip(again, pool.map(judge, again)))
for name in sorted(set(again) | asked["chromium"]):  # sorted: files with the same bytes leave the same record
    peer = judged_now[name] if name in judged_now else from_record(recorded[digests[name]])[0]
    chrome = browser.get(name) if name in asked["chromium"] else from_record(recorded[digests[name]])[1]
    recorded[digests[name]] = as_record(peer, chrome)
peers, browser = {}, {}
for name in names:
    peers[name], browser[name] = from_record(recorded[digests[name]])
if rerecord:
    used = {digests[name] for name in names}
    with open(RECORD, "w") as out:
        json.dump({"tools": versions, "files": {digest: recorded[digest] for digest in sorted(used)}}, out, indent=0, sort_keys=True)
        out.write("\n")
failures = []
known = []
table = {}
for name in names:
    ours = verdicts[name]
    judged = verdict(ours)
    size = (ours["width"], ours["height"])
    (pil, pil_size), (vips_none, vips_size), (vips_truncated, _), (vips_warning, _), (dj, dj_message) = peers[name]
    is_jpeg = ours["format"] == "jpeg"
    chrome = browser.get(name)
    row = (judged, "ok" if pil == "ok" else "fail", "ok" if vips_none == "ok" else "fail",
           "ok" if vips_warning == "ok" else "fail", dj, "ok" if chrome else "fail")
    table[row] = table.get(row, 0) + 1
    if name in KNOWN_DIFFERENCES:
        known.append(f"{name}: {KNOWN_DIFFERENCES[name]}")
        continue
    sizes = {size, (ours.get("uprightWidth"), ours.get("uprightHeight"))}
    sequence = ours["format"] == "avif" and any("AVIF sequence" in warning for warning in ours["warnings"])
    if judged in ("valid", "valid-with-warning"):
        for tool, outcome, other in (("Pillow", pil, pil_size), ("libvips", vips_none, vips_size),
                                     ("Chromium", "ok" if chrome else "fail", chrome)):
            if tool == "libvips" and sequence:
                continue
            if outcome != "ok" or other not in sizes:
                failures.append(f"{name}: we say {judged} {size}, {tool} says {outcome} {other}")
        if judged == "valid" and is_jpeg and dj != "clean":
            failures.append(f"{name}: we say valid without a warning, djpeg says {dj}: {dj_message}")
    if judged in ("truncated", "corrupt") and is_jpeg:
        if dj == "clean":
            failures.append(f"{name}: we say {judged}, djpeg decodes it without a warning")
    if judged == "truncated" and vips_truncated == "ok" and pil == "ok":
        failures.append(f"{name}: we say truncated, libvips (fail_on=truncated) and Pillow both open it")

if (fresh or stale) and not rerecord:
    print(f"verdict oracles: {len(fresh)} files are not in {os.path.basename(RECORD)} (new or changed corpus files) and"
          f" {len(stale)} of the tools have new versions ({', '.join(sorted(stale)) or 'none'}): judged now;"
          " `make verdicts` records them")
counts = ", ".join(f"{tool} {len(asked[tool])}" for tool in sorted(versions))
print(f"verdict oracles: {len(names)} files; asked now: {counts} (Chromium {chromium_seconds:.0f} s); the rest from"
      f" {os.path.basename(RECORD)} ({versions['vips']}, Pillow {versions['pillow']}, {versions['chromium']}), {time.time() - started:.0f} s")
print("| TileCache | Pillow | libvips | libvips fail_on=warning | djpeg | Chromium | files |")
print("|---|---|---|---|---|---|---|")
for row, count in sorted(table.items()):
    print("| " + " | ".join(row) + f" | {count} |")
shutil.rmtree(work, ignore_errors=True)
for line in known:
    print(f"known difference: {line}")
if failures:
    print("\n".join(failures), file=sys.stderr)
    raise SystemExit(f"verdict oracles FAILED: {len(failures)} disagreements")
print("verdict oracles: passed")
