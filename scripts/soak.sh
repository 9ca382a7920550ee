#!/usr/bin/env bash
# Soak test of `tilecache serve`: SECONDS (default 600) of wrk with a mix of cached, resized, missing and failing
# requests while the built-in origin injects faults (the `hostile` and `flaky` profiles), sampling the service's
# resident memory every 10 s. Passes when every response has the status its request calls for (no error a client
# did not cause), wrk saw no socket errors, the service's counts add up (every failed answer is a failed load or a
# request that shared one), and memory levels off within the cache limits.
# Usage: scripts/soak.sh [SECONDS]   (make soak)
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-600}
memory_bytes=$((32 * 1024 * 1024))
command -v wrk >/dev/null || { echo "soak: wrk is missing (apt-get install wrk)" >&2; exit 1; }
make --no-print-directory release >/dev/null  # the release build as users get it (Makefile, RELEASE_BUILD)
tilecache="$(swift build -c release --show-bin-path)/tilecache"
work=$(mktemp -d /tmp/tilecache-soak.XXXXXX)
pids=()
cleanup() { for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done; rm -rf "$work"; }
trap cleanup EXIT

source scripts/origin.sh
start_origin "$tilecache" "$work" --latency-ms 5 --faults hostile --fault '/Tiles/01=fail-first:1:503'
pids+=("$origin_pid")
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$tilecache" serve --port "$port" --tiles-base "$tiles" --images-base "$images" --cache-dir "$work/cache" \
    --memory-bytes "$memory_bytes" --timeout 5 > "$work/serve.log" 2>&1 &
serve_pid=$!
pids+=($serve_pid)
for _ in $(seq 100); do curl -sf "http://127.0.0.1:$port/healthz" >/dev/null 2>&1 && break; sleep 0.1; done

# The request mix, each path with the status it must get: thumbnails (200), resized thumbnails and photos (200),
# photos that do not exist (404 no-photo), unknown elements (404), bad widths (400), the hostile origin's broken
# thumbnails 003-008 (502), and the catalogue.
cat > "$work/mix.lua" <<'LUA'
local paths, expected = {}, {}
local function add(path, status) paths[#paths + 1] = path; expected[#expected + 1] = status end
for n = 1, 118 do
  local status = (n >= 3 and n <= 8) and 502 or 200
  add("/api/v1/elements/" .. n .. "/thumbnail", status)
  if n % 3 == 0 then add("/api/v1/elements/" .. n .. "/thumbnail?w=" .. (32 + n), status) end
  if n < 90 then
    add("/api/v1/elements/" .. n .. "/image", 200)
    if n % 4 == 0 then add("/api/v1/elements/" .. n .. "/image?w=320", 200) end
  elseif n >= 90 then
    add("/api/v1/elements/" .. n .. "/image", 404)
  end
end
add("/cesium.jpg", 200)   -- the seed host's path for the catalogue's "cesium.jpg": served by the host's caesium.jpg
add("/periodictable/Tiles/026/s7.JPG", 200)
add("/api/v1/elements/200/thumbnail", 404)
add("/api/v1/elements/26/thumbnail?w=5", 400)
add("/api/v1/elements", 200)
add("/api/v1/elements_remaining?sortBy=name", 200)
local index = 0
unexpected, counts = 0, {}   -- globals, so that done() can read them from each thread
function init(args) index = math.random(#paths) end
function request()
  index = index % #paths + 1
  return wrk.format("GET", paths[index])
end
function response(status, headers, body)
  counts[status] = (counts[status] or 0) + 1
  if status ~= expected[index] then unexpected = unexpected + 1 end
end
local threads = {}
function setup(thread) threads[#threads + 1] = thread end
function done(summary, latency, requests)
  local total, merged = 0, {}
  for _, thread in ipairs(threads) do
    total = total + thread:get("unexpected")
    for status, n in pairs(thread:get("counts")) do merged[status] = (merged[status] or 0) + n end
  end
  for status, n in pairs(merged) do io.write(string.format("soak-status %d %d\n", status, n)) end
  io.write(string.format("soak-unexpected %d\n", total))
end
LUA

# One connection per wrk thread, so each response answers the thread's last request and can be checked against it.
echo "soak: $seconds s of wrk (8 threads, one connection each) against $port; origin $tiles (hostile + flaky)"
( for _ in $(seq $((seconds / 10))); do
    sleep 10
    awk -v t="$SECONDS" '/VmRSS/ {printf "%d %.1f\n", t, $2 / 1024}' "/proc/$serve_pid/status" >> "$work/rss.txt"
  done ) &
pids+=($!)
wrk -t8 -c8 -d"${seconds}s" --timeout 10s -s "$work/mix.lua" "http://127.0.0.1:$port" > "$work/wrk.out" 2>&1 || true
sleep 1
curl -s "http://127.0.0.1:$port/api/v1/stats" > "$work/stats.json"
curl -s "http://127.0.0.1:$port/metrics" > "$work/metrics.txt"

python3 - "$work" "$memory_bytes" <<'PY'
import json, re, sys
work, memory_bytes = sys.argv[1], int(sys.argv[2])
wrk = open(f"{work}/wrk.out").read()
statuses = {int(s): int(n) for s, n in re.findall(r"soak-status (\d+) (\d+)", wrk)}
unexpected = int(re.search(r"soak-unexpected (\d+)", wrk).group(1))
socket_errors = re.search(r"Socket errors: (.*)", wrk)
served = sum(statuses.values())
rate = re.search(r"Requests/sec:\s+([\d.]+)", wrk).group(1)
stats = json.load(open(f"{work}/stats.json"))
rss = [tuple(map(float, line.split())) for line in open(f"{work}/rss.txt")]
print(f"soak: {served} responses ({rate}/s); by status: " + ", ".join(f"{s}: {n}" for s, n in sorted(statuses.items())))
failures = stats.get("failures", {})
failed_loads, shared_failed = sum(failures.values()), stats.get("sharedLoads", {}).get("failed", 0)
# Every failed load is answered with an error, and so is every request that shared it. In this mix that error is a 502
# (thumbnails 003-008); an upstream 404 would be one too (none in this mix: cesium.jpg is found as caesium.jpg), and the
# photo route's other 404s are the photos known not to exist, which never reach upstream. So the service's own counts must add up exactly. (wrk stops
# with up to 8 requests in flight: the service answers and counts them, wrk does not see them.)
metrics = open(f"{work}/metrics.txt").read()
def metric(name, *labels):
    pattern = rf'^{name}(?:\{{(.*)\}})? (\S+)$'
    return sum(int(float(value)) for found, value in re.findall(pattern, metrics, re.M) if all(label in found for label in labels))
served_502 = metric("tilecache_http_requests_total", 'status="502"')
upstream_404 = (metric("tilecache_http_requests_total", 'status="404"', 'route="/api/v1/elements/{id}/image"')
                - metric("tilecache_known_missing_photos_total"))
accounted = served_502 + upstream_404 == failed_loads + shared_failed
print(f"soak: upstream failures by reason (service /api/v1/stats): {failures}")
print(f"soak: failed loads {failed_loads} + requests that shared one {shared_failed} = {failed_loads + shared_failed}; "
      f"answered 502 {served_502} + upstream 404 {upstream_404} = {served_502 + upstream_404} (service /metrics): "
      f"{'adds up' if accounted else 'DOES NOT ADD UP'}; wrk saw 502 {statuses.get(502, 0)}")
print(f"soak: responses with an unexpected status: {unexpected}; wrk socket errors: {socket_errors.group(1) if socket_errors else 'none'}")
print("soak: resident memory, MiB, every 10 s: " + " ".join(f"{mb:.0f}" for _, mb in rss))
half = rss[len(rss) // 2:]
growth = max(mb for _, mb in half) - half[0][1]
limit = 64 + memory_bytes / 2**20 + 32  # runtime and libraries + the memory tier + slack
print(f"soak: second half grew {growth:.1f} MiB; peak {max(mb for _, mb in rss):.1f} MiB against a bound of {limit:.0f} MiB")
ok = (unexpected == 0 and socket_errors is None and growth < 8 and max(mb for _, mb in rss) < limit and served > 0
      and accounted and served_502 - statuses.get(502, 0) in range(0, 9))
print("soak: passed" if ok else "soak FAILED")
sys.exit(0 if ok else 1)
PY
