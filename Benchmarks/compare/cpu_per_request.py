#!/usr/bin/env python3
"""CPU time a request costs each server (user and system, µs), beside its requests per second, in alternating rounds.

Usage: cpu_per_request.py TILECACHE SERVEFLOOR ROUNDS [KINDS]   (KINDS: ServeFloor kinds, comma-separated; default
nio,nio-raw. Needs curl, wrk and nginx; `make bench-compare` installs them.)
Each round runs `wrk -t2 -c32 -d5s` once against each server, in an order that alternates between rounds: nginx (2
workers, the thumbnail as a static file), `tilecache serve` (the cached thumbnail) and each ServeFloor kind (the same
bytes). A server's CPU is read from /proc/PID/stat (utime, stime; nginx's over its workers) before and after its run,
over the requests wrk counted. wrk shares the 2 cores, so requests per second follow the server's CPU a request.
"""
import os, re, subprocess, sys, tempfile, time

from bench_support import free_port, stop, wait_http, write_nginx_config

TILECACHE, FLOOR, ROUNDS = sys.argv[1], sys.argv[2], int(sys.argv[3])
KINDS = (sys.argv[4] if len(sys.argv) > 4 else "nio,nio-raw").split(",")
WORK = tempfile.mkdtemp(prefix="tilecache-cpu-")
processes = []


def start(arguments):
    process = subprocess.Popen(arguments, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    processes.append(process)
    return process


def cpu_ticks(pids):
    user = system = 0
    for pid in pids:
        fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
        user, system = user + int(fields[11]), system + int(fields[12])
    return user, system


def wrk(url, pids):
    """Requests per second, and the user and system µs of `pids` a request."""
    user0, system0 = cpu_ticks(pids)
    output = subprocess.run(["wrk", "-t2", "-c32", "-d5s", url], capture_output=True, text=True).stdout
    user1, system1 = cpu_ticks(pids)
    requests = int(re.search(r"(\d+) requests in", output).group(1))
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", output).group(1))
    tick = 1e6 / os.sysconf("SC_CLK_TCK")
    return rps, (user1 - user0) * tick / requests, (system1 - system0) * tick / requests


try:
    origin_port = free_port()
    start([TILECACHE, "origin", "--port", str(origin_port)])
    origin = f"http://127.0.0.1:{origin_port}"
    wait_http(origin_port, "/periodictable/Tiles/001/s7.JPG", "cpu_per_request")
    serve_port, cache = free_port(), os.path.join(WORK, "cache")
    os.makedirs(cache)
    service = start([TILECACHE, "serve", "--port", str(serve_port), "--cache-dir", cache, "--db", cache + ".sqlite",
                     "--tiles-base", origin + "/periodictable", "--images-base", origin + "/images-of-elements"])
    thumbnail = f"http://127.0.0.1:{serve_port}/api/v1/elements/26/thumbnail"
    wait_http(serve_port, "/healthz", "cpu_per_request")
    static = os.path.join(WORK, "static")
    os.makedirs(static)
    os.chmod(WORK, 0o755)  # nginx's workers (nobody, when run as root) must reach the file
    subprocess.run(["curl", "-s", "-o", os.path.join(static, "thumb.jpg"), thumbnail], check=True)
    nginx_port = free_port()
    nginx = start(["nginx", "-c", write_nginx_config(WORK, static, nginx_port)])
    wait_http(nginx_port, "/thumb.jpg", "cpu_per_request")
    workers = []
    for _ in range(50):
        workers = [int(pid) for pid in subprocess.run(["pgrep", "-P", str(nginx.pid)], capture_output=True, text=True).stdout.split()]
        if len(workers) == 2:
            break
        time.sleep(0.1)
    else:
        raise SystemExit(f"cpu_per_request: nginx (pid {nginx.pid}) has {len(workers)} workers after 5 s, not 2")
    servers = {"nginx": (f"http://127.0.0.1:{nginx_port}/thumb.jpg", workers), "tilecache": (thumbnail, [service.pid])}
    for kind in KINDS:
        port = free_port()
        floor = start([FLOOR, kind, str(port), os.path.join(static, "thumb.jpg")])
        wait_http(port, "/thumb.jpg", "cpu_per_request")
        servers[f"ServeFloor {kind}"] = (f"http://127.0.0.1:{port}/thumb.jpg", [floor.pid])
    print("| round | server | req/s | × nginx | user µs/request | system µs/request |")
    print("|---|---|---|---|---|---|")
    for round_number in range(ROUNDS):
        names = list(servers) if round_number % 2 == 0 else list(reversed(servers))
        measured = {name: wrk(*servers[name]) for name in names}
        for name in servers:
            rps, user, system = measured[name]
            print(f"| {round_number + 1} | {name} | {rps:,.0f} | {rps / measured['nginx'][0]:.2f} | {user:.1f} | {system:.1f} |", flush=True)
finally:
    stop(processes, WORK)
