# Sourced by the scripts that need the built-in origin: start_origin TILECACHE WORKDIR [ORIGIN OPTIONS...] starts
# `tilecache origin` on a free loopback port in the background and sets origin_pid, tiles and images (the base URLs
# it prints). The caller kills origin_pid when done.
start_origin() {
    local tilecache=$1 work=$2
    shift 2
    "$tilecache" origin --port 0 "$@" > "$work/origin.out" 2>/dev/null &
    origin_pid=$!
    for _ in $(seq 100); do grep -q -- "--images-base" "$work/origin.out" 2>/dev/null && break; sleep 0.1; done
    tiles=$(grep -- "--tiles-base" "$work/origin.out" | cut -d' ' -f2)
    images=$(grep -- "--images-base" "$work/origin.out" | cut -d' ' -f2)
}
