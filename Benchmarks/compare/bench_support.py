"""What the side-by-side scripts of this folder share: a free loopback port, waiting for a server, stopping the servers
started, nginx's configuration for the static peer, a percentile, and the camera photos (the test suite's five photos and two phone-sized copies libvips enlarges from them)."""
import http.client
import os
import shutil
import socket
import subprocess
import time

PHOTOS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "Tests", "TestSupport", "photos")


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def wait_http(port, path, who, seconds=60, host="127.0.0.1"):
    """Until `host:port` answers `path` with a status below 500; `who` names the script in the failure."""
    deadline = time.time() + seconds
    while time.time() < deadline:
        try:
            connection = http.client.HTTPConnection(host, port, timeout=5)
            connection.request("GET", path)
            if connection.getresponse().status < 500:
                return
        except OSError:
            pass
        time.sleep(0.1)
    raise SystemExit(f"{who}: nothing answers on {host}:{port}{path}")


def stop(processes, work=None):
    """Terminates every process of `processes` still running (waiting up to 30 s for each), then removes `work`."""
    for process in processes:
        if process.poll() is None:
            process.terminate()
            process.wait(timeout=30)
    if work:
        shutil.rmtree(work, ignore_errors=True)


def write_nginx_config(work, static, port):
    """Writes `work`/nginx.conf for the static peer of the HTTP/1 rows: 2 workers serving `static` on 127.0.0.1:`port`
    in the foreground, no access log, sendfile, keep-alive for 100,000 requests; returns its path (`nginx -c PATH`)."""
    path = os.path.join(work, "nginx.conf")
    with open(path, "w") as out:
        out.write(f"""worker_processes 2; pid {work}/nginx.pid; error_log {work}/nginx-error.log; daemon off;
events {{ worker_connections 1024; }}
http {{ access_log off; sendfile on; tcp_nopush on; keepalive_requests 100000; types {{ image/jpeg jpg; }}
  server {{ listen 127.0.0.1:{port}; root {static}; etag on; }} }}
""")
    return path


def percentile(values, fraction):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(fraction * (len(ordered) - 1))))]


def camera_photos(directory):
    """The camera photos in `directory` (made if missing): Tests/TestSupport/photos' JPEGs (a camera photo,
    scikit-image's and Pillow's test images, 512x600 to 1411x1411) and 10- and 8-megapixel copies of two of them,
    enlarged by libvips' `vips resize` as phones take them. Returns their names, sorted."""
    os.makedirs(directory, exist_ok=True)
    for name in os.listdir(PHOTOS):
        if name.endswith(".jpg"):
            shutil.copy(os.path.join(PHOTOS, name), directory)
    for source, target, factor in (("china.jpg", "china_4032x2690.jpg", "6.3"), ("hubble_deep_field.jpg", "hubble_3000x2616.jpg", "3")):
        subprocess.run(["vips", "resize", os.path.join(directory, source), os.path.join(directory, target) + "[Q=90]", factor], check=True)
    return sorted(os.listdir(directory))
