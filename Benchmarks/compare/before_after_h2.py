#!/usr/bin/env python3
"""HTTP/2 over TLS side by side: two `tilecache` binaries' `serve --tls-cert` and nginx (`listen ssl http2`, two workers,
the same thumbnail's bytes, the same certificate), each under `h2load -t2 -c32 -m10 -D SECS --warm-up-time=1` against a
cached thumbnail, in alternating rounds (the order reversed every other round). Prints every round, then each binary's
median req/s and its median same-round ratio to nginx (with the spread), and the median same-round ratio after/before.
Needs h2load (nghttp2-client), nginx and openssl; the AFTER binary's built-in origin serves the images.

Usage: before_after_h2.py BEFORE AFTER ROUNDS   (SECS=5 by default)"""
import os, re, subprocess, sys, time, socket, tempfile, statistics, urllib.request, ssl
before, after, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3])
secs = os.environ.get("SECS", "5")
work = tempfile.mkdtemp(prefix="h2ab"); os.chmod(work, 0o755)
procs = []
def port():
    s = socket.socket(); s.bind(("127.0.0.1", 0)); p = s.getsockname()[1]; s.close(); return p
def start(cmd):
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=open(os.path.join(work, "log%d" % len(procs)), "w")); procs.append(p); return p
def wait(url):
    ctx = ssl._create_unverified_context()
    for _ in range(200):
        try: return urllib.request.urlopen(url, context=ctx, timeout=2).read()
        except Exception: time.sleep(0.05)
    raise SystemExit("no answer from " + url)
try:
    op = port(); start([after, "origin", "--port", str(op), "--latency-ms", "0"])
    base = f"http://127.0.0.1:{op}"; wait(base + "/periodictable/Tiles/026/s7.JPG")
    crt, key = os.path.join(work, "c.crt"), os.path.join(work, "c.key")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1",
                    "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", key, "-out", crt], check=True, capture_output=True)
    os.chmod(key, 0o644)
    urls = {}
    for name, binary in (("before", before), ("after", after)):
        p = port(); c = os.path.join(work, name)
        start([binary, "serve", "--port", str(p), "--tls-cert", crt, "--tls-key", key, "--cache-dir", c, "--db", c + ".sqlite",
               "--tiles-base", base + "/periodictable", "--images-base", base + "/images-of-elements"])
        urls[name] = f"https://127.0.0.1:{p}/api/v1/elements/26/thumbnail"
        body = wait(urls[name]); wait(urls[name])
    static = os.path.join(work, "static"); os.makedirs(static); open(os.path.join(static, "thumb.jpg"), "wb").write(body); os.chmod(static, 0o755)
    np = port()
    open(os.path.join(work, "n.conf"), "w").write(f"""worker_processes 2; pid {work}/n.pid; error_log {work}/n.err; daemon off;
events {{ worker_connections 1024; }}
http {{ access_log off; sendfile on; tcp_nopush on; keepalive_requests 100000; types {{ image/jpeg jpg; }}
  server {{ listen 127.0.0.1:{np} ssl http2; ssl_certificate {crt}; ssl_certificate_key {key}; root {static}; etag on; }} }}
""")
    start(["nginx", "-c", os.path.join(work, "n.conf")]); urls["nginx"] = f"https://127.0.0.1:{np}/thumb.jpg"; wait(urls["nginx"])
    res = {k: [] for k in urls}
    for r in range(rounds):
        order = list(urls) if r % 2 == 0 else list(reversed(urls))
        for k in order:
            out = subprocess.run(["h2load", "-t2", "-c32", "-m10", f"-D{secs}", "--warm-up-time=1", urls[k]], capture_output=True, text=True).stdout
            rps = float(re.search(r"finished in [\d.]+\w+, ([\d.]+) req/s", out).group(1))
            m = re.search(r"requests: \d+ total, \d+ started, (\d+) done, (\d+) succeeded, (\d+) failed", out)
            res[k].append(rps)
            print(r, k, f"{rps:,.0f}", "failed", m.group(3), flush=True)
    for k in ("before", "after"):
        ratios = [a / b for a, b in zip(res[k], res["nginx"])]
        print(k, f"median {statistics.median(res[k]):,.0f} req/s, x nginx median {statistics.median(ratios):.3f} (min {min(ratios):.3f} max {max(ratios):.3f})")
    print("nginx", f"{statistics.median(res['nginx']):,.0f}")
    print("after/before", f"{statistics.median([a/b for a,b in zip(res['after'], res['before'])]):.3f}")
finally:
    for p in procs: p.terminate()
    for p in procs:
        try: p.wait(5)
        except Exception: p.kill()
