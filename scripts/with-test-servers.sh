#!/usr/bin/env bash
# Runs a command (`make test`: swift test) with the test suite's SeaweedFS and PostgreSQL already started, so that
# their start (weed's, and initdb's) does not land in the first seconds of the suite, when every test starts at once
# on two cores. Exports TILECACHE_TEST_S3_PORT and TILECACHE_TEST_POSTGRES_PORT, which the tests' `SeaweedFS.shared()`
# and `PostgresServer.shared()` use instead of starting their own; both servers stop when the command ends.
#   scripts/with-test-servers.sh COMMAND...
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
work=$(mktemp -d /tmp/tilecache-test-servers-XXXXXX)
chmod 755 "$work"  # PostgreSQL runs as `postgres` when this runs as root: it must reach its data directory
pids=()
cleanup() { for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT
wait_ready() {  # FILE PID NAME: waits for "ready PORT" in FILE, prints PORT
    for _ in $(seq 1 240); do
        port=$(sed -n 's/^ready //p' "$1")
        [ -n "$port" ] && { echo "$port"; return 0; }
        kill -0 "$2" 2>/dev/null || { echo "with-test-servers: $3 did not start:" >&2; cat "$1.err" >&2; return 1; }
        sleep 0.25
    done
    echo "with-test-servers: $3 not ready after 60 s" >&2
    return 1
}
AWS_ACCESS_KEY_ID=tilecache-test AWS_SECRET_ACCESS_KEY=tilecache-test-secret \
    "$root/scripts/seaweedfs.sh" "$work/seaweedfs" 0 $$ > "$work/seaweedfs.out" 2> "$work/seaweedfs.out.err" &
pids+=($!)
PGPASSWORD=tilecache-test-password "$root/scripts/postgres.sh" run "$work/postgres" 0 $$ > "$work/postgres.out" 2> "$work/postgres.out.err" &
pids+=($!)
TILECACHE_TEST_S3_PORT=$(wait_ready "$work/seaweedfs.out" "${pids[0]}" SeaweedFS)
TILECACHE_TEST_POSTGRES_PORT=$(wait_ready "$work/postgres.out" "${pids[1]}" PostgreSQL)
export TILECACHE_TEST_S3_PORT TILECACHE_TEST_POSTGRES_PORT
echo "with-test-servers: SeaweedFS S3 on :$TILECACHE_TEST_S3_PORT, PostgreSQL on :$TILECACHE_TEST_POSTGRES_PORT" >&2
"$@"
