#!/usr/bin/env python3
"""Open sources side by side (issue 33): TileCache's imgproxy URLs against thumbor on the same sources and sizes, and
the resize itself against libvips' vipsthumbnail. Run through `make bench-open-sources`.

Usage: open_sources.py TILECACHE THUMBOR WORK_DIR ROUNDS OUTPUT_MARKDOWN

- Cold resized miss: every photo of the built-in origin (88 JPEGs, 640x396) asked once, resized to 128 wide, one
  request at a time over one kept-alive connection, from a fresh TileCache (new cache directory) and a fresh thumbor
  (file storage and result storage in new directories): per-request latency, p50 and p99.
- Warm hit: the same URLs again from both (TileCache: the memory tier; thumbor: its result storage).
- Cold resized miss of camera photos: the test suite's five photos (Tests/TestSupport/photos: a camera photo,
  scikit-image's and Pillow's test images, 512x600 to 1411x1411) and two 10- and 8-megapixel copies libvips enlarges
  from two of them, as phones take, served by Python's http.server on loopback, each asked five times under distinct
  URLs (`?c=N`), resized to 128 wide, right after the warm hits: where shrink on load (libjpeg's DCT scaling; thumbor's
  PIL `draft`) decides.
- The resize itself: the 88 photos on disk, thumbnailed to 128 wide at quality 82 by `tilecache thumbnail -j 1` and
  by `vipsthumbnail` (one process each for the whole set): seconds per image.
Rounds alternate TileCache and its peer; medians of the rounds are reported, with every round.
"""
import http.client
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import time
import urllib.parse
from datetime import datetime, timezone

from bench_support import camera_photos, free_port, percentile, stop, wait_http

TILECACHE, THUMBOR, WORK, ROUNDS, OUTPUT = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5]
processes = []


def log(message):
    print(f"bench-open-sources: {message}", file=sys.stderr, flush=True)


def fresh(path):
    shutil.rmtree(path, ignore_errors=True)
    os.makedirs(path)
    return path


def start(arguments, **kwargs):
    process = subprocess.Popen(arguments, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, **kwargs)
    processes.append(process)
    return process


def latencies(port, paths):
    """Each path asked once, in order, over one kept-alive connection: milliseconds per request."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    times = []
    for path in paths:
        started = time.perf_counter()
        connection.request("GET", path)
        response = connection.getresponse()
        body = response.read()
        times.append((time.perf_counter() - started) * 1000)
        if response.status != 200 or len(body) < 100:
            raise SystemExit(f"bench-open-sources: {path} gave {response.status}")
    connection.close()
    return times


def median(values):
    return statistics.median(values)


try:
    origin = start([TILECACHE, "origin", "--port", "0"])
    images_base = tiles_base = None
    for line in origin.stdout:
        if "--tiles-base" in line:
            tiles_base = line.split()[1]
        if "--images-base" in line:
            images_base = line.split()[1]
        if tiles_base and images_base:
            break
    origin_host = urllib.parse.urlparse(images_base).netloc
    sources = subprocess.run([TILECACHE, "prefetch", "--dry-run", "--kind", "full", "--images-base", images_base, "--tiles-base", tiles_base],
                             capture_output=True, text=True, check=True).stdout.split()
    def exists(source):
        connection = http.client.HTTPConnection(origin_host, timeout=30)
        connection.request("GET", urllib.parse.urlparse(source).path)
        return connection.getresponse().status == 200
    sources = [source for source in sources if exists(source)]  # the origin has no cesium.jpg, as the real host
    log(f"{len(sources)} photos from the built-in origin")
    ours_paths = [f"/_/rs:fit:128:0/q:82/plain/{source}" for source in sources]
    theirs_paths = [f"/unsafe/128x0/filters:quality(82)/{source.split('://', 1)[1]}" for source in sources]

    # Camera photos on a file server of their own.
    camera = fresh(os.path.join(WORK, "camera"))
    camera_names = camera_photos(camera)
    camera_port = free_port()
    start([sys.executable, "-m", "http.server", str(camera_port), "--bind", "127.0.0.1", "-d", camera])
    wait_http(camera_port, "/", "bench-open-sources")
    camera_sources = [f"127.0.0.1:{camera_port}/{name}?c={copy}" for copy in range(5) for name in camera_names]
    ours_camera = [f"/_/rs:fit:128:0/q:82/plain/http://{urllib.parse.quote(source, safe='/:')}" for source in camera_sources]
    theirs_camera = [f"/unsafe/128x0/filters:quality(82)/{urllib.parse.quote(source, safe='/:')}" for source in camera_sources]

    cold = {"TileCache": [], "thumbor": []}
    warm = {"TileCache": [], "thumbor": []}
    cold_camera = {"TileCache": [], "thumbor": []}
    for round_number in range(ROUNDS):
        port = free_port()
        serve = start([TILECACHE, "serve", "--port", str(port), "--cache-dir", fresh(os.path.join(WORK, "tc-cache")),
                       "--db", os.path.join(WORK, f"tc-{round_number}.sqlite"), "--allowed-sources", f"http://{origin_host}/,http://127.0.0.1:{camera_port}/",
                       "--allow-private-sources"])
        wait_http(port, "/healthz", "bench-open-sources")
        cold["TileCache"].append(latencies(port, ours_paths))
        warm["TileCache"].append(latencies(port, ours_paths))
        cold_camera["TileCache"].append(latencies(port, ours_camera))
        stop([serve])
        port = free_port()
        conf = os.path.join(WORK, "thumbor.conf")
        with open(conf, "w") as file:
            file.write(f"""ALLOW_UNSAFE_URL = True
STORAGE = 'thumbor.storages.file_storage'
FILE_STORAGE_ROOT_PATH = '{fresh(os.path.join(WORK, 'thumbor-storage'))}'
RESULT_STORAGE = 'thumbor.result_storages.file_storage'
RESULT_STORAGE_FILE_STORAGE_ROOT_PATH = '{fresh(os.path.join(WORK, 'thumbor-results'))}'
""")
        thumbor = start([THUMBOR, "--port", str(port), "--ip", "127.0.0.1", "--conf", conf])
        wait_http(port, "/healthcheck", "bench-open-sources")
        cold["thumbor"].append(latencies(port, theirs_paths))
        warm["thumbor"].append(latencies(port, theirs_paths))
        cold_camera["thumbor"].append(latencies(port, theirs_camera))
        stop([thumbor])
        log(f"round {round_number + 1}/{ROUNDS}: cold p50 TileCache {median(cold['TileCache'][-1]):.2f} ms, thumbor "
            f"{median(cold['thumbor'][-1]):.2f} ms; warm p50 {median(warm['TileCache'][-1]):.3f} ms, {median(warm['thumbor'][-1]):.3f} ms; "
            f"camera photos cold p50 {median(cold_camera['TileCache'][-1]):.2f} ms, {median(cold_camera['thumbor'][-1]):.2f} ms")

    # The resize itself, on files.
    photos = fresh(os.path.join(WORK, "photos"))
    for source in sources:
        with open(os.path.join(photos, source.rsplit("/", 1)[1]), "wb") as file:
            connection = http.client.HTTPConnection(origin_host, timeout=30)
            connection.request("GET", urllib.parse.urlparse(source).path)
            file.write(connection.getresponse().read())
    files = sorted(os.path.join(photos, name) for name in os.listdir(photos))
    resize = {"TileCache": [], "vipsthumbnail": []}
    for round_number in range(ROUNDS):
        out = fresh(os.path.join(WORK, "tc-thumbs"))
        started = time.perf_counter()
        subprocess.run([TILECACHE, "thumbnail", *files, "-o", out, "--width", "128", "-q", "82", "-j", "1"], check=True,
                       capture_output=True)
        resize["TileCache"].append((time.perf_counter() - started) / len(files) * 1000)
        out = fresh(os.path.join(WORK, "vips-thumbs"))
        started = time.perf_counter()
        subprocess.run(["vipsthumbnail", *files, "--size", "128x", "-o", os.path.join(out, "%s.jpg[Q=82]")], check=True,
                       capture_output=True, env=dict(os.environ, VIPS_CONCURRENCY="1"))
        resize["vipsthumbnail"].append((time.perf_counter() - started) / len(files) * 1000)
        log(f"resize round {round_number + 1}/{ROUNDS}: TileCache {resize['TileCache'][-1]:.2f} ms/image, vipsthumbnail "
            f"{resize['vipsthumbnail'][-1]:.2f} ms/image")
finally:
    stop(processes)

cpu = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name")), platform.processor())


def row(name, table, fraction):
    return median([percentile(run, fraction) for run in table[name]])


lines = [
    "# Open sources side by side: TileCache against thumbor and vipsthumbnail",
    "",
    f"Generated by `make bench-open-sources` (Benchmarks/compare/open_sources.py) on {datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC, "
    f"{os.cpu_count()} cores, {cpu}; {ROUNDS} alternating rounds, medians of the rounds' percentiles. TileCache is the release "
    "binary; thumbor 7.8.0 (PyPI, PIL engine) with file storage and result storage; libvips' vipsthumbnail from Debian.",
    "",
    f"{len(sources)} photos (JPEG, 640x396) from the built-in origin on loopback, resized to 128 wide at quality 82, asked one "
    "at a time over one kept-alive connection: TileCache as `/_/rs:fit:128:0/q:82/plain/<source>`, thumbor as "
    "`/unsafe/128x0/filters:quality(82)/<source>`.",
    "",
    "| | TileCache p50 | thumbor p50 | ratio | TileCache p99 | thumbor p99 | ratio |",
    "|---|---|---|---|---|---|---|",
]
for title, table in (("Cold resized miss (fresh caches: download, validate, decode, resize, encode, store)", cold),
                     ("Warm hit (TileCache: memory tier; thumbor: result storage)", warm),
                     (f"Cold resized miss, camera photos ({len(camera_names)} photos, 512x600 to 4032x2690, 5 URLs each)", cold_camera)):
    p50 = (row("TileCache", table, 0.5), row("thumbor", table, 0.5))
    p99 = (row("TileCache", table, 0.99), row("thumbor", table, 0.99))
    lines.append(f"| {title} | {p50[0]:.2f} ms | {p50[1]:.2f} ms | {p50[0] / p50[1]:.2f}x | {p99[0]:.2f} ms | {p99[1]:.2f} ms | "
                 f"{p99[0] / p99[1]:.2f}x |")
ours, theirs = median(resize["TileCache"]), median(resize["vipsthumbnail"])
lines += [
    "",
    f"The resize itself, {len(files)} files on disk, one process and one thread each for the whole set "
    "(`tilecache thumbnail FILES -o DIR --width 128 -q 82 -j 1`; `VIPS_CONCURRENCY=1 vipsthumbnail FILES --size 128x "
    "-o DIR/%s.jpg[Q=82]`), milliseconds per image, start-up included:",
    "",
    "| | TileCache | vipsthumbnail | ratio |",
    "|---|---|---|---|",
    f"| ms per image (median of {ROUNDS} rounds) | {ours:.2f} | {theirs:.2f} | {ours / theirs:.2f}x |",
    "",
    "Every round:",
    "",
    "| round | cold p50 TileCache | cold p50 thumbor | warm p50 TileCache | warm p50 thumbor | camera cold p50 TileCache | camera cold p50 thumbor | resize TileCache | resize vipsthumbnail |",
    "|---|---|---|---|---|---|---|---|---|",
]
for index in range(ROUNDS):
    lines.append(f"| {index + 1} | {median(cold['TileCache'][index]):.2f} ms | {median(cold['thumbor'][index]):.2f} ms | "
                 f"{median(warm['TileCache'][index]):.3f} ms | {median(warm['thumbor'][index]):.3f} ms | "
                 f"{median(cold_camera['TileCache'][index]):.2f} ms | {median(cold_camera['thumbor'][index]):.2f} ms | "
                 f"{resize['TileCache'][index]:.2f} ms | {resize['vipsthumbnail'][index]:.2f} ms |")
with open(OUTPUT, "w") as file:
    file.write("\n".join(lines) + "\n")
if os.environ.get("BENCH_SUMMARY_DIR"):  # make bench-compare's summary rows
    rows = []
    for title, table in (("Open sources: cold resized miss (imgproxy URL)", cold), ("Open sources: warm hit (imgproxy URL)", warm),
                         ("Open sources: cold resized miss of camera photos, up to 10 MP (imgproxy URL)", cold_camera)):
        p50 = (row("TileCache", table, 0.5), row("thumbor", table, 0.5))
        p99 = (row("TileCache", table, 0.99), row("thumbor", table, 0.99))
        rows.append({"comparison": title, "ours": f"p50 {p50[0]:.2f} ms, p99 {p99[0]:.2f} ms",
                     "peer": f"thumbor p50 {p50[1]:.2f} ms, p99 {p99[1]:.2f} ms",
                     "result": f"{p50[0] / p50[1]:.2f}× (p50), {p99[0] / p99[1]:.2f}× (p99)", "target": "faster, p50 and p99",
                     "met": p50[0] < p50[1] and p99[0] < p99[1]})
    rows.append({"comparison": "Open sources: the resize alone, one process over the photos", "ours": f"{ours:.2f} ms/image",
                 "peer": f"vipsthumbnail {theirs:.2f} ms/image", "result": f"{ours / theirs:.2f}×", "target": "faster",
                 "met": ours < theirs})
    with open(os.path.join(os.environ["BENCH_SUMMARY_DIR"], "open-sources.json"), "w") as file:
        json.dump({"rows": rows}, file)
print("\n".join(lines))
