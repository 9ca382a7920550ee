#!/usr/bin/env bash
# The open-sources check (part of `make test`): imgproxy URLs built by two URL builders from PyPI that no one here
# wrote (klen's `imgproxy` 1.0.0 and the Developer Society's `pyimgproxy` 0.4), signed with a key and salt, against a
# real `tilecache serve --allowed-sources` over the built-in origin; every answer's size and format read by Pillow and
# compared with imgproxy's own geometry (scripts/open_sources_check.py ports its calcScale and calcSizes), and the
# refusals (a wrong or missing signature, a source not allowed, an unknown option) as imgproxy answers them.
# Installs the builders and Pillow into .build/sources-venv.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/origin.sh
venv=.build/sources-venv
if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c "import imgproxy, pyimgproxy, PIL" 2>/dev/null; then
    python3 -m venv "$venv"
    "$venv/bin/pip" install -q "imgproxy==1.0.0" "pyimgproxy==0.4" "pillow==13.0.0"
fi
tilecache=${1:-.build/debug/tilecache}
[ -x "$tilecache" ] || { echo "open-sources-check: no tilecache binary at $tilecache" >&2; exit 1; }
work=$(mktemp -d /tmp/tilecache-sources.XXXXXX)
cleanup() { kill "${serve_pid:-}" "${origin_pid:-}" 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT
start_origin "$tilecache" "$work"
key=943b421c9eb07c830af81030552c86009268de4e532ba2ee2eab8247c6da0881
salt=520f986b998545b4785e0defbc4f3c1203f22de2374a3d53cb7a7fe9fea309c5
origin_prefix=$(echo "$tiles" | grep -o 'http://[^/]*')/
IMGPROXY_KEY=$key IMGPROXY_SALT=$salt "$tilecache" serve --port 0 --tiles-base "$tiles" --images-base "$images" \
    --cache-dir "$work/cache" --db "$work/favorites.sqlite" --allowed-sources "$origin_prefix" --allow-private-sources \
    > "$work/serve.out" 2> "$work/serve.err" &
serve_pid=$!
for _ in $(seq 200); do grep -q "serving on" "$work/serve.out" 2>/dev/null && break; sleep 0.1; done
url=$(grep -o "http://[^ ]*" "$work/serve.out" | head -1)
[ -n "$url" ] || { cat "$work/serve.err" >&2; echo "open-sources-check: serve did not start" >&2; exit 1; }
"$venv/bin/python" scripts/open_sources_check.py "$url" "$tiles" "$images" "$key" "$salt" \
    || { echo "open-sources-check: failed; the service's log:" >&2; tail -20 "$work/serve.err" >&2; exit 1; }
