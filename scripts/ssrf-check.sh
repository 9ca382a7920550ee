#!/usr/bin/env bash
# The SSRF check (part of `make test`): open sources against real hosts on real interfaces. Three network namespaces
# joined by veth pairs (iproute2):
#   service  93.184.216.1 and 10.77.0.1   `tilecache serve --allowed-sources '*'` (no --allow-private-sources)
#   public   93.184.216.34                `tilecache origin` on port 80, with redirects to the private host and to the
#                                         cloud metadata address
#   private  10.77.0.2, 169.254.169.254   Python's http.server on port 80, logging every request it gets
# The service's /etc/hosts (ip netns exec's /etc/netns) names images.public.test (the public host) and
# rebind.private.test (a name that leads to the private host). Every way of naming the private host or the metadata
# address (its address, a name, decimal and hex spellings, an IPv4-mapped IPv6 address, a redirect from the public
# host) is answered 404 source-not-allowed, and the private host's log shows no request; the public host's images are
# served; the same private URL through a second service with --allow-private-sources is served (so the refusals are
# the guard's, not the network's). Needs root (CI runs as root) and iproute2 (installed when missing).
set -euo pipefail
cd "$(dirname "$0")/.."
tilecache=$(realpath "${1:-.build/debug/tilecache}")
[ -x "$tilecache" ] || { echo "ssrf-check: no tilecache binary at $tilecache" >&2; exit 1; }
[ "$(id -u)" = 0 ] || { echo "ssrf-check: needs root, to make network namespaces (ip netns)" >&2; exit 1; }
command -v ip > /dev/null || scripts/apt-install.sh ssrf-check iproute2
tag=tc$$
svc=$tag-svc pub=$tag-pub prv=$tag-prv
work=$(mktemp -d /tmp/tilecache-ssrf.XXXXXX)
pids=()
cleanup() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    wait 2>/dev/null || true
    for ns in "$svc" "$pub" "$prv"; do ip netns del "$ns" 2>/dev/null || true; rm -rf "/etc/netns/$ns"; done
    rm -rf "$work"
}
trap cleanup EXIT
# A command in a namespace. Backgrounded servers are started with `ip netns exec` itself, not this function: `$!`
# of a backgrounded function is a subshell, and killing it left the server running (seen: every run left three).
in_ns() { local ns=$1; shift; ip netns exec "$ns" "$@"; }

for ns in "$svc" "$pub" "$prv"; do ip netns add "$ns"; in_ns "$ns" ip link set lo up; done
ip link add "${tag}a" type veth peer name "${tag}b"
ip link set "${tag}a" netns "$svc"; ip link set "${tag}b" netns "$pub"
ip link add "${tag}c" type veth peer name "${tag}d"
ip link set "${tag}c" netns "$svc"; ip link set "${tag}d" netns "$prv"
in_ns "$svc" ip addr add 93.184.216.1/24 dev "${tag}a"; in_ns "$svc" ip link set "${tag}a" up
in_ns "$pub" ip addr add 93.184.216.34/24 dev "${tag}b"; in_ns "$pub" ip link set "${tag}b" up
in_ns "$svc" ip addr add 10.77.0.1/24 dev "${tag}c"; in_ns "$svc" ip link set "${tag}c" up
in_ns "$prv" ip addr add 10.77.0.2/24 dev "${tag}d"; in_ns "$prv" ip addr add 169.254.169.254/16 dev "${tag}d"
in_ns "$prv" ip link set "${tag}d" up
in_ns "$svc" ip route add 169.254.0.0/16 dev "${tag}c"
in_ns "$prv" ip route add default dev "${tag}d"
mkdir -p "/etc/netns/$svc"
printf '127.0.0.1 localhost\n93.184.216.34 images.public.test\n10.77.0.2 rebind.private.test\n' > "/etc/netns/$svc/hosts"

# The private host: one JPEG where both the private address and the metadata address serve it, every request logged.
mkdir -p "$work/private/periodictable/Tiles/001" "$work/private/latest/meta-data"
"$tilecache" origin --port 0 > "$work/seed-origin.out" 2>/dev/null & seed=$!
for _ in $(seq 100); do grep -q -- "--tiles-base" "$work/seed-origin.out" 2>/dev/null && break; sleep 0.1; done
curl -sf -o "$work/private/periodictable/Tiles/001/s7.JPG" "$(grep -- "--tiles-base" "$work/seed-origin.out" | cut -d' ' -f2)/Tiles/001/s7.JPG"
cp "$work/private/periodictable/Tiles/001/s7.JPG" "$work/private/latest/meta-data/photo.jpg"
kill $seed; wait $seed 2>/dev/null || true
(cd "$work/private" && exec ip netns exec "$prv" python3 -m http.server 80 --bind :: > /dev/null 2> "$work/private.log") & pids+=($!)

ip netns exec "$pub" "$tilecache" origin --host 93.184.216.34 --port 80 \
    --fault "/Tiles/002/=redirect:http://10.77.0.2/periodictable/Tiles/001/s7.JPG" \
    --fault "/Tiles/003/=redirect:http://169.254.169.254/latest/meta-data/photo.jpg" \
    --fault "/Tiles/004/=redirect:http://images.public.test/periodictable/Tiles/005/s7.JPG" > "$work/public.out" 2>&1 & pids+=($!)
start_serve() {  # PORT [OPTIONS...]: a service in the service namespace
    local port=$1; shift
    ip netns exec "$svc" "$tilecache" serve --port "$port" --cache-dir "$work/cache-$port" --db "$work/favorites-$port.sqlite" \
        --allowed-sources '*' "$@" > "$work/serve-$port.out" 2> "$work/serve-$port.err" & pids+=($!)
}
start_serve 8080
start_serve 8081 --allow-private-sources
for port in 8080 8081; do
    for _ in $(seq 200); do grep -q "serving on" "$work/serve-$port.out" 2>/dev/null && break; sleep 0.1; done
    grep -q "serving on" "$work/serve-$port.out" || { cat "$work/serve-$port.err" >&2; echo "ssrf-check: serve on $port did not start" >&2; exit 1; }
done
for _ in $(seq 100); do in_ns "$svc" curl -sf -o /dev/null http://93.184.216.34/periodictable/Tiles/001/s7.JPG && break; sleep 0.1; done
for _ in $(seq 100); do in_ns "$svc" curl -sf -o /dev/null http://10.77.0.2/periodictable/Tiles/001/s7.JPG && break; sleep 0.1; done
# Both hosts are reachable from the service's namespace (the control requests above are the private host's first two
# log lines); the guard, not the network, must keep the service away from the private one.
in_ns "$svc" curl -sf -o /dev/null http://169.254.169.254/latest/meta-data/photo.jpg
baseline=$(grep -c '"GET ' "$work/private.log" || true)
[ "$baseline" = 2 ] || { echo "ssrf-check: the control requests did not reach the private host ($baseline logged)" >&2; cat "$work/private.log" >&2; exit 1; }

failures=0
expect() {  # PORT STATUS REASON-OR-- SOURCE-URL DESCRIPTION
    local port=$1 want=$2 reason=$3 source=$4 what=$5 status shown
    status=$(in_ns "$svc" curl -s -o "$work/body" -w '%{http_code}' "http://127.0.0.1:$port/_/w:32/plain/$source")
    shown=$([ "$reason" = - ] || echo "$reason")
    if [ "$status" != "$want" ] || { [ "$reason" != - ] && ! grep -q "\"$reason\"" "$work/body"; }; then
        echo "ssrf-check: FAIL $what: $source gave $status, expected $want $shown: $(head -c 200 "$work/body" | tr -d '\0')" >&2
        failures=$((failures + 1))
    else
        echo "ssrf-check: ok   $what: $status $shown"
    fi
}
expect 8080 200 - "http://93.184.216.34/periodictable/Tiles/001/s7.JPG" "a public address"
expect 8080 200 - "http://images.public.test/periodictable/Tiles/001/s7.JPG" "a public host by name"
expect 8080 200 - "http://images.public.test/periodictable/Tiles/004/s7.JPG" "a redirect from public to public"
expect 8080 404 source-not-allowed "http://10.77.0.2/periodictable/Tiles/001/s7.JPG" "the private address"
expect 8080 404 source-not-allowed "http://rebind.private.test/periodictable/Tiles/001/s7.JPG" "a name that leads to the private address"
expect 8080 404 source-not-allowed "http://172818434/periodictable/Tiles/001/s7.JPG" "the private address in decimal"
expect 8080 404 source-not-allowed "http://0x0a4d0002/periodictable/Tiles/001/s7.JPG" "the private address in hex"
expect 8080 404 source-not-allowed "http://012.077.0.2/periodictable/Tiles/001/s7.JPG" "an octal spelling"
expect 8080 404 source-not-allowed "http://[::ffff:10.77.0.2]/periodictable/Tiles/001/s7.JPG" "the private address IPv4-mapped"
expect 8080 404 source-not-allowed "http://169.254.169.254/latest/meta-data/photo.jpg" "the cloud metadata address"
expect 8080 404 source-not-allowed "http://images.public.test/periodictable/Tiles/002/s7.JPG" "a redirect from public to private"
expect 8080 404 source-not-allowed "http://images.public.test/periodictable/Tiles/003/s7.JPG" "a redirect from public to the metadata address"
expect 8080 404 source-not-allowed "http://127.0.0.1:8081/healthz" "the service's own loopback"
after=$(grep -c '"GET ' "$work/private.log" || true)
if [ "$after" != "$baseline" ]; then
    echo "ssrf-check: FAIL the private host got $((after - baseline)) requests from the guarded service:" >&2
    tail -n +3 "$work/private.log" >&2
    failures=$((failures + 1))
else
    echo "ssrf-check: ok   the private host's log shows no request from the guarded service"
fi
expect 8081 200 - "http://10.77.0.2/periodictable/Tiles/001/s7.JPG" "the private address with --allow-private-sources"
[ "$(grep -c '"GET ' "$work/private.log" || true)" -gt "$after" ] || { echo "ssrf-check: FAIL the allowed request did not reach the private host" >&2; failures=$((failures + 1)); }
[ "$failures" = 0 ] || { echo "ssrf-check: $failures failures; the guarded service's log:" >&2; tail -20 "$work/serve-8080.err" >&2; exit 1; }
echo "ssrf-check: passed: public hosts served; 10 ways to the private host and the metadata address refused with no request reaching them"
