#!/usr/bin/env python3
"""Cold resized misses of real photos: two tilecache binaries (a change's before and after) in alternating rounds.

Usage: cold_misses.py BEFORE AFTER [ROUNDS] [WIDTH] [COPIES]   (needs libvips' `vips` for the large copies)

The photos are the test suite's five (Tests/TestSupport/photos: a camera photo, scikit-image's and Pillow's test images)
and two 10- and 8-megapixel copies libvips enlarges from two of them, as phone cameras take. A file server on loopback
(Python's http.server) serves them; each round starts a fresh `serve` (empty caches) and asks for every photo COPIES
times under distinct URLs (`?c=N`, so nothing is coalesced or cached), resized to WIDTH as an imgproxy URL, one at a
time over one kept-alive connection. Prints the medians over rounds of each binary's p50, p99 and total, and each
photo's median latency.
"""
import http.client, os, shutil, statistics, subprocess, sys, tempfile, time

from bench_support import camera_photos, free_port, percentile, stop, wait_http

BEFORE, AFTER = sys.argv[1], sys.argv[2]
ROUNDS = int(sys.argv[3]) if len(sys.argv) > 3 else 5
WIDTH = int(sys.argv[4]) if len(sys.argv) > 4 else 128
COPIES = int(sys.argv[5]) if len(sys.argv) > 5 else 10
work = tempfile.mkdtemp(prefix="tilecache-cold-misses-")
processes = []


try:
    photos = os.path.join(work, "photos")
    names = camera_photos(photos)
    file_port = free_port()
    processes.append(subprocess.Popen([sys.executable, "-m", "http.server", str(file_port), "--bind", "127.0.0.1", "-d", photos],
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
    wait_http(file_port, "/", "cold_misses", seconds=30)
    paths = [f"/_/rs:fit:{WIDTH}:0/q:82/plain/http://127.0.0.1:{file_port}/{name}%3Fc%3D{copy}" for copy in range(COPIES) for name in names]
    rounds = {BEFORE: [], AFTER: []}
    per_photo = {BEFORE: {}, AFTER: {}}
    for round_number in range(ROUNDS):
        for binary in ((BEFORE, AFTER) if round_number % 2 == 0 else (AFTER, BEFORE)):
            port, cache = free_port(), os.path.join(work, "cache")
            shutil.rmtree(cache, ignore_errors=True)
            os.makedirs(cache)
            serve = subprocess.Popen([binary, "serve", "--port", str(port), "--cache-dir", cache,
                                      "--db", os.path.join(work, f"service-{round_number}-{len(rounds[binary])}.sqlite"),
                                      "--allowed-sources", f"http://127.0.0.1:{file_port}/", "--allow-private-sources"],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            processes.append(serve)
            wait_http(port, "/healthz", "cold_misses", seconds=30)
            connection, times = http.client.HTTPConnection("127.0.0.1", port, timeout=60), []
            for path in paths:
                started = time.perf_counter()
                connection.request("GET", path)
                response = connection.getresponse()
                body = response.read()
                times.append((time.perf_counter() - started) * 1000)
                if response.status != 200:
                    raise SystemExit(f"cold_misses: {path} gave {response.status}: {body[:200]!r}")
                per_photo[binary].setdefault(path.rsplit("/", 1)[1].split("%3F")[0], []).append(times[-1])
            rounds[binary].append(times)
            serve.terminate()
            serve.wait(timeout=30)
    print(f"{len(names)} photos x {COPIES} copies at {WIDTH} px, {ROUNDS} alternating rounds (medians over rounds)\n")
    print("| | p50 | p99 | total |\n|---|---|---|---|")
    for label, binary in (("before", BEFORE), ("after", AFTER)):
        p50 = statistics.median(percentile(times, 0.5) for times in rounds[binary])
        p99 = statistics.median(percentile(times, 0.99) for times in rounds[binary])
        total = statistics.median(sum(times) for times in rounds[binary])
        print(f"| {label} | {p50:.2f} ms | {p99:.2f} ms | {total:.0f} ms |")
    print("\n| photo | before | after |\n|---|---|---|")
    for name in names:
        print(f"| {name} | {statistics.median(per_photo[BEFORE][name]):.2f} ms | {statistics.median(per_photo[AFTER][name]):.2f} ms |")
finally:
    stop(processes, work)
