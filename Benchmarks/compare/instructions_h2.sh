#!/usr/bin/env bash
# Instructions per HTTP/2 request of `tilecache serve --tls-cert` answering a cached thumbnail, counted by valgrind's
# callgrind: the service runs under callgrind, is warmed (the thumbnail loaded, 2,000 requests by h2load), its counts
# are zeroed, then h2load sends N requests (4 connections, 10 streams each) and the counts are dumped: the dump over N.
#   Benchmarks/compare/instructions_h2.sh .build/release/tilecache [N]   (N=20000 by default; about 2 minutes)
# Needs valgrind, objcopy, h2load (nghttp2-client), curl and openssl; uses ports 18556 (origin) and 18557 (service).
set -euo pipefail
binary=$1 requests=${2:-20000}
work=$(mktemp -d)
pids=()
trap 'kill "${pids[@]}" 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$work"' EXIT
# Debian 12's valgrind (3.19) cannot read Swift 6's DWARF 5: it counts a copy without debug information.
objcopy --strip-debug "$binary" "$work/tilecache"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 -subj /CN=127.0.0.1 \
    -addext subjectAltName=IP:127.0.0.1 -keyout "$work/key.pem" -out "$work/cert.pem" 2> /dev/null
"$work/tilecache" origin --port 18556 --latency-ms 0 > /dev/null 2>&1 & pids+=($!)
valgrind --tool=callgrind --callgrind-out-file="$work/callgrind.out" "$work/tilecache" serve --port 18557 \
    --tls-cert "$work/cert.pem" --tls-key "$work/key.pem" --cache-dir "$work/cache" --db "$work/db.sqlite" \
    --tiles-base http://127.0.0.1:18556/periodictable --images-base http://127.0.0.1:18556/images-of-elements \
    > "$work/serve.log" 2>&1 & service=$!; pids+=($service)
url=https://127.0.0.1:18557/api/v1/elements/26/thumbnail
for _ in $(seq 1 300); do curl -sk -o /dev/null https://127.0.0.1:18557/healthz && break; sleep 0.5; done
curl -skf --http2 -o /dev/null "$url" && curl -skf --http2 -o /dev/null "$url"
h2load -t1 -c4 -m10 -n 2000 "$url" > /dev/null
callgrind_control -z "$service" > /dev/null
h2load -t1 -c4 -m10 -n "$requests" "$url" | grep -E "^requests:"
callgrind_control -d "$service" > /dev/null
total=$(callgrind_annotate "$work/callgrind.out.1" 2> /dev/null | awk '/PROGRAM TOTALS/ { gsub(",", "", $1); print $1; exit }')
echo "instructions a request: $((total / requests))"
