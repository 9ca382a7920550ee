#!/usr/bin/env bash
# Runs SeaweedFS (S3 gateway included) on loopback for tests and the fleet demo, telemetry off, until this script gets
# SIGTERM or SIGINT, or until the process WATCH (default: none) exits; then stops it (SIGKILL if it lingers).
# Prints "ready S3_PORT" on stdout once the S3 API answers signed requests.
#   scripts/seaweedfs.sh DIR [S3_PORT [WATCH]]
# DIR holds the data and s3.json (one identity: AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY from the environment, else
# tilecache-test / tilecache-test-secret). S3_PORT 0 (default) picks free ports. Never runs `weed update`.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
weed="${TILECACHE_WEED:-$root/.build-tools/seaweedfs/bin/weed}"
[ -x "$weed" ] || { echo "seaweedfs.sh: no weed at $weed: run scripts/install-fleet-deps.sh" >&2; exit 1; }
dir=$1; s3_port=${2:-0}; watch=${3:-}
access=${AWS_ACCESS_KEY_ID:-tilecache-test}; secret=${AWS_SECRET_ACCESS_KEY:-tilecache-test-secret}
mkdir -p "$dir/data"
cat > "$dir/s3.json" <<JSON
{"identities":[{"name":"tilecache","credentials":[{"accessKey":"$access","secretKey":"$secret"}],
  "actions":["Admin","Read","Write","List","Tagging"]}]}
JSON
# weed listens on each port and on port+10000 (gRPC): find four ports whose gRPC twins are free too.
read -r master volume filer s3 < <(python3 - "$s3_port" <<'PY'
import random, socket, sys
def free(port):
    with socket.socket() as s:
        # As weed's listeners do: a port whose old connections linger in TIME_WAIT is free (a restart on the same port).
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try: s.bind(("127.0.0.1", port)); return True
        except OSError: return False
wanted = int(sys.argv[1])
# Below Linux's ephemeral range (32768-60999), gRPC twins included: a port there can be taken by any outgoing
# connection between this check and weed's bind (seen: weed exited while the test suite ran).
for _ in range(500):
    base = random.randrange(12000, 22700)
    ports = [base, base + 1, base + 2, wanted or base + 3]
    if all(free(p) and free(p + 10000) for p in ports):
        print(*ports); break
else:
    sys.exit("seaweedfs.sh: no free ports")
PY
)
"$weed" server -dir="$dir/data" -ip=127.0.0.1 -ip.bind=127.0.0.1 -master.port="$master" -volume.port="$volume" \
    -filer -filer.port="$filer" -s3 -s3.port="$s3" -s3.config="$dir/s3.json" -master.telemetry=false \
    -s3.port.iceberg=0 -s3.port.lance=0 -master.volumeSizeLimitMB=256 -volume.max=64 > "$dir/weed.log" 2>&1 &
pid=$!
stop() { kill "$pid" 2>/dev/null || true; for _ in $(seq 1 20); do kill -0 "$pid" 2>/dev/null || exit 0; sleep 0.1; done; kill -9 "$pid" 2>/dev/null || true; exit 0; }
trap stop TERM INT EXIT
empty=e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855
for _ in $(seq 1 120); do
    # A signed HEAD of a bucket that does not exist answers 404 once the S3 gateway and the filer are up.
    code=$(curl -s -o /dev/null -w '%{http_code}' -I --aws-sigv4 aws:amz:us-east-1:s3 --user "$access:$secret" \
        -H "x-amz-content-sha256: $empty" "http://127.0.0.1:$s3/tilecache-readiness-probe" || true)
    [ "$code" = 404 ] && break
    kill -0 "$pid" 2>/dev/null || { echo "seaweedfs.sh: weed exited; its log:" >&2; tail -20 "$dir/weed.log" >&2; exit 1; }
    sleep 0.25
done
[ "$code" = 404 ] || { echo "seaweedfs.sh: S3 API not ready after 30 s (last answer $code)" >&2; exit 1; }
echo "ready $s3"
while kill -0 "$pid" 2>/dev/null; do
    if [ -n "$watch" ] && ! kill -0 "$watch" 2>/dev/null; then break; fi
    sleep 0.5
done
