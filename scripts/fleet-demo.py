#!/usr/bin/env python3
"""The fleet demo (`make fleet`), which is also issue 16's acceptance test.

Starts on loopback: SeaweedFS (the shared S3 tier), PostgreSQL (favourites), the built-in origin with 20 ms latency
behind an nginx proxy that logs every origin request, three `tilecache serve` instances, and nginx in front of them
(`hash $uri consistent`; for comparison, ports with `hash $request_uri consistent` and with round robin). Then runs the
six steps of docs/fleet.md and the two comparisons, and prints one table row per step. Exits 1 when a step's acceptance check fails.

Usage: scripts/fleet-demo.py [--binary .build/release/tilecache] [--keep DIR]
Needs scripts/install-fleet-deps.sh (SeaweedFS, PostgreSQL, nginx) and a built `tilecache`.
"""
import argparse
import collections
import concurrent.futures
import http.client
import json
import os
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ACCESS_KEY, SECRET_KEY = "tilecache-fleet", "tilecache-fleet-secret"
PG_PASSWORD = "tilecache-fleet-password"
BUCKET = "fleet"
WIDTHS = (64, 256)
failures = []


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start(command, ready, log, env=None):
    """Starts `command`, its stdout to `log`; waits (60 s) for a line matching `ready`; returns (process, match)."""
    out = open(log, "w")
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=out, env={**os.environ, **(env or {})}, text=True,
                               start_new_session=True)
    deadline = time.time() + 60
    while time.time() < deadline:
        line = process.stdout.readline()
        if not line:
            break
        out.write(line)
        out.flush()
        match = re.search(ready, line)
        if match:
            threading.Thread(target=lambda: [out.write(rest) for rest in process.stdout], daemon=True).start()
            return process, match
    raise SystemExit(f"fleet-demo: {' '.join(command[:2])} did not start; see {log}")


def stop(process, sig=signal.SIGTERM):
    if process.poll() is None:
        os.killpg(process.pid, sig)
        try:
            process.wait(20)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


def request(port, path, method="GET", body=None, timeout=30):
    """One HTTP request on loopback; (status, headers, body, seconds). A connection error is status 0."""
    started = time.perf_counter()
    try:
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
        headers = {"Content-Type": "application/json"} if body is not None else {}
        connection.request(method, path, body=body, headers=headers)
        response = connection.getresponse()
        data = response.read()
        connection.close()
        return response.status, dict(response.getheaders()), data, time.perf_counter() - started
    except (OSError, http.client.HTTPException) as error:
        return 0, {"error": str(error)}, b"", time.perf_counter() - started


def load(port, paths, concurrency=16):
    """GETs every path through `port` (16 at once); a summary of statuses, sources, upstreams and latency."""
    with concurrent.futures.ThreadPoolExecutor(concurrency) as pool:
        results = list(pool.map(lambda path: request(port, path), paths))
    latencies = sorted(r[3] * 1000 for r in results)
    return {
        "requests": len(results),
        "failed": sum(1 for r in results if r[0] != 200),
        "statuses": dict(collections.Counter(r[0] for r in results)),
        "sources": dict(collections.Counter(r[1].get("X-TileCache-Source", "-") for r in results)),
        # nginx lists every upstream it tried ("a, b" after a retry): the last one answered.
        "upstreams": len({r[1]["X-Upstream"].split(", ")[-1] for r in results if r[1].get("X-Upstream")}),
        "p50": latencies[len(latencies) // 2],
        "p99": latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))],
    }


class Fleet:
    def __init__(self, binary, directory):
        self.binary, self.dir = binary, directory
        self.env = {"AWS_ACCESS_KEY_ID": ACCESS_KEY, "AWS_SECRET_ACCESS_KEY": SECRET_KEY, "AWS_REGION": "us-east-1",
                    "PGPASSWORD": PG_PASSWORD}
        self.instances = {}
        self.ports = [free_port() for _ in range(3)]
        self.lb, self.rr, self.by_request_uri, self.origin_proxy = free_port(), free_port(), free_port(), free_port()

    # --- servers --------------------------------------------------------------------------------------------
    def start_store(self, port=0):
        self.store, match = start([ROOT + "/scripts/seaweedfs.sh", self.dir + "/seaweedfs", str(port), str(os.getpid())],
                                  r"ready (\d+)", self.dir + "/seaweedfs.out", self.env)
        self.s3 = int(match.group(1))

    def start_postgres(self):
        self.postgres, match = start([ROOT + "/scripts/postgres.sh", "run", self.dir + "/postgres", "0", str(os.getpid())],
                                     r"ready (\d+)", self.dir + "/postgres.out", self.env)
        self.pg = int(match.group(1))
        self.database = f"postgres://tilecache:{PG_PASSWORD}@127.0.0.1:{self.pg}/tilecache?sslmode=disable"

    def start_origin(self):
        self.origin, match = start([self.binary, "origin", "--port", "0", "--latency-ms", "20"],
                                   r"listening on http://127.0.0.1:(\d+)", self.dir + "/origin.log")
        self.origin_port = int(match.group(1))

    def start_nginx(self):
        os.makedirs(self.dir + "/nginx-tmp", exist_ok=True)
        servers = "".join(f"        server 127.0.0.1:{port} max_fails=1 fail_timeout=5s;\n" for port in self.ports)
        proxy = """
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_set_header Host $http_host;
            proxy_connect_timeout 1s;
            proxy_next_upstream error timeout;
            add_header X-Upstream $upstream_addr always;"""
        config = f"""{'user root;' if os.geteuid() == 0 else ''}
worker_processes 2;
pid {self.dir}/nginx.pid;
error_log {self.dir}/nginx-error.log warn;
events {{ worker_connections 1024; }}
http {{
    access_log off;
    client_body_temp_path {self.dir}/nginx-tmp/body;
    proxy_temp_path {self.dir}/nginx-tmp/proxy;
    fastcgi_temp_path {self.dir}/nginx-tmp/fastcgi;
    uwsgi_temp_path {self.dir}/nginx-tmp/uwsgi;
    scgi_temp_path {self.dir}/nginx-tmp/scgi;
    log_format origin '$request_uri $status';

    # Each image goes to one instance: its coalescer makes one origin request for any number of clients. $uri, not
    # $request_uri: the path without the query, so an image and its resized variants (?w=64) go to the same instance,
    # which makes them from the one download.
    upstream tilecache_fleet {{
        hash $uri consistent;
{servers}        keepalive 32;
    }}
    # For comparison only: the query in the key (variants go elsewhere), and no affinity at all.
    upstream tilecache_request_uri {{
        hash $request_uri consistent;
{servers}        keepalive 32;
    }}
    upstream tilecache_round_robin {{
{servers}        keepalive 32;
    }}
    server {{
        listen 127.0.0.1:{self.lb};
        location / {{
            proxy_pass http://tilecache_fleet;{proxy}
        }}
    }}
    server {{
        listen 127.0.0.1:{self.by_request_uri};
        location / {{
            proxy_pass http://tilecache_request_uri;{proxy}
        }}
    }}
    server {{
        listen 127.0.0.1:{self.rr};
        location / {{
            proxy_pass http://tilecache_round_robin;{proxy}
        }}
    }}
    # The origin, behind a proxy that logs every request the fleet makes to it.
    server {{
        listen 127.0.0.1:{self.origin_proxy};
        access_log {self.dir}/origin-access.log origin;
        location / {{
            proxy_pass http://127.0.0.1:{self.origin_port};
            proxy_http_version 1.1;
            proxy_set_header Connection "";
        }}
    }}
}}
"""
        with open(self.dir + "/nginx.conf", "w") as file:
            file.write(config)
        with open(self.dir + "/nginx.out", "w") as out:
            self.nginx = subprocess.Popen(["nginx", "-c", self.dir + "/nginx.conf", "-p", self.dir, "-g", "daemon off;"],
                                          stdout=out, stderr=out, start_new_session=True)
        for _ in range(100):
            if request(self.origin_proxy, "/")[0] != 0:
                return
            time.sleep(0.1)
        raise SystemExit(f"fleet-demo: nginx did not start; see {self.dir}/nginx-error.log")

    def start_instance(self, index, prefix="demo", fresh=False):
        cache = f"{self.dir}/instance-{index}/cache"
        if fresh:
            shutil.rmtree(cache, ignore_errors=True)
        os.makedirs(os.path.dirname(cache), exist_ok=True)
        command = [self.binary, "serve", "--port", str(self.ports[index]), "--cache-dir", cache,
                   "--tiles-base", f"http://127.0.0.1:{self.origin_proxy}/periodictable",
                   "--images-base", f"http://127.0.0.1:{self.origin_proxy}/images-of-elements",
                   "--shared-store", f"s3://{BUCKET}/{prefix}", "--s3-endpoint", f"http://127.0.0.1:{self.s3}", "--create-bucket"]
        process, _ = start(command, r"serving on", f"{self.dir}/instance-{index}.log",
                           {**self.env, "TILECACHE_DATABASE_URL": self.database})
        self.instances[index] = process

    def restart_instances(self, prefix="demo", fresh=True):
        for index in list(self.instances):
            stop(self.instances.pop(index))
        for index in range(3):
            self.start_instance(index, prefix, fresh)

    def stop_all(self):
        for process in list(self.instances.values()) + [getattr(self, name, None) for name in ("nginx", "origin", "store", "postgres")]:
            if process is not None:
                stop(process)

    # --- measurements ---------------------------------------------------------------------------------------
    def origin_requests(self, status=None):
        """Requests the origin got, by path (only those answered `status`, when given)."""
        counts = collections.Counter()
        with open(self.dir + "/origin-access.log") as log:
            for line in log:
                path, answered = line.split()
                if status is None or answered == status:
                    counts[path] += 1
        return counts

    def health(self, index):
        status, _, body, _ = request(self.ports[index], "/healthz")
        return json.loads(body) if status in (200, 503) else {"status": f"HTTP {status}"}


def catalogue_paths(port):
    """Every catalogue image (thumbnails, and photos the host has) and two widths of each, as the API names them."""
    elements = []
    for path in ("/api/v1/elements", "/api/v1/elements_remaining"):
        status, _, body, _ = request(port, path)
        assert status == 200, f"{path}: HTTP {status}"
        elements += json.loads(body)
    paths = []
    for element in elements:
        kinds = ["thumbnail"] + (["image"] if element.get("has_image") else [])
        for kind in kinds:
            base = f"/api/v1/elements/{element['number']}/{kind}"
            paths += [base] + [f"{base}?w={width}" for width in WIDTHS]
    return paths


def check(condition, message):
    if not condition:
        failures.append(message)
        print(f"  FAILED: {message}")


def row(step, summary, origin=None, extra=""):
    fields = [step, str(summary["requests"]), str(summary["failed"]),
              ", ".join(f"{k} {v}" for k, v in sorted(summary["sources"].items())),
              "-" if origin is None else origin, f"{summary['p50']:.1f}", f"{summary['p99']:.1f}", extra]
    print("| " + " | ".join(fields) + " |")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--binary", default=ROOT + "/.build/release/tilecache")
    parser.add_argument("--keep", help="run in this directory and leave it (logs, configs) for inspection")
    arguments = parser.parse_args()
    directory = arguments.keep or tempfile.mkdtemp(prefix="tilecache-fleet-")
    os.makedirs(directory, exist_ok=True)
    os.chmod(directory, 0o755)
    fleet = Fleet(arguments.binary, directory)
    try:
        fleet.start_store()
        fleet.start_postgres()
        fleet.start_origin()
        fleet.start_nginx()
        fleet.restart_instances()
        paths = catalogue_paths(fleet.lb)
        unique_sources = len([p for p in paths if "?" not in p])
        print(f"fleet in {directory}: 3 instances on {fleet.ports}, nginx :{fleet.lb} (consistent hash) "
              f":{fleet.rr} (round robin), SeaweedFS :{fleet.s3}, PostgreSQL :{fleet.pg}, origin 20 ms\n")
        print(f"load: {len(paths)} GETs ({unique_sources} catalogue images, each also at w={WIDTHS[0]} and w={WIDTHS[1]}), 16 at once\n")
        print("| step | requests | failed | outcomes | origin requests | p50 ms | p99 ms | notes |")
        print("|---|---:|---:|---|---|---:|---:|---|")

        # 1. Cold fleet through the consistent-hash balancer.
        before = fleet.origin_requests()
        summary = load(fleet.lb, paths)
        counts = fleet.origin_requests() - before
        cold, most = sum(counts.values()), max(counts.values())
        # One more path than images: cesium.jpg is a 404 at the photo host, then caesium.jpg is tried and remembered.
        row("1 cold, hash $uri", summary, f"{cold} for {len(counts)} origin URLs (max {most} per URL)")
        check(summary["failed"] == 0, "step 1: failed requests")
        check(most == 1 and len(counts) >= unique_sources, f"step 1: {cold} origin requests for {len(counts)} URLs (max {most})")

        # 2. All instances restarted with empty local caches: everything from the shared tier.
        fleet.restart_instances(fresh=True)
        before, before_ok = fleet.origin_requests(), fleet.origin_requests("200")
        summary = load(fleet.lb, paths)
        warm = sum((fleet.origin_requests() - before).values())
        fetched = sum((fleet.origin_requests("200") - before_ok).values())
        # A fresh instance does not know yet that cesium.jpg is served by caesium.jpg: that lookup's 404 is the only
        # origin request it may make.
        row("2 restarted, empty disks", summary, f"{fetched} image fetches ({warm - fetched} 404s of other spellings)")
        check(summary["failed"] == 0 and fetched == 0, f"step 2: {summary['failed']} failed, {fetched} origin image fetches")
        check(summary["sources"].get("sharedHit", 0) == len(paths), f"step 2: outcomes {summary['sources']}")

        # 3. One instance killed (SIGKILL) under load.
        result = {}
        worker = threading.Thread(target=lambda: result.update(load(fleet.lb, paths * 3)))
        worker.start()
        time.sleep(0.3)
        stop(fleet.instances.pop(1), signal.SIGKILL)
        worker.join()
        row("3 one instance SIGKILLed", result, None, f"answered by {result['upstreams']} instances")
        check(result["failed"] <= 16, f"step 3: {result['failed']} failed (more than the 16 in flight)")
        fleet.start_instance(1)

        # 4. SeaweedFS stopped under load (instances restarted empty so they need the tier), then started again.
        fleet.restart_instances(fresh=True)
        result = {}
        worker = threading.Thread(target=lambda: result.update(load(fleet.lb, paths)))
        worker.start()
        time.sleep(0.3)
        stop(fleet.store)
        worker.join()
        degraded = [fleet.health(index).get("status") for index in range(3)]
        row("4 SeaweedFS stopped", result, None, f"health: {', '.join(degraded)}")
        check(result["failed"] == 0, f"step 4: {result['failed']} failed image requests")
        for index in range(3):  # an instance that has not touched the store since it stopped finds out on its next read
            load(fleet.ports[index], paths[:8], 4)
        degraded = [fleet.health(index).get("status") for index in range(3)]
        check(all(status == "degraded" for status in degraded), f"step 4: health {degraded}")
        fleet.start_store(fleet.s3)
        restarted = time.time()  # the store answers again from here
        while time.time() - restarted < 30 and any(fleet.health(i).get("status") != "ok" for i in range(3)):
            time.sleep(0.2)
        recovered = time.time() - restarted
        statuses = [fleet.health(index).get("status") for index in range(3)]
        print(f"|   SeaweedFS started again | | | | | | | all instances ok {recovered:.1f} s after the store answered (probe every 5 s): {', '.join(statuses)} |")
        check(all(status == "ok" for status in statuses), f"step 4: health after restart {statuses}")

        # 5. Favourites through one instance, listed by the others; PostgreSQL restarted while posting.
        acknowledged, statuses5, stop_posting = [], collections.Counter(), threading.Event()

        def post():
            number = 0
            while not stop_posting.is_set():
                number = number % 118 + 1
                status, _, body, _ = request(fleet.ports[0], "/api/v1/favorites", "POST",
                                             json.dumps({"favoritedBy": "fleet-demo", "number": number}))
                statuses5[status] += 1
                if status == 201:
                    acknowledged.append(json.loads(body)["id"])
                else:
                    time.sleep(0.05)

        poster = threading.Thread(target=post)
        poster.start()
        time.sleep(1)
        subprocess.run([ROOT + "/scripts/postgres.sh", "stop", directory + "/postgres"], check=True)
        time.sleep(2)
        subprocess.run([ROOT + "/scripts/postgres.sh", "start", directory + "/postgres"], check=True)
        time.sleep(2)
        stop_posting.set()
        poster.join()
        listed = []
        for index in (1, 2):
            status, _, body, _ = request(fleet.ports[index], "/api/v1/favorites?favoritedBy=fleet-demo")
            listed.append({item["id"] for item in json.loads(body)} if status == 200 else set())
        lost = set(acknowledged) - listed[0]
        print(f"| 5 favourites, PostgreSQL restarted | {sum(statuses5.values())} POSTs | {statuses5.get(503, 0)} (503) "
              f"| 201: {statuses5.get(201, 0)} | - | | | listed by instances 2 and 3: {len(listed[0])}, {len(listed[1])}; lost: {len(lost)} |")
        check(not lost and listed[0] == listed[1], f"step 5: lost {sorted(lost)[:5]}, listings differ: {listed[0] != listed[1]}")
        check(set(statuses5) <= {201, 503}, f"step 5: statuses {dict(statuses5)}")

        # 6. Two prefetch processes at once against a cold prefix.
        before = fleet.origin_requests()
        prefetches = []
        for index in range(2):
            command = [fleet.binary, "prefetch", "--cache-dir", f"{directory}/prefetch-{index}", "--format", "json",
                       "--tiles-base", f"http://127.0.0.1:{fleet.origin_proxy}/periodictable",
                       "--images-base", f"http://127.0.0.1:{fleet.origin_proxy}/images-of-elements",
                       "--shared-store", f"s3://{BUCKET}/prefetch", "--s3-endpoint", f"http://127.0.0.1:{fleet.s3}", "--create-bucket"]
            prefetches.append(subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env={**os.environ, **fleet.env}))
        reports = [json.loads(p.communicate()[0]) for p in prefetches]
        counts = fleet.origin_requests() - before
        fetched, unique = sum(counts.values()), len(counts)
        print(f"| 6 two cold prefetches at once | {sum(r['requested'] for r in reports)} | {sum(r['failed'] for r in reports)} "
              f"| networkFetch {sum(r['networkFetches'] for r in reports)}, sharedHit {sum(r['sharedHits'] for r in reports)} "
              f"| {fetched} for {unique} origin URLs | | | duplicate origin fetches: {fetched - unique} |")
        check(all(p.returncode == 0 for p in prefetches), f"step 6: prefetch exit codes {[p.returncode for p in prefetches]}")

        # 7 and 8. For comparison: a cold fleet behind `hash $request_uri`, and behind round robin (no affinity).
        for step, prefix, port in (("7 cold, hash $request_uri", "request-uri", fleet.by_request_uri),
                                   ("8 cold, round robin", "round-robin", fleet.rr)):
            fleet.restart_instances(prefix=prefix, fresh=True)
            before = fleet.origin_requests()
            summary = load(port, paths)
            counts = fleet.origin_requests() - before
            fetched = sum(counts.values())
            row(step, summary, f"{fetched} for {len(counts)} origin URLs (max {max(counts.values())} per URL)",
                f"duplicate origin fetches: {fetched - len(counts)}")
            check(summary["failed"] == 0, f"step {step}: failed requests")
    finally:
        fleet.stop_all()
        if not arguments.keep and not failures:
            shutil.rmtree(directory, ignore_errors=True)
    if failures:
        print(f"\nfleet-demo: {len(failures)} checks failed (logs in {directory}):\n  " + "\n  ".join(failures))
        sys.exit(1)
    print("\nfleet-demo: every check passed")


if __name__ == "__main__":
    main()
