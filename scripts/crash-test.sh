#!/usr/bin/env bash
# Crash safety of the disk cache: kills `tilecache prefetch` with SIGKILL at random moments, KILLS times, against the
# built-in origin with latency, and after every kill checks that every entry decodes and matches its checksum
# (`tilecache stats --verify`), that no temp file survives the next start, and that the size limit holds. Then two
# prefetches write into the same cache at once, and a final prefetch must get every image.
# Usage: scripts/crash-test.sh TILECACHE_BINARY [KILLS] (default 5; make test runs the short form).
set -euo pipefail
cd "$(dirname "$0")/.."
tilecache=${1:?usage: scripts/crash-test.sh TILECACHE_BINARY [KILLS]}
kills=${2:-5}
limit_bytes=$((4 * 1024 * 1024))
work=$(mktemp -d /tmp/tilecache-crash.XXXXXX)
origin_pid=""
cleanup() { [ -n "$origin_pid" ] && kill "$origin_pid" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT

source scripts/origin.sh
start_origin "$tilecache" "$work" --latency-ms 20
cache="$work/cache"
run=("$tilecache" prefetch --tiles-base "$tiles" --images-base "$images" --cache-dir "$cache" --disk-bytes "$limit_bytes" --format json)

fail() { echo "crash-test FAILED: $*" >&2; exit 1; }
check_cache() {
    local label=$1
    # Opening the cache (as any start does) removes temp files of dead writers; --verify reads and decodes every entry.
    local report
    report=$("$tilecache" stats --verify --cache-dir "$cache" --format json 2>"$work/verify.err") \
        || fail "$label: stats --verify failed: $report $(cat "$work/verify.err")"
    python3 - "$label" "$limit_bytes" "$report" <<'PY' || exit 1
import json, sys
label, limit, report = sys.argv[1], int(sys.argv[2]), json.loads(sys.argv[3])
verification = report.get("verification") or {"valid": 0, "removed": 0, "tempFiles": 0}
if verification["removed"] or verification["tempFiles"]:
    sys.exit(f"crash-test FAILED: {label}: {verification}")
if report["bytes"] > limit:
    sys.exit(f"crash-test FAILED: {label}: {report['bytes']} bytes stored, limit {limit}")
print(f"crash-test: {label}: {verification['valid']} entries verified, {report['bytes']} bytes, no temp files")
PY
}

# Waits (with a deadline) for the prefetch to have opened the cache, so that the kill lands while it writes and not
# before it starts (a debug binary takes a while to start on a loaded machine).
wait_for_cache() {
    local pid=$1
    for _ in $(seq 400); do
        [ -d "$cache" ] && return 0
        kill -0 "$pid" 2>/dev/null || return 0
        sleep 0.05
    done
    fail "no cache directory after 20 s at $cache"
}

for i in $(seq "$kills"); do
    "${run[@]}" > /dev/null 2>&1 &
    pid=$!
    wait_for_cache "$pid"
    sleep "0.$((RANDOM % 9 + 1))$((RANDOM % 10))"
    kill -9 "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
    check_cache "kill $i/$kills"
done

"${run[@]}" > "$work/a.json" 2>/dev/null &
a=$!
"${run[@]}" > "$work/b.json" 2>/dev/null &
b=$!
wait "$a" || true
wait "$b" || true
check_cache "two processes at once"

"${run[@]}" > "$work/final.json" 2>/dev/null || true
python3 - "$work/final.json" <<'PY'
import json, sys
report = json.load(open(sys.argv[1]))
broken = [f["url"] for f in report["failures"]]
aliases = [(a["url"].rsplit("/", 1)[1], a["servedBy"].rsplit("/", 1)[1]) for a in report.get("aliases", [])]
if report["succeeded"] != report["requested"] or broken or aliases != [("cesium.jpg", "caesium.jpg")]:
    sys.exit(f"crash-test FAILED: final prefetch: {report['succeeded']} of {report['requested']} succeeded, broken: {broken},"
             f" aliases: {aliases}")
print(f"crash-test: final prefetch got every image ({report['succeeded']} of {report['requested']}; cesium.jpg served by"
      " caesium.jpg, its alias remembered in the cache)")
PY
check_cache "after the final prefetch"
echo "crash-test: passed ($kills kills)"
