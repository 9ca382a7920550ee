#!/usr/bin/env bash
# Runs a PostgreSQL server from Debian's packages on loopback, in a data directory of its own, for tests and the
# fleet demo (as any developer would run one for integration tests: initdb + pg_ctl, never the system's cluster).
#   scripts/postgres.sh run DIR [PORT [WATCH]]  creates the cluster in DIR/pg on first use (user tilecache, password
#       $PGPASSWORD or tilecache-test-password, database tilecache), starts it on 127.0.0.1:PORT (0 or none: a free
#       port), prints "ready PORT", and stops it on SIGTERM or SIGINT, or when the process WATCH exits.
#   scripts/postgres.sh stop DIR    stops that server at once (pg_ctl -m immediate: what a crash or kill -9 does)
#   scripts/postgres.sh start DIR   starts it again on the same port
# As root, the server runs as the `postgres` user (PostgreSQL refuses to run as root).
set -euo pipefail
mode=$1; dir=$2
bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
[ -x "$bin/initdb" ] || { echo "postgres.sh: no PostgreSQL under /usr/lib/postgresql: run scripts/install-fleet-deps.sh" >&2; exit 1; }
pg="$dir/pg"
as_server() { if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
pg_start() { as_server "$bin/pg_ctl" -D "$pg/data" -l "$pg/server.log" -w -t 60 start >/dev/null; }

case "$mode" in
stop) as_server "$bin/pg_ctl" -D "$pg/data" -m immediate -w stop >/dev/null; exit 0 ;;
start) pg_start; exit 0 ;;
run) ;;
*) echo "usage: postgres.sh run|stop|start DIR [PORT [WATCH]]" >&2; exit 1 ;;
esac

port=${3:-0}; watch=${4:-}
password=${PGPASSWORD:-tilecache-test-password}
if [ "$port" = 0 ]; then
    port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
fi
if [ ! -d "$pg/data" ]; then
    mkdir -p "$pg"
    chmod 755 "$dir"
    printf '%s\n' "$password" > "$pg/password"
    [ "$(id -u)" -eq 0 ] && chown -R postgres "$pg"
    as_server "$bin/initdb" -D "$pg/data" -U tilecache --pwfile="$pg/password" --auth=scram-sha-256 -E UTF8 \
        --locale=C.UTF-8 --no-sync >"$pg/initdb.log" 2>&1 || { cat "$pg/initdb.log" >&2; exit 1; }
    rm -f "$pg/password"
    cat >> "$pg/data/postgresql.conf" <<CONF
listen_addresses = '127.0.0.1'
port = $port
unix_socket_directories = '$pg'
max_connections = 200
CONF
    fresh=1
fi
port=$(sed -n 's/^port = //p' "$pg/data/postgresql.conf" | tail -1)
pg_start || { echo "postgres.sh: the server did not start; its log:" >&2; tail -20 "$pg/server.log" >&2; exit 1; }
stop() { as_server "$bin/pg_ctl" -D "$pg/data" -m fast -w stop >/dev/null 2>&1 || true; exit 0; }
trap stop TERM INT EXIT
if [ "${fresh:-0}" = 1 ]; then
    PGPASSWORD=$password psql -q -h 127.0.0.1 -p "$port" -U tilecache -d postgres -c 'CREATE DATABASE tilecache' >/dev/null
fi
echo "ready $port"
while true; do
    if [ -n "$watch" ] && ! kill -0 "$watch" 2>/dev/null; then break; fi
    sleep 0.5
done
