#!/usr/bin/env bash
# The open-sources check (part of `make test`): imgproxy URLs built by two URL builders from PyPI that no one here
# wrote (klen's `imgproxy` 1.0.0 and the Developer Society's `pyimgproxy` 0.4), signed with a key and salt, against a
# real `tilecache serve --allowed-sources` over the built-in origin; every answer's size and format read by Pillow and
# compared with imgproxy's own geometry (scripts/open_sources_check.py ports its calcScale and calcSizes), and the
# refusals (a wrong or missing signature, a source not allowed, an unknown option) as imgproxy answers them.
# Then thumbor itself (PyPI) on the same origin: URLs built by libthumbor are asked of thumbor and of TileCache
# (`--thumbor-key`), and the answers compared: size and format, the same pixels (their PNG answers), and the encoding
# quality (each quality(85) JPEG against its own server's PNG, TileCache within 0.5 dB of thumbor). Then GIF and AVIF
# sources (other projects' test files), AVIF and WebP outputs and Accept negotiation (scripts/formats_check.py: Pillow
# decodes every answer), and smart crops (g:sm) against libvips' own (scripts/smartcrop_check.py). Installs the
# builders, thumbor and Pillow into .build/sources-venv, and libvips-tools (Debian): scripts/check-envs.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/check-envs.sh sources
. scripts/origin.sh
venv=.build/sources-venv
tilecache=${1:-.build/debug/tilecache}
[ -x "$tilecache" ] || { echo "open-sources-check: no tilecache binary at $tilecache" >&2; exit 1; }
work=$(mktemp -d /tmp/tilecache-sources.XXXXXX)
cleanup() { kill "${serve_pid:-}" "${origin_pid:-}" "${thumbor_pid:-}" "${files_pid:-}" 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT
start_origin "$tilecache" "$work"
key=943b421c9eb07c830af81030552c86009268de4e532ba2ee2eab8247c6da0881
salt=520f986b998545b4785e0defbc4f3c1203f22de2374a3d53cb7a7fe9fea309c5
origin_prefix=$(echo "$tiles" | grep -o 'http://[^/]*')/
thumbor_key=tilecache-thumbor-check
printf "SECURITY_KEY = '%s'\nALLOW_UNSAFE_URL = False\nSTORAGE = 'thumbor.storages.no_storage'\nRESULT_STORAGE = None\n" "$thumbor_key" > "$work/thumbor.conf"
thumbor_port=$("$venv/bin/python" -c "import socket; s = socket.socket(); s.bind(('127.0.0.1', 0)); print(s.getsockname()[1])")
"$venv/bin/thumbor" --ip 127.0.0.1 --port "$thumbor_port" --conf "$work/thumbor.conf" > "$work/thumbor.log" 2>&1 &
thumbor_pid=$!
# The test files of other projects (the GIF test suite, libavif's), served as they are, for scripts/formats_check.py.
files_port=$("$venv/bin/python" -c "import socket; s = socket.socket(); s.bind(('127.0.0.1', 0)); print(s.getsockname()[1])")
"$venv/bin/python" -m http.server "$files_port" --bind 127.0.0.1 --directory Tests/TestSupport > "$work/files.log" 2>&1 &
files_pid=$!
files=http://127.0.0.1:$files_port
IMGPROXY_KEY=$key IMGPROXY_SALT=$salt "$tilecache" serve --port 0 --tiles-base "$tiles" --images-base "$images" \
    --cache-dir "$work/cache" --db "$work/favorites.sqlite" --allowed-sources "$origin_prefix,$files/" --allow-private-sources \
    --thumbor-key "$thumbor_key" --auto-avif --auto-webp \
    > "$work/serve.out" 2> "$work/serve.err" &
serve_pid=$!
for _ in $(seq 200); do grep -q "serving on" "$work/serve.out" 2>/dev/null && break; sleep 0.1; done
url=$(grep -o "http://[^ ]*" "$work/serve.out" | head -1)
[ -n "$url" ] || { cat "$work/serve.err" >&2; echo "open-sources-check: serve did not start" >&2; exit 1; }
for _ in $(seq 300); do curl -s -o /dev/null "http://127.0.0.1:$thumbor_port/healthcheck" && break; sleep 0.1; done
curl -sf -o /dev/null "http://127.0.0.1:$thumbor_port/healthcheck" || { cat "$work/thumbor.log" >&2; echo "open-sources-check: thumbor did not start" >&2; exit 1; }
"$venv/bin/python" scripts/open_sources_check.py "$url" "$tiles" "$images" "$key" "$salt" "http://127.0.0.1:$thumbor_port" "$thumbor_key" \
    || { echo "open-sources-check: failed; the service's log:" >&2; tail -20 "$work/serve.err" >&2; exit 1; }
for _ in $(seq 100); do curl -sf -o /dev/null "$files/avif/README.md" && break; sleep 0.1; done
"$venv/bin/python" scripts/formats_check.py "$url" "$files" "$key" "$salt" \
    || { echo "open-sources-check: the formats check failed; the service's log:" >&2; tail -20 "$work/serve.err" >&2; exit 1; }
"$venv/bin/python" scripts/smartcrop_check.py "$url" "$files" "$key" "$salt" 2> "$work/smartcrop.err" \
    || { cat "$work/smartcrop.err" >&2; echo "open-sources-check: the smart crop check failed" >&2; exit 1; }
