#!/usr/bin/env python3
"""Two tilecache binaries side by side (a change's before and after), in alternating rounds, one run.

Usage: before_after.py BEFORE AFTER [ROUNDS]   (needs curl, wrk and nginx; `make bench-compare` installs them)
Prints a Markdown table of medians with every round, to paste into a closing note or docs/benchmarks.md.
Both binaries use the AFTER binary's origin (20 ms latency for prefetches, none for the resized miss). The cached
thumbnail and variant are also served by nginx (2 workers, the same bytes as static files), measured right after each
binary in each round, so each binary's ratio to nginx is from one run.
"""
import os, re, shutil, socket, statistics, subprocess, sys, tempfile, time

from bench_support import write_nginx_config

BEFORE, AFTER = sys.argv[1], sys.argv[2]
ROUNDS = int(sys.argv[3]) if len(sys.argv) > 3 else 5
WORK = tempfile.mkdtemp(prefix="tilecache-before-after-")
processes = []


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def start(arguments):
    process = subprocess.Popen(arguments, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    processes.append(process)
    return process


def wait_http(url):
    for _ in range(200):
        if subprocess.run(["curl", "-s", "-o", "/dev/null", "-f", url]).returncode == 0:
            return
        time.sleep(0.1)
    raise SystemExit(f"before_after: {url} did not come up")


def fresh(path):
    shutil.rmtree(path, ignore_errors=True)
    os.makedirs(path)
    return path


def origin(latency):
    port = free_port()
    start([AFTER, "origin", "--port", str(port), "--latency-ms", str(latency)])
    base = f"http://127.0.0.1:{port}"
    wait_http(base + "/periodictable/Tiles/001/s7.JPG")
    return ["--tiles-base", base + "/periodictable", "--images-base", base + "/images-of-elements"]


def serve(binary, bases, cache):
    port = free_port()
    process = start([binary, "serve", "--port", str(port), "--cache-dir", cache, "--db", cache + ".sqlite"] + bases)
    url = f"http://127.0.0.1:{port}"
    wait_http(url + "/healthz")
    return process, url


def stop(process):
    process.terminate()
    process.wait(timeout=10)
    processes.remove(process)


def wrk(url):
    output = subprocess.run(["wrk", "-t2", "-c32", "-d5s", "--latency", url], capture_output=True, text=True).stdout
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", output).group(1))
    value, unit = re.search(r"99%\s+([\d.]+)(us|ms|s)", output).groups()
    return rps, float(value) * {"us": 0.001, "ms": 1, "s": 1000}[unit]


rows = {}


def record(name, binary, value):
    rows.setdefault(name, {}).setdefault(binary, []).append(value)


def nginx(files):
    """nginx (2 workers) serving `files` ({name: url to fetch them from}) as static files; returns its base URL."""
    static = fresh(os.path.join(WORK, "static"))
    os.chmod(WORK, 0o755)  # nginx's workers (nobody, when run as root) must reach the files
    for name, url in files.items():
        subprocess.run(["curl", "-s", "-o", os.path.join(static, name), url], check=True)
    port = free_port()
    start(["nginx", "-c", write_nginx_config(WORK, static, port)])
    base = f"http://127.0.0.1:{port}"
    wait_http(base + "/" + next(iter(files)))
    return base


try:
    slow = origin(20)
    still = origin(0)
    process, url = serve(AFTER, slow, fresh(os.path.join(WORK, "nginx-source")))
    static = nginx({"thumb.jpg": url + "/api/v1/elements/26/thumbnail", "thumb-64.jpg": url + "/api/v1/elements/26/thumbnail?w=64"})
    stop(process)
    for round_number in range(ROUNDS):
        for label, binary in (("before", BEFORE), ("after", AFTER)) if round_number % 2 == 0 else (("after", AFTER), ("before", BEFORE)):
            cache = fresh(os.path.join(WORK, label + "-cache"))
            # 1. Cold prefetch of the catalogue (20 ms origin), and its peak resident memory.
            started = time.perf_counter()
            output = subprocess.run(["/usr/bin/time", "-v", binary, "prefetch", "--cache-dir", cache] + slow,
                                    capture_output=True, text=True).stderr
            record("cold prefetch (s)", label, time.perf_counter() - started)
            record("peak RSS, cold prefetch (MiB)", label,
                   int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", output).group(1)) / 1024)
            # 2. Warm prefetch, new process, from the disk cache.
            started = time.perf_counter()
            subprocess.run([binary, "prefetch", "--cache-dir", cache] + slow, capture_output=True)
            record("warm prefetch, new process (s)", label, time.perf_counter() - started)
            # 3. Cached thumbnail and cached w=64 variant through the service.
            process, url = serve(binary, slow, cache)
            for path, name, file in (("/api/v1/elements/26/thumbnail", "serve cached thumbnail", "/thumb.jpg"),
                                     ("/api/v1/elements/26/thumbnail?w=64", "serve cached w=64 variant", "/thumb-64.jpg")):
                subprocess.run(["curl", "-s", "-o", "/dev/null", url + path])
                rps, p99 = wrk(url + path)
                record(name + " (req/s)", label, rps)
                record(name + " p99 (ms)", label, p99)
                theirs, _ = wrk(static + file)
                record(name + " ÷ nginx (same round)", label, rps / theirs)
            stop(process)
            # 4. Resized miss: a fresh cache, an origin with no latency, w=128 of 40 photos one after another.
            process, url = serve(binary, still, fresh(os.path.join(WORK, label + "-miss")))
            times = []
            for number in range(1, 41):
                output = subprocess.run(["curl", "-s", "-o", "/dev/null", "-w", "%{time_total}",
                                         f"{url}/api/v1/elements/{number}/image?w=128"], capture_output=True, text=True).stdout
                times.append(float(output) * 1000)
            times.sort()
            record("resized miss w=128, photo p50 (ms)", label, statistics.median(times))
            record("resized miss w=128, photo p90 (ms)", label, times[int(0.9 * len(times)) - 1])
            stop(process)
        print(f"round {round_number + 1}/{ROUNDS} done", file=sys.stderr)
finally:
    for process in processes:
        process.terminate()
    shutil.rmtree(WORK, ignore_errors=True)

print("| measure | before (median) | after (median) | after / before | rounds before | rounds after |")
print("|---|---|---|---|---|---|")
for name, by in rows.items():
    before, after = statistics.median(by["before"]), statistics.median(by["after"])
    print(f"| {name} | {before:.3f} | {after:.3f} | {after / before:.2f} | "
          f"{', '.join(f'{v:.3f}' for v in by['before'])} | {', '.join(f'{v:.3f}' for v in by['after'])} |")
