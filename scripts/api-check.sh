#!/usr/bin/env bash
# The API check (part of `make test`): schemathesis, a property-based API tester from PyPI, runs every operation of
# docs/openapi.yaml against a real `tilecache serve` (the binary given as the argument, by default the debug build)
# over the built-in origin, with generated valid and invalid inputs, and fails on any server error or any answer the
# document does not describe (status, content type, schema). Then real clients check the content codings: curl
# --compressed and Python's gzip and brotli decode the catalogue to the same JSON, and the served /openapi.yaml is the
# document. Installs schemathesis into .build/api-venv (scripts/check-envs.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/origin.sh
scripts/check-envs.sh api
venv=.build/api-venv
tilecache=${1:-.build/debug/tilecache}
[ -x "$tilecache" ] || { echo "api-check: no tilecache binary at $tilecache (build it first: swift build --product tilecache)" >&2; exit 1; }
work=$(mktemp -d /tmp/tilecache-api.XXXXXX)
cleanup() { kill "${serve_pid:-}" "${origin_pid:-}" 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT
start_origin "$tilecache" "$work"
"$tilecache" serve --port 0 --tiles-base "$tiles" --images-base "$images" --cache-dir "$work/cache" --db "$work/favorites.sqlite" \
    > "$work/serve.out" 2> "$work/serve.err" &
serve_pid=$!
for _ in $(seq 200); do grep -q "serving on" "$work/serve.out" 2>/dev/null && break; sleep 0.1; done
url=$(grep -o "http://[^ ]*" "$work/serve.out" | head -1)
[ -n "$url" ] || { cat "$work/serve.err" >&2; echo "api-check: serve did not start" >&2; exit 1; }

"$venv/bin/schemathesis" run docs/openapi.yaml --url "$url" --mode all --seed 1 --max-examples "${API_EXAMPLES:-60}" \
    --checks not_a_server_error,status_code_conformance,content_type_conformance,response_schema_conformance \
    --suppress-health-check all --no-color 2>&1 | tee "$work/schemathesis.out" | tail -40
status=${PIPESTATUS[0]}
[ "$status" = 0 ] || { echo "api-check: schemathesis found problems (above); the service's log:" >&2; tail -20 "$work/serve.err" >&2; exit 1; }

"$venv/bin/python" - "$url" <<'PY'
import brotli, gzip, json, subprocess, sys, urllib.request
base = sys.argv[1]
def fetch(path, encoding=None):
    request = urllib.request.Request(base + path, headers={"Accept-Encoding": encoding} if encoding else {})
    with urllib.request.urlopen(request) as response:
        return response.headers, response.read()
_, plain = fetch("/api/v1/elements")
headers, body = fetch("/api/v1/elements", "gzip")
assert headers["Content-Encoding"] == "gzip" and gzip.decompress(body) == plain, "gzip"
headers, body = fetch("/api/v1/elements", "br")
assert headers["Content-Encoding"] == "br" and brotli.decompress(body) == plain, "br"
curl = subprocess.run(["curl", "-sS", "--compressed", base + "/api/v1/elements"], capture_output=True, check=True).stdout
assert json.loads(curl) == json.loads(plain) and len(json.loads(plain)) == 100, "curl --compressed"
_, served = fetch("/openapi.yaml")
assert served == open("docs/openapi.yaml", "rb").read(), "/openapi.yaml is not docs/openapi.yaml"
print("api-check: gzip (Python), br (Python brotli) and curl --compressed decode the catalogue; /openapi.yaml is the document")
PY
echo "api-check: passed: $(grep -Eo '[0-9]+ (generated|cases|test cases)[^,]*' "$work/schemathesis.out" | head -1)"
