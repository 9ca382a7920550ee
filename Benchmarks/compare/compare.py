#!/usr/bin/env python3
"""TileCache side by side with the tools users would pick instead (issue 5). Run through run.sh (make bench-compare).

Every comparison alternates TileCache and its peers for ROUNDS rounds and reports medians; ratios are computed from
medians measured in this one run. Writes docs/benchmarks.md and docs/images/benchmarks.svg.
Usage: compare.py TILECACHE CACHE_COMPARISON WORK_DIR ROUNDS
"""
import json
import os
import platform
import re
import shutil
import socket
import statistics
import subprocess
import sys
import time
from datetime import datetime, timezone

from bench_support import write_nginx_config

TILECACHE, CACHE_COMPARISON, WORK, ROUNDS = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
PYTHON = sys.executable
WRK_SECONDS = int(os.environ.get("WRK_SECONDS", "6"))
SOAK_SECONDS = int(os.environ.get("SOAK_SECONDS", "600"))
SERVE_FLOOR = os.path.join(os.path.dirname(CACHE_COMPARISON), "ServeFloor")
processes = []
results = []        # rows for the report: (number, title, tilecache, peer, ratio text, target, met)
sections = []       # markdown sections with the details
commands = []       # exact commands


def log(message):
    print(f"bench-compare: {message}", file=sys.stderr, flush=True)


def free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start(arguments, ready_pattern=None, **kwargs):
    process = subprocess.Popen(arguments, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, **kwargs)
    processes.append(process)
    if ready_pattern:
        deadline = time.time() + 120
        while time.time() < deadline:
            line = process.stdout.readline()
            match = re.search(ready_pattern, line or "")
            if match:
                return process, match.group(1)
            if process.poll() is not None:
                raise SystemExit(f"bench-compare: {arguments[0]} exited early")
        raise SystemExit(f"bench-compare: {arguments[0]} did not start")
    return process, None


def wait_http(url, seconds=60):
    deadline = time.time() + seconds
    while time.time() < deadline:
        if subprocess.run(["curl", "-s", "-k", "-o", "/dev/null", "-f", url]).returncode == 0:
            return
        time.sleep(0.2)
    raise SystemExit(f"bench-compare: {url} did not come up")


def timed(arguments, **kwargs):
    started = time.perf_counter()
    subprocess.run(arguments, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, **kwargs)
    return time.perf_counter() - started


def fresh(path):
    shutil.rmtree(path, ignore_errors=True)
    os.makedirs(path)
    return path


def median(values):
    return statistics.median(values)


def alternate(named_runs, prepare=None):
    """Runs each (name, function) once per round, in turn, ROUNDS times; returns name -> list of seconds."""
    times = {name: [] for name, _ in named_runs}
    for round_number in range(ROUNDS):
        for name, run in named_runs:
            if prepare:
                prepare(name)
            times[name].append(run())
        log(f"  round {round_number + 1}/{ROUNDS}: " + ", ".join(f"{n} {times[n][-1]:.3f}" for n, _ in named_runs))
    return times


def table(headers, rows):
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows]
    return "\n".join(lines)


def wrk(url, seconds=None, script=None):
    output = subprocess.run(["wrk", "-t2", "-c32", f"-d{seconds or WRK_SECONDS}s", "--latency"] + (["-s", script] if script else []) + [url],
                            capture_output=True, text=True).stdout
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", output).group(1))
    p99_text = re.search(r"99%\s+([\d.]+)(us|ms|s)", output)
    scale = {"us": 0.001, "ms": 1, "s": 1000}[p99_text.group(2)]
    errors = re.search(r"Non-2xx or 3xx responses: (\d+)", output)
    return rps, float(p99_text.group(1)) * scale, int(errors.group(1)) if errors else 0


def serve(name, *options):
    """Starts `tilecache serve` against the origin with a fresh cache and database named `name`; returns (process, URL)
    once it answers /healthz."""
    port = free_port()
    process, _ = start([TILECACHE, "serve", "--port", str(port), *options, "--cache-dir", fresh(os.path.join(WORK, f"{name}-cache")),
                        "--db", os.path.join(WORK, f"{name}.sqlite"), "--tiles-base", tiles_base, "--images-base", images_base])
    url = f"{'https' if '--tls-cert' in options else 'http'}://127.0.0.1:{port}"
    wait_http(url + "/healthz")
    return process, url


try:
    # --- The origin, warmed so its own image generation is never measured.
    origin, tiles_base = start([TILECACHE, "origin", "--port", "0", "--latency-ms", "20"], r"--tiles-base (\S+)")
    images_base = tiles_base.replace("/periodictable", "/images-of-elements")
    origin_host = tiles_base.split("/")[2]
    urls_file = os.path.join(WORK, "urls.txt")
    with open(urls_file, "w") as file:
        subprocess.run([TILECACHE, "prefetch", "--dry-run", "--tiles-base", tiles_base, "--images-base", images_base],
                       stdout=file, check=True)
    urls = [line.strip() for line in open(urls_file) if line.strip()]
    log(f"origin at {tiles_base}, {len(urls)} URLs (20 ms latency per response)")
    subprocess.run(["curl", "-s", "--parallel", "--parallel-max", "8", "-o", "/dev/null"] + sum([[u, "-o", "/dev/null"] for u in urls], []),
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    # --- 1. Cold prefetch at concurrency 8.
    log("1. cold prefetch at concurrency 8")
    curl_config = os.path.join(WORK, "curl.config")
    with open(curl_config, "w") as file:
        for index, url in enumerate(urls):
            file.write(f'url = "{url}"\noutput = "{WORK}/curl-out/{index}"\n')
    cold_cache = os.path.join(WORK, "cold-cache")
    runs = [
        ("tilecache", lambda: timed([TILECACHE, "prefetch", "--urls", urls_file, "--cache-dir", fresh(cold_cache), "-j", "8", "--format", "json"])),
        ("curl", lambda: (fresh(f"{WORK}/curl-out"), timed(["curl", "-s", "--parallel", "--parallel-max", "8", "-K", curl_config]))[1]),
        ("aria2c", lambda: timed(["aria2c", "-q", "-j", "8", "-x", "1", "--allow-overwrite=true", "--auto-file-renaming=false",
                                   "-d", fresh(f"{WORK}/aria-out"), "-i", urls_file])),
        ("python-asyncio-pillow", lambda: timed([PYTHON, os.path.join(HERE, "peer_asyncio_pillow.py"), urls_file, fresh(f"{WORK}/py-out")])),
    ]
    times = alternate(runs)
    medians = {name: median(values) for name, values in times.items()}
    ratio = medians["tilecache"] / medians["curl"]
    faster = medians["tilecache"] < medians["aria2c"] and medians["tilecache"] < medians["python-asyncio-pillow"]
    results.append((1, "Cold prefetch, concurrency 8 (TileCache also validates and decodes)", f"{medians['tilecache']:.3f} s",
                    f"curl {medians['curl']:.3f} s (floor {((len(urls) + 7) // 8) * 0.02:.3f} s)", f"{ratio:.2f}× curl",
                    "≤ 1.0× curl, faster than aria2c and Python", ratio <= 1.0 and faster))
    sections.append("### 1. Cold prefetch of every catalogue image, concurrency 8\n\n" + table(
        ["tool", "median wall time", "runs (s)"],
        [[name, f"{medians[name]:.3f} s", ", ".join(f"{v:.3f}" for v in values)] for name, values in times.items()])
        + f"\n\nFloor: ⌈{len(urls)} / 8⌉ × 20 ms = {((len(urls) + 7) // 8) * 0.02:.3f} s of origin latency alone.")
    # Start-up, which the cold prefetch pays and curl barely does: a process that prints its version, 100 alternating
    # runs each (medians, ms).
    startup = {"tilecache --version": [TILECACHE, "--version"], "curl --version": ["curl", "--version"]}
    startup_ms = {name: [] for name in startup}
    for _ in range(100):
        for name, arguments in startup.items():
            startup_ms[name].append(timed(arguments) * 1000)
    startup_text = ", ".join(f"`{name}` {median(values):.1f} ms" for name, values in startup_ms.items())
    sections[-1] += f"\n\nStart-up (medians of 100 alternating runs): {startup_text}."
    commands += [f"tilecache prefetch --urls urls.txt --cache-dir <fresh> -j 8 --format json",
                 "curl -s --parallel --parallel-max 8 -K curl.config   # url/output pairs for every URL",
                 "aria2c -q -j 8 -x 1 -d <fresh> -i urls.txt",
                 "python peer_asyncio_pillow.py urls.txt <fresh>   # aiohttp, 8 at a time, Pillow full decode"]

    # --- 2. Warm prefetch from the disk cache in a new process, against just decoding the same files.
    log("2. warm prefetch from disk against the decode floor")
    files_dir = os.path.join(WORK, "files")
    fresh(files_dir)
    for index, url in enumerate(urls):
        source = os.path.join(WORK, "curl-out", str(index))
        if os.path.exists(source) and os.path.getsize(source) > 200:
            shutil.copy(source, os.path.join(files_dir, f"{index:04d}.jpg"))
    subprocess.run([TILECACHE, "prefetch", "--urls", urls_file, "--cache-dir", fresh(cold_cache)], stdout=subprocess.DEVNULL)
    runs = [("tilecache warm", lambda: timed([TILECACHE, "prefetch", "--urls", urls_file, "--cache-dir", cold_cache, "--format", "json"])),
            ("decode only", lambda: timed([TILECACHE, "inspect", files_dir, "--full-decode", "--format", "json"]))]
    times = alternate(runs)
    medians = {name: median(values) for name, values in times.items()}
    ratio = medians["tilecache warm"] / medians["decode only"]
    results.append((2, "Warm prefetch from disk, new process (the cesium 404 remembered)",
                    f"{medians['tilecache warm']:.3f} s", f"decode {medians['decode only']:.3f} s", f"{ratio:.2f}× floor",
                    "≤ 1.1× the decode floor", ratio <= 1.1))
    sections.append("### 2. Warm prefetch from the disk cache, new process\n\n" + table(
        ["run", "median", "runs (s)"], [[n, f"{medians[n]:.3f} s", ", ".join(f"{v:.3f}" for v in values)] for n, values in times.items()])
        + f"\n\nThe floor is `tilecache inspect --full-decode` on the same {len(os.listdir(files_dir))} files (read and fully decode, same"
        " process start-up). The catalogue's one broken URL (cesium's photo, a 404) is not asked again: the cold run's answer"
        " is remembered in the disk cache for `--negative-ttl` (60 s).")
    commands += ["tilecache prefetch --urls urls.txt --cache-dir <warm>   # after one cold run", "tilecache inspect --full-decode <the same files>"]

    # --- 3. Validation of 1000 images, JPEGs and PNGs, against the floor of the decoding it must do.
    log("3. validating a directory of 1000 JPEGs and PNGs")
    pngs_dir = fresh(os.path.join(WORK, "pngs"))
    subprocess.run([PYTHON, "-c", "import sys, os; from PIL import Image\n"
                    "for name in sorted(os.listdir(sys.argv[1])):\n"
                    "    Image.open(os.path.join(sys.argv[1], name)).save(os.path.join(sys.argv[2], name[:-4] + '.png'))",
                    files_dir, pngs_dir], check=True)
    many = fresh(os.path.join(WORK, "thousand"))
    sources = sorted(os.listdir(files_dir))
    valid = []
    for index in range(1000):
        png = index % 2 == 1
        source = os.path.join(pngs_dir, sources[index % len(sources)][:-4] + ".png") if png else os.path.join(files_dir, sources[index % len(sources)])
        target = os.path.join(many, f"{index:04d}." + ("png" if png else "jpg"))
        if index % 25 == 0:
            with open(source, "rb") as file:
                data = file.read()
            with open(target, "wb") as file:
                file.write(data[: len(data) // 2] if index % 50 == 0 else b"<!DOCTYPE html><html><body>404</body></html>")
        else:
            shutil.copy(source, target)
            valid.append(target)
    names = [os.path.join(many, n) for n in sorted(os.listdir(many))]
    floor_script = ('for f; do case "$f" in *.png) pngtopnm "$f" > /dev/null 2>&1;; '
                    '*) djpeg -scale 1/8 -outfile /dev/null "$f" 2> /dev/null;; esac; done')
    floor_input = "".join(path + "\0" for path in valid)

    def decode_floor():
        started = time.perf_counter()
        subprocess.run(["xargs", "-0", "-P", str(os.cpu_count()), "-n", "25", "sh", "-c", floor_script, "floor"],
                       input=floor_input, text=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        return time.perf_counter() - started

    runs = [("tilecache inspect", lambda: timed([TILECACHE, "inspect", many, "--format", "json"])),
            ("djpeg + libpng floor", decode_floor),
            ("identify", lambda: timed(["identify", "-regard-warnings"] + names)),
            ("pillow", lambda: timed([PYTHON, os.path.join(HERE, "peer_pillow_inspect.py"), many]))]
    times = alternate(runs)
    medians = {name: median(values) for name, values in times.items()}
    vs_floor = medians["tilecache inspect"] / medians["djpeg + libpng floor"]
    vs_identify = medians["identify"] / medians["tilecache inspect"]
    vs_pillow = medians["pillow"] / medians["tilecache inspect"]
    valid_pngs = sum(path.endswith(".png") for path in valid)
    results.append((3, f"Validate 1000 images ({len(valid) - valid_pngs} JPEG, {valid_pngs} PNG valid; 20 truncated, 20 HTML)", f"{medians['tilecache inspect']:.3f} s",
                    f"floor {medians['djpeg + libpng floor']:.3f} s; identify {medians['identify']:.3f} s, Pillow {medians['pillow']:.3f} s",
                    f"{vs_floor:.2f}× floor ({vs_identify:.1f}× / {vs_pillow:.1f}× faster than identify / Pillow)", "≤ 1.1× the floor",
                    vs_floor <= 1.1))
    sections.append("### 3. Validating a directory of 1000 images\n\n" + table(
        ["tool", "median", "runs (s)"], [[n, f"{medians[n]:.3f} s", ", ".join(f"{v:.3f}" for v in values)] for n, values in times.items()])
        + f"\n\nHalf the files are JPEGs, half PNGs (the same images saved by Pillow); 20 JPEGs are cut in half and 20 `.png`"
        " files are HTML."
        " The floor is the decoding validation cannot skip, run on every core: libjpeg-turbo's entropy decoding of each valid JPEG"
        " (`djpeg -scale 1/8 -outfile /dev/null`) and libpng's full read of each valid PNG (`pngtopnm`), 25 files per shell,"
        f" `xargs -P {os.cpu_count()}`. `identify` reads headers (it does not decode every pixel); Pillow and TileCache decode"
        " (TileCache's JPEG check at the smallest DCT scale, as djpeg's).")
    commands += ["tilecache inspect <dir> --format json",
                 f"xargs -0 -P {os.cpu_count()} -n 25 sh -c '{floor_script}' floor   # the valid files",
                 "identify -regard-warnings <1000 files>", "python peer_pillow_inspect.py <dir>"]

    # --- 4. Decode throughput against tjbench.
    log("4. decode throughput against tjbench")
    photo = max((os.path.join(files_dir, n) for n in sources), key=os.path.getsize)
    size = subprocess.run(["identify", "-format", "%w %h", photo], capture_output=True, text=True).stdout.split()
    megapixels = int(size[0]) * int(size[1]) / 1e6
    decode_throughput = os.path.join(os.path.dirname(CACHE_COMPARISON), "DecodeThroughput")
    ours, theirs = [], []
    for round_number in range(ROUNDS):
        ours.append(float(subprocess.run([decode_throughput, photo, "2"], capture_output=True, text=True, check=True).stdout))
        output = subprocess.run(["tjbench", photo, "-rgb", "-benchtime", "2", "-warmup", "1"], capture_output=True, text=True).stdout
        theirs.append(float(re.search(r"Decompress.*?Throughput:\s+([\d.]+) Megapixels/sec", output, re.S).group(1)))
        log(f"  round {round_number + 1}/{ROUNDS}: tilecache {ours[-1]:.1f} MP/s, tjbench {theirs[-1]:.1f} MP/s")
    ratio = median(ours) / median(theirs)
    results.append((4, f"Decode throughput, {size[0]}×{size[1]} photo, one thread", f"{median(ours):.1f} MP/s",
                    f"tjbench {median(theirs):.1f} MP/s", f"{ratio:.2f}× tjbench", "≥ 0.9× tjbench", ratio >= 0.9))
    sections.append(f"### 4. Decode throughput against tjbench\n\nBoth decode the same {size[0]}×{size[1]} photo in memory, one thread,"
                    f" for 2 s after a warm-up: TileCache through `ImageInspector.validate` (sniff, header, strict full decode"
                    f" to RGB; `Benchmarks/DecodeThroughput`), libjpeg-turbo through `tjbench photo.jpg -rgb -benchtime 2 -warmup 1`.\n\n" + table(
                        ["round", "TileCache MP/s", "tjbench MP/s"],
                        [[i + 1, f"{a:.1f}", f"{b:.1f}"] for i, (a, b) in enumerate(zip(ours, theirs))]))
    commands += ["Benchmarks/.build/release/DecodeThroughput photo.jpg 2", "tjbench photo.jpg -rgb -benchtime 2 -warmup 1"]

    # --- 5. MemoryCache against NSCache.
    log("5. MemoryCache against NSCache")
    cache = json.loads(subprocess.run([CACHE_COMPARISON], capture_output=True, text=True, check=True).stdout)
    rows, all_faster, tiny_slowdowns = [], True, []
    for operation in ["get", "set"]:
        for threads in [1, 2]:
            ours_rate = cache[f"{operation}_{threads}_memorycache"]
            theirs_rate = cache[f"{operation}_{threads}_nscache"]
            all_faster &= ours_rate > theirs_rate
            tiny_rate = cache[f"{operation}_{threads}_tinylfu"]
            tiny_slowdowns.append(ours_rate / tiny_rate)
            rows.append([operation, threads, f"{ours_rate / 1e6:.2f} M/s", f"{theirs_rate / 1e6:.2f} M/s", f"{ours_rate / theirs_rate:.2f}×",
                         f"{tiny_rate / 1e6:.2f} M/s", f"{ours_rate / tiny_rate:.2f}×"])
    get1 = cache["get_1_memorycache"] / cache["get_1_nscache"]
    results.append((5, "Memory cache get and set, 1 and 2 threads", f"get {cache['get_1_memorycache'] / 1e6:.1f} M/s",
                    f"NSCache {cache['get_1_nscache'] / 1e6:.1f} M/s", f"{get1:.1f}× (get, 1 thread)", "faster at all four",
                    all_faster))
    worst_tiny = max(tiny_slowdowns)
    results.append((5, "W-TinyLFU get and set against LRU (goal: within 1.5×)", f"worst {worst_tiny:.2f}× LRU's time",
                    "MemoryCache LRU", f"{worst_tiny:.2f}×", "<= 1.5×", worst_tiny <= 1.5))
    sections.append("### 5. MemoryCache against Foundation's NSCache (count 100, cost 10 MiB)\n\n" + table(
        ["operation", "threads", "MemoryCache (LRU)", "NSCache", "ratio", "MemoryCache (W-TinyLFU)", "LRU / W-TinyLFU"], rows)
        + "\n\nMedians of 5 alternating rounds of 1,000,000 operations (`Benchmarks/CacheComparison`). The last column is how"
        " many times faster the LRU policy is than W-TinyLFU (`--memory-policy tinylfu`) at the same operation; the goal is at"
        " most 1.5×.")
    commands += ["Benchmarks/.build/release/CacheComparison"]

    # --- 6. The service against nginx serving the same bytes.
    log("6. the service against nginx")
    _, service = serve("service")
    static = fresh(os.path.join(WORK, "static"))
    subprocess.run(["curl", "-s", "-o", os.path.join(static, "thumb.jpg"), service + "/api/v1/elements/26/thumbnail"], check=True)
    subprocess.run(["curl", "-s", "-o", os.path.join(static, "thumb-64.jpg"), service + "/api/v1/elements/26/thumbnail?w=64"], check=True)
    nginx_port = free_port()
    start(["nginx", "-c", write_nginx_config(WORK, static, nginx_port)])
    wait_http(f"http://127.0.0.1:{nginx_port}/thumb.jpg")
    # The floors: fixed bytes from a minimal Hummingbird route, a minimal SwiftNIO HTTP/1 server and a SwiftNIO channel
    # with no HTTP codec; and the service with every request through the router.
    floors = {}
    for kind in ["hummingbird", "nio", "nio-raw"]:
        _, port = start([SERVE_FLOOR, kind, "0", os.path.join(static, "thumb.jpg")], r"listening on (\d+)")
        floors[kind] = f"http://127.0.0.1:{port}/thumb.jpg"
    _, routed = serve("routed", "--no-fast-path")
    for path in ["/api/v1/elements/26/thumbnail", "/api/v1/elements/26/thumbnail?w=64"]:
        subprocess.run(["curl", "-s", "-o", "/dev/null", routed + path], check=True)
    wrk_rows = []
    for label, ours_url, theirs_url in [("cached thumbnail", "/api/v1/elements/26/thumbnail", "/thumb.jpg"),
                                        ("resized variant (w=64)", "/api/v1/elements/26/thumbnail?w=64", "/thumb-64.jpg")]:
        targets = [("tilecache", service + ours_url), ("nginx", f"http://127.0.0.1:{nginx_port}{theirs_url}"),
                   ("tilecache --no-fast-path", routed + ours_url)]
        if theirs_url == "/thumb.jpg":
            targets += [("Hummingbird floor", floors["hummingbird"]), ("SwiftNIO floor", floors["nio"]),
                        ("SwiftNIO floor, no HTTP codec", floors["nio-raw"])]
        rps, p99 = {name: [] for name, _ in targets}, {name: [] for name, _ in targets}
        for round_number in range(ROUNDS):
            for name, url in targets:
                measured = wrk(url)
                rps[name].append(measured[0])
                p99[name].append(measured[1])
            log(f"  {label} round {round_number + 1}/{ROUNDS}: " + ", ".join(f"{name} {rps[name][-1]:.0f}" for name, _ in targets))
        ours, theirs = median(rps["tilecache"]), median(rps["nginx"])
        ratio, p99_ratio = ours / theirs, median(p99["tilecache"]) / median(p99["nginx"])
        results.append((6, f"Service: {label}", f"{ours:,.0f} req/s (p99 {median(p99['tilecache']):.2f} ms)",
                        f"nginx {theirs:,.0f} req/s (p99 {median(p99['nginx']):.2f} ms)", f"{ratio:.2f}× nginx, p99 {p99_ratio:.2f}×",
                        "≥ 1.0× nginx, p99 ≤ 1.5×", ratio >= 1.0 and p99_ratio <= 1.5))
        for name, _ in targets:
            wrk_rows.append([label, name, f"{median(rps[name]):,.0f}", f"{median(p99[name]):.2f}", f"{median(rps[name]) / theirs:.2f}",
                             ", ".join(f"{v:,.0f}" for v in rps[name])])
    sections.append(f"### 6. The service against nginx serving the same bytes as static files\n\n`wrk -t2 -c32 -d{WRK_SECONDS}s"
                    f" --latency`, {ROUNDS} alternating rounds (medians); wrk, nginx (2 workers) and TileCache share the 2 cores."
                    " The floors answer the same thumbnail's bytes: `Benchmarks/ServeFloor hummingbird` (one Hummingbird route, no"
                    " middleware), `ServeFloor nio` (SwiftNIO's HTTP/1 pipeline and one handler on the event loop) and"
                    " `ServeFloor nio-raw` (a SwiftNIO channel with no HTTP codec: one handler finds each head's blank line and"
                    " writes fixed response bytes, the floor under any HTTP/1 server on a NIO channel)."
                    " `--no-fast-path` sends every request through Hummingbird's router and the middleware, as before the fast path.\n\n"
                    + table(["target", "server", "req/s", "p99 ms", "× nginx", "rounds (req/s)"], wrk_rows))
    commands += [f"wrk -t2 -c32 -d{WRK_SECONDS}s --latency http://127.0.0.1:PORT/api/v1/elements/26/thumbnail[?w=64]",
                 f"wrk -t2 -c32 -d{WRK_SECONDS}s --latency http://127.0.0.1:NGINX/thumb[-64].jpg",
                 "Benchmarks/.build/release/ServeFloor hummingbird|nio|nio-raw 0 thumb.jpg"]

    # --- 6c. HTTP/2 over TLS: h2load against nginx with http2 on the same certificate.
    log("6c. HTTP/2 over TLS against nginx")
    certificate, key = os.path.join(WORK, "tls.crt"), os.path.join(WORK, "tls.key")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-days", "1",
                    "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", key, "-out", certificate],
                   check=True, capture_output=True)
    os.chmod(key, 0o644)  # nginx's workers read it as www-data
    h2_nginx_port = free_port()
    h2_nginx_conf = os.path.join(WORK, "nginx-h2.conf")
    with open(h2_nginx_conf, "w") as file:
        file.write(f"""worker_processes 2; pid {WORK}/nginx-h2.pid; error_log {WORK}/nginx-h2-error.log; daemon off;
events {{ worker_connections 1024; }}
http {{ access_log off; sendfile on; tcp_nopush on; keepalive_requests 100000;
  types {{ image/jpeg jpg; }}
  server {{ listen 127.0.0.1:{h2_nginx_port} ssl http2; ssl_certificate {certificate}; ssl_certificate_key {key};
           root {static}; etag on; }} }}
""")
    start(["nginx", "-c", h2_nginx_conf])
    _, tls_service = serve("tls", "--tls-cert", certificate, "--tls-key", key)
    _, h2_floor_port = start([SERVE_FLOOR, "nio-h2", "0", os.path.join(static, "thumb.jpg"), certificate, key], r"listening on (\d+)")

    def h2load(name, url):
        """req/s of one h2load run. Every request to TileCache must succeed; a peer (nginx, the floor) may fail a
        handful in ten thousand (nginx 1.22 failed 5 of 446,066 in one run, streams reset as h2load stopped its
        clients), which does not move its rate: logged; with more, that run is made once more."""
        for attempt in range(2):
            output = subprocess.run(["h2load", "-t2", "-c32", "-m10", f"-D{WRK_SECONDS}", "--warm-up-time=1", url],
                                    capture_output=True, text=True).stdout
            finished = re.search(r"finished in [\d.]+\w+, ([\d.]+) req/s", output)
            counts = re.search(r"requests: (\d+) total, \d+ started, \d+ done, (\d+) succeeded, (\d+) failed", output)
            if finished and counts:
                total, failed = int(counts.group(1)), int(counts.group(3))
                if failed == 0:
                    return float(finished.group(1))
                if name != "tilecache" and failed <= total / 10_000:
                    log(f"  h2load: {failed} of {total} requests to {name} failed (a peer's; its rate kept)")
                    return float(finished.group(1))
            if name == "tilecache" or attempt == 1:
                raise SystemExit(f"bench-compare: h2load against {name} ({url}) failed:\n{output}")
            log(f"  h2load against {name} failed; once more")

    for attempt in range(60):  # both up, and the thumbnail in the service's memory
        if subprocess.run(["curl", "-sk", "--http2", "-o", "/dev/null", "-f", tls_service + "/api/v1/elements/26/thumbnail"]).returncode == 0 \
                and subprocess.run(["curl", "-sk", "--http2", "-o", "/dev/null", "-f", f"https://127.0.0.1:{h2_nginx_port}/thumb.jpg"]).returncode == 0:
            break
        time.sleep(0.2)
    h2_targets = [("tilecache", tls_service + "/api/v1/elements/26/thumbnail"), ("nginx", f"https://127.0.0.1:{h2_nginx_port}/thumb.jpg"),
                  ("SwiftNIO floor", f"https://127.0.0.1:{h2_floor_port}/thumb.jpg")]
    h2_rps = {name: [] for name, _ in h2_targets}
    for round_number in range(ROUNDS):
        for name, url in h2_targets:
            h2_rps[name].append(h2load(name, url))
        log(f"  h2 round {round_number + 1}/{ROUNDS}: " + ", ".join(f"{name} {h2_rps[name][-1]:.0f}" for name, _ in h2_targets))
    ours, theirs = median(h2_rps["tilecache"]), median(h2_rps["nginx"])
    results.append((6, "Service over HTTP/2 and TLS: cached thumbnail (h2load)", f"{ours:,.0f} req/s", f"nginx {theirs:,.0f} req/s",
                    f"{ours / theirs:.2f}× nginx", "≥ 0.9× nginx", ours / theirs >= 0.9))
    sections.append(f"### 6c. HTTP/2 over TLS against nginx\n\n`h2load -t2 -c32 -m10 -D{WRK_SECONDS} --warm-up-time=1` (Debian's"
                    " nghttp2-client), one self-signed P-256 certificate for both, TLS 1.3 and HTTP/2 by ALPN; nginx with"
                    f" `listen ssl http2` (2 workers) serving the same bytes as a static file; the floor is `Benchmarks/ServeFloor"
                    " nio-h2` (swift-nio-http2 over NIOSSL, a stream channel per request and one handler answering on the event"
                    f" loop, no Hummingbird). {ROUNDS} alternating rounds.\n\n"
                    + table(["server", "req/s (median)", "× nginx", "rounds (req/s)"],
                            [[name, f"{median(h2_rps[name]):,.0f}", f"{median(h2_rps[name]) / theirs:.2f}",
                              ", ".join(f"{v:,.0f}" for v in h2_rps[name])] for name, _ in h2_targets]))
    commands += [f"h2load -t2 -c32 -m10 -D{WRK_SECONDS} --warm-up-time=1 https://127.0.0.1:PORT/api/v1/elements/26/thumbnail   # serve --tls-cert --tls-key",
                 f"h2load -t2 -c32 -m10 -D{WRK_SECONDS} --warm-up-time=1 https://127.0.0.1:NGINX/thumb.jpg   # listen ssl http2",
                 "Benchmarks/.build/release/ServeFloor nio-h2 0 thumb.jpg tls.crt tls.key"]

    # --- 7. Resized thumbnails against thumbor with file result storage.
    log("7. resized thumbnails against thumbor")
    thumbor_port = free_port()
    thumbor_conf = os.path.join(WORK, "thumbor.conf")
    with open(thumbor_conf, "w") as file:
        file.write(f"""ALLOW_UNSAFE_URL = True
RESULT_STORAGE = 'thumbor.result_storages.file_storage'
RESULT_STORAGE_FILE_STORAGE_ROOT_PATH = '{WORK}/thumbor-results'
RESULT_STORAGE_STORES_UNSAFE = True
STORAGE = 'thumbor.storages.file_storage'
FILE_STORAGE_ROOT_PATH = '{WORK}/thumbor-storage'
QUALITY = 85
""")
    thumbor = os.path.join(os.path.dirname(PYTHON), "thumbor")
    start([thumbor, "--port", str(thumbor_port), "--conf", thumbor_conf, "--ip", "127.0.0.1"])
    thumbor_url = f"http://127.0.0.1:{thumbor_port}/unsafe/128x0/{origin_host}/periodictable/Tiles/026/s7.JPG"
    wait_http(thumbor_url)
    ours_url = service + "/api/v1/elements/26/thumbnail?w=128"
    subprocess.run(["curl", "-s", "-o", "/dev/null", ours_url])
    ours_rps, theirs_rps = [], []
    for round_number in range(ROUNDS):
        ours_rps.append(wrk(ours_url)[0])
        theirs_rps.append(wrk(thumbor_url)[0])
        log(f"  round {round_number + 1}/{ROUNDS}: tilecache {ours_rps[-1]:.0f} req/s, thumbor {theirs_rps[-1]:.0f} req/s")
    ratio = median(ours_rps) / median(theirs_rps)
    results.append((7, "Resized thumbnail (w=128), both warm", f"{median(ours_rps):,.0f} req/s", f"thumbor {median(theirs_rps):,.0f} req/s",
                    f"{ratio:.1f}× thumbor", "≥ 5× thumbor", ratio >= 5))
    sections.append("### 7. Resized thumbnails against thumbor (file result storage on, both warm)\n\n" + table(
        ["round", "TileCache req/s", "thumbor req/s"], [[i + 1, f"{a:,.0f}", f"{b:,.0f}"] for i, (a, b) in enumerate(zip(ours_rps, theirs_rps))]))
    commands += [f"thumbor --port P --conf thumbor.conf   # RESULT_STORAGE file_storage; wrk on /unsafe/128x0/<origin>/periodictable/Tiles/026/s7.JPG"]

    # --- 8. Peak resident memory of a full prefetch with the default limits.
    log("8. peak resident memory of a full prefetch")
    peaks = []
    for round_number in range(ROUNDS):
        output = subprocess.run(["/usr/bin/time", "-v", TILECACHE, "prefetch", "--urls", urls_file, "--cache-dir", fresh(cold_cache)],
                                capture_output=True, text=True).stderr
        peaks.append(int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", output).group(1)) / 1024)
    limit = 10 + 64
    results.append((8, "Peak RSS, full cold prefetch, default limits (10 MiB memory cache)", f"{median(peaks):.1f} MiB", "-",
                    f"{median(peaks):.1f} / {limit} MiB", f"≤ {limit} MiB", median(peaks) <= limit))
    sections.append("### 8. Peak resident memory\n\n`/usr/bin/time -v tilecache prefetch` (cold, defaults): "
                    + ", ".join(f"{p:.1f}" for p in peaks) + " MiB.")
    commands += ["/usr/bin/time -v tilecache prefetch --urls urls.txt --cache-dir <fresh>"]

    # --- 8b. A serve soak: many images and variants through a small memory tier; peak RSS against its limit.
    log(f"8b. serve soak for {SOAK_SECONDS} s")
    soak_bytes = 16
    soak_process, soak = serve("soak", "--memory-bytes", f"{soak_bytes}MiB")
    soak_paths = []
    for number in range(1, 119):
        soak_paths.append(f"/api/v1/elements/{number}/thumbnail")
        if number < 90:
            soak_paths.append(f"/api/v1/elements/{number}/image")
        for width in [32, 48, 64, 96, 128, 192, 256]:
            soak_paths.append(f"/api/v1/elements/{number}/thumbnail?w={width}")
            if number < 90:
                soak_paths.append(f"/api/v1/elements/{number}/image?w={width * 4}")
    soak_script = os.path.join(WORK, "soak.lua")
    with open(soak_script, "w") as file:
        file.write("paths = {" + ",".join(f'"{p}"' for p in soak_paths) + "}\n"
                   "request = function() return wrk.format(nil, paths[math.random(#paths)]) end\n")
    soak_rps, soak_p99, soak_errors = wrk(soak, seconds=SOAK_SECONDS, script=soak_script)
    status = open(f"/proc/{soak_process.pid}/status").read()
    soak_peak = int(re.search(r"VmHWM:\s+(\d+) kB", status).group(1)) / 1024
    soak_limit = soak_bytes + 64
    results.append((8, f"Peak RSS, {SOAK_SECONDS // 60}-minute serve soak, --memory-bytes {soak_bytes}MiB", f"{soak_peak:.1f} MiB", "-",
                    f"{soak_peak:.1f} / {soak_limit} MiB", f"≤ {soak_limit} MiB", soak_peak <= soak_limit))
    sections.append(f"### 8b. Serve soak\n\n`tilecache serve --memory-bytes {soak_bytes}MiB` under `wrk -t2 -c32 -d{SOAK_SECONDS}s` asking"
                    f" for {len(soak_paths)} images and variants at random (every thumbnail and photo, seven widths of each): "
                    f"{soak_rps:,.0f} req/s, p99 {soak_p99:.2f} ms, {soak_errors} answers that were not 2xx or 3xx; peak RSS (VmHWM)"
                    f" {soak_peak:.1f} MiB against the memory tier's {soak_bytes} MiB + 64 MiB.")
    commands += [f"tilecache serve --memory-bytes {soak_bytes}MiB; wrk -t2 -c32 -d{SOAK_SECONDS}s -s soak.lua   # random paths"]

    # --- 9. A resized miss against vipsthumbnail on the same source.
    log("9. resized miss against vipsthumbnail")
    _, miss = serve("miss")
    photos = [n for n in range(1, 90)]
    for number in photos:  # the originals in memory: the miss is the variant's alone
        subprocess.run(["curl", "-s", "-o", os.path.join(WORK, f"photo-{number}.jpg"), f"{miss}/api/v1/elements/{number}/image"], check=True)
    ours_ms, vips_ms = [], []
    for number in photos:
        output = subprocess.run(["curl", "-s", "-o", "/dev/null", "-w", "%{time_total}", f"{miss}/api/v1/elements/{number}/image?w=128"],
                                capture_output=True, text=True, check=True).stdout
        ours_ms.append(float(output) * 1000)
        started = time.perf_counter()
        subprocess.run(["vipsthumbnail", os.path.join(WORK, f"photo-{number}.jpg"), "-s", "128x", "-o", os.path.join(WORK, "vips-%s.jpg[Q=85]")],
                       check=True)
        vips_ms.append((time.perf_counter() - started) * 1000)
    started = time.perf_counter()
    subprocess.run(["vipsthumbnail"] + [os.path.join(WORK, f"photo-{n}.jpg") for n in photos] + ["-s", "128x", "-o", os.path.join(WORK, "vips-%s.jpg[Q=85]")],
                   check=True)
    vips_batch_ms = (time.perf_counter() - started) * 1000 / len(photos)

    def percentile(values, fraction):
        ordered = sorted(values)
        return ordered[min(len(ordered) - 1, int(round(fraction * (len(ordered) - 1))))]

    size_range = subprocess.run(["identify", "-format", "%wx%h\n"] + [os.path.join(WORK, f"photo-{n}.jpg") for n in photos[:1]],
                                capture_output=True, text=True).stdout.strip()
    results.append((9, "Resized miss (cold ?w=128 of a photo in memory), reported", f"p50 {percentile(ours_ms, 0.5):.1f} ms, p99 {percentile(ours_ms, 0.99):.1f} ms",
                    f"vipsthumbnail p50 {percentile(vips_ms, 0.5):.1f} ms, p99 {percentile(vips_ms, 0.99):.1f} ms (batch {vips_batch_ms:.1f} ms/image)",
                    f"{percentile(ours_ms, 0.5) / percentile(vips_ms, 0.5):.2f}× (p50)", "reported", True))
    sections.append(f"### 9. A resized miss against vipsthumbnail\n\n{len(photos)} photos ({size_range} and similar), each already in the"
                    " service's memory: `curl -w %{time_total}` of `/api/v1/elements/N/image?w=128` (decode shrunk on load, resample,"
                    " encode, store, send, over loopback HTTP) against `vipsthumbnail photo.jpg -s 128x -o out.jpg[Q=85]` on the same"
                    " file (a new process per image, its start-up included), and one `vipsthumbnail` run over all the files (per"
                    f" image). TileCache p50 {percentile(ours_ms, 0.5):.1f} ms, p99 {percentile(ours_ms, 0.99):.1f} ms;"
                    f" vipsthumbnail p50 {percentile(vips_ms, 0.5):.1f} ms, p99 {percentile(vips_ms, 0.99):.1f} ms; batch {vips_batch_ms:.1f} ms per image.")
    commands += ["curl -s -o /dev/null -w '%{time_total}' http://127.0.0.1:PORT/api/v1/elements/N/image?w=128   # N = 1...89, photo in memory",
                 "vipsthumbnail photo.jpg -s 128x -o 'vips-%s.jpg[Q=85]'"]
finally:
    for process in reversed(processes):
        process.terminate()
    for process in processes:
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()

# --- Rows the other scripts measured in the same run (run.sh runs them first and leaves their summaries in WORK).
def summary(name):
    path = os.path.join(WORK, name)
    return json.load(open(path)) if os.path.exists(path) else None


placeholders = summary("placeholders.json")
if placeholders:
    rates = placeholders["rates"]
    ours = rates["tilecache"]
    peers = {name: rate for name, rate in rates.items() if name != "tilecache"}
    results.append((10, f"Placeholders per second, one thread ({placeholders['files']} photos; TileCache makes both hashes, colours and an LQIP)",
                    f"{ours:,.1f}/s", ", ".join(f"{name} {rate:,.1f}/s" for name, rate in peers.items()),
                    f"{ours / max(peers.values()):.2f}× the fastest", "faster than each", all(ours > rate for rate in peers.values())))
    sections.append("### 10. Placeholders against the reference encoders\n\n"
                    f"{placeholders['files']} files ({placeholders['photos']} real photos, copied), one process per tool over all of them, one thread,"
                    " start-up included (`Benchmarks/compare/placeholders.py`): `tilecache inspect --placeholders -j 1` (BlurHash,"
                    " ThumbHash, average and dominant colours, a 16-px WebP LQIP) against Pillow (shrink on load, fit into 32 px) and"
                    " PyPI's blurhash 1.1.5 or thumbhash-rs 0.1.0 (the reference's Rust encoder), each hash alone.\n\n"
                    + table(["tool", "placeholders/s", "runs (s)"],
                            [[name, f"{rate:,.1f}", ", ".join(f"{v:.3f}" for v in placeholders["seconds"][name])] for name, rate in rates.items()]))
    commands.append("python Benchmarks/compare/placeholders.py tilecache Tests/TestSupport/photos out.json")

disk = summary("disk-scale.json")
if disk:
    for run, ratio in disk["ratios"].items():
        results.append((11, f"Disk cache at {disk['largest']:,} entries: {run}, time per image", f"{ratio:.2f}× the time at {disk['smallest']:,}",
                        "-", f"{ratio:.2f}×", "≤ 1.5×", ratio <= 1.5))

encoders = summary("encoders.json")
if encoders:
    for fmt in ("webp", "avif"):
        ms = {tool: encoders["ms"][str(512)][tool][fmt] for tool in encoders["ms"][str(512)]}
        size = {tool: encoders["bytes"][str(512)][fmt][tool] for tool in encoders["bytes"][str(512)][fmt]}
        quality = {tool: encoders["ssim"][str(512)][fmt][tool] for tool in encoders["ssim"][str(512)][fmt]}
        peers = [tool for tool in ms if tool != "TileCache"]
        results.append((12, f"{fmt.upper()} thumbnails (512 px, q=82), ms each, one thread, start-up included",
                        f"{ms['TileCache']:.1f} ms, {size['TileCache'] / 1024:,.0f} KiB, SSIM {quality['TileCache']:.4f}",
                        "; ".join(f"{tool} {ms[tool]:.1f} ms, {size[tool] / 1024:,.0f} KiB, SSIM {quality[tool]:.4f}" for tool in peers),
                        f"{ms['TileCache'] / min(ms[tool] for tool in peers):.2f}× the fastest", "reported (docs/benchmarks-encoders.md)", True))

sources = summary("open-sources.json")
if sources:
    for row in sources["rows"]:
        results.append((13, row["comparison"], row["ours"], row["peer"], row["result"], row["target"], row["met"]))

# --- Every host kind the rows were measured on: the recorded runs (Benchmarks/compare/hosts.json) and this one.
cpu = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name")), "unknown")
run_time = datetime.now(timezone.utc).strftime('%Y-%m-%d %H:%M UTC')


def ratio_of(prefix):
    row = next((r for r in results if r[1].startswith(prefix)), None)
    match = row and re.match(r"([\d.]+)", row[4])
    return float(match.group(1)) if match else None


this_host = {"run": run_time, "cpu": cpu, "source": "this run", "rows": {
    "cached thumbnail × nginx": ratio_of("Service: cached thumbnail"),
    "resized variant × nginx": ratio_of("Service: resized variant"),
    "HTTP/2 × nginx": ratio_of("Service over HTTP/2"),
    "cold prefetch × curl": ratio_of("Cold prefetch"),
    "warm prefetch × floor": ratio_of("Warm prefetch"),
    "soak peak MiB": ratio_of(f"Peak RSS, {SOAK_SECONDS // 60}-minute serve soak")}}
nio_floor = next((line for line in sections if line.startswith("### 6. ")), "")
floor_match = re.search(r"\| cached thumbnail \| SwiftNIO floor \| [\d,]+ \| [\d.]+ \| ([\d.]+) \|", nio_floor)
if floor_match:
    this_host["rows"]["SwiftNIO floor × nginx"] = float(floor_match.group(1))
hosts_path = os.path.join(HERE, "hosts.json")
hosts = json.load(open(hosts_path)) if os.path.exists(hosts_path) else []
hosts = [h for h in hosts if h["source"] != "this run"] + [{**this_host, "source": "make bench-compare"}]
with open(hosts_path, "w") as file:
    json.dump(hosts, file, indent=1, ensure_ascii=False)
    file.write("\n")
host_columns = ["cached thumbnail × nginx", "resized variant × nginx", "SwiftNIO floor × nginx", "HTTP/2 × nginx",
                "cold prefetch × curl", "warm prefetch × floor", "soak peak MiB"]
sections.insert(0, "### Hosts\n\nEvery host kind these rows were measured on (`Benchmarks/compare/hosts.json`: each `make bench-compare`"
                " adds its run; the older rows are the runs the notes below quote). The same code's ratios move with the host: a"
                " target holds only if it holds on the slowest.\n\n"
                + table(["run", "CPU", "source"] + host_columns,
                        [[h["run"], h["cpu"], h["source"]] + [("-" if h["rows"].get(c) is None else f"{h['rows'][c]:g}") for c in host_columns]
                         for h in hosts]))

# --- Report.
def svg(rows):
    width, row_height = 760, 34
    height = 40 + row_height * len(rows)
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" font-family="sans-serif" font-size="12">',
             '<rect width="100%" height="100%" fill="white"/>',
             '<text x="10" y="20" font-size="14" font-weight="bold">TileCache against its peers: target met (green) or missed (red)</text>']
    for index, row in enumerate(rows):
        y = 40 + index * row_height
        color = "#2e9e5b" if row[6] else "#d64545"
        parts.append(f'<rect x="10" y="{y}" width="16" height="16" fill="{color}"/>')
        parts.append(f'<text x="34" y="{y + 12}">{row[0]}. {row[1][:62]}</text>')
        parts.append(f'<text x="500" y="{y + 12}" font-weight="bold">{row[4]}</text>')
        parts.append(f'<text x="640" y="{y + 12}" fill="#555">{row[5][:24]}</text>')
    parts.append("</svg>")
    return "\n".join(parts)


os.makedirs(os.path.join(ROOT, "docs", "images"), exist_ok=True)
with open(os.path.join(ROOT, "docs", "images", "benchmarks.svg"), "w") as file:
    file.write(svg(results))
versions = {
    "tilecache": subprocess.run([TILECACHE, "--version"], capture_output=True, text=True).stdout.strip(),
    "curl": subprocess.run(["curl", "--version"], capture_output=True, text=True).stdout.split("\n")[0],
    "aria2c": subprocess.run(["aria2c", "--version"], capture_output=True, text=True).stdout.split("\n")[0],
    "nginx": subprocess.run(["nginx", "-v"], capture_output=True, text=True).stderr.strip(),
    "ImageMagick": subprocess.run(["identify", "--version"], capture_output=True, text=True).stdout.split("\n")[0],
    "Python": platform.python_version(),
}
# The disk cache at scale (disk_scale.py, run before this script by run.sh), kept between its markers.
disk_scale_path = os.path.join(ROOT, "docs", "benchmarks-disk-scale.md")
disk_scale = open(disk_scale_path).read() + "\n" if os.path.exists(disk_scale_path) else ""
report = f"""# Benchmarks

Performance targets are checked here, never by timed unit tests. This file is written by `make bench-compare`
(`Benchmarks/compare/run.sh`), which installs the peers, starts the built-in origin with 20 ms latency per response,
runs every comparison in {ROUNDS} alternating rounds and reports medians measured in one run. Micro-benchmarks
(`make bench`) are in [benchmarks-micro.md](benchmarks-micro.md); changes measured against the binary before them
are in [benchmarks-before-after.md](benchmarks-before-after.md). Thumbnails (quality as PSNR and SSIM against Pillow's
LANCZOS, thumbnails per second, bytes, and images side by side with libvips and Pillow) are in
[benchmarks-thumbnails.md](benchmarks-thumbnails.md), written by the same run; AVIF and WebP beside JPEG (bytes, quality
and time against libvips and Pillow) in [benchmarks-encoders.md](benchmarks-encoders.md). Open sources (imgproxy URLs against
thumbor on the same photos, cold and warm, and the resize against vipsthumbnail) are in
[benchmarks-open-sources.md](benchmarks-open-sources.md), written by `make bench-open-sources`.

Run: {run_time} on {os.cpu_count()} cores ({cpu}), {platform.platform()}.
Versions: {'; '.join(f'{k} {v}' for k, v in versions.items())}.

![Targets met and missed](images/benchmarks.svg)

## Summary

{table(["#", "comparison", "TileCache", "peer", "result", "target", "met"], [[r[0], r[1], r[2], r[3], r[4], r[5], "yes" if r[6] else "**no**"] for r in results])}

## Details

""" + "\n\n".join(sections) + "\n\n" + disk_scale + open(os.path.join(HERE, "notes.md")).read() + """

## Commands

""" + "\n".join(f"- `{c}`" for c in commands) + "\n"
with open(os.path.join(ROOT, "docs", "benchmarks.md"), "w") as file:
    file.write(report)
log("wrote docs/benchmarks.md and docs/images/benchmarks.svg")
for row in results:
    log(f"{row[0]}. {row[1]}: {row[4]} (target {row[5]}): {'met' if row[6] else 'MISSED'}")
