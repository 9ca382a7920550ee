#!/usr/bin/env bash
# A Mars-rover-style app's photos as thumbnails (docs/sources.md, "A rover-style example"): an API answers a JSON list
# of photo URLs (`photos[].img_src`, the NASA Mars Rover Photos API's shape); a release is warmed with every photo at
# the sizes the app shows; the app asks TileCache for each as a signed imgproxy URL. Offline, the photos are the
# built-in origin's, and the JSON is written here in the API's shape.
#   Examples/Rover/rover.sh [TILECACHE_BINARY]
set -euo pipefail
cd "$(dirname "$0")/../.."
tilecache=$(realpath "${1:-.build/debug/tilecache}")
. scripts/origin.sh
work=$(mktemp -d /tmp/tilecache-rover.XXXXXX)
cleanup() { kill "${serve_pid:-}" "${origin_pid:-}" 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT
start_origin "$tilecache" "$work"

# 1. The API's answer: {"photos": [{"id", "sol", "camera": {"name"}, "img_src", "earth_date"}, ...]}.
python3 - "$images" > "$work/photos.json" <<'PY'
import json, sys
names = ["hydrogen", "carbon", "iron", "copper", "silver", "gold", "mercury", "lead", "nickel", "neon", "argon", "xenon"]
print(json.dumps({"photos": [{"id": 102693 + i, "sol": 1000, "camera": {"name": "FHAZ"}, "img_src": f"{sys.argv[1]}/{name}.jpg",
                              "earth_date": "2015-05-30"} for i, name in enumerate(names)]}, indent=1))
PY

# 2. Warm a release: every photo the API's answer names (`--extract` reads the JSON, `--json-path` picks the photos'
#    URLs), and its 128 and 256 wide thumbnails (JPEG and WebP), into the disk cache.
"$tilecache" prefetch --extract "$work/photos.json" --json-path 'photos[].img_src' --sizes 128,256 --cache-dir "$work/cache" \
    --format json > "$work/prefetch.json" \
    || { cat "$work/prefetch.json" >&2; echo "rover: the warm-up failed" >&2; exit 1; }
python3 -c "
import json, sys
report = json.load(open(sys.argv[1]))
assert report['succeeded'] == 12 and report['variants']['made'] == 48, report
print(f\"rover: warmed {report['succeeded']} photos and {report['variants']['made']} thumbnails\")" "$work/prefetch.json"

# 3. Serve them: open sources limited to the photo host, signed URLs.
key=$(openssl rand -hex 32) salt=$(openssl rand -hex 32)
origin_prefix=$(echo "$images" | grep -o 'http://[^/]*')/
IMGPROXY_KEY=$key IMGPROXY_SALT=$salt "$tilecache" serve --port 0 --cache-dir "$work/cache" --db "$work/favorites.sqlite" \
    --allowed-sources "$origin_prefix" --allow-private-sources > "$work/serve.out" 2> "$work/serve.err" &
serve_pid=$!
for _ in $(seq 200); do grep -q "serving on" "$work/serve.out" 2>/dev/null && break; sleep 0.1; done
url=$(grep -o "http://[^ ]*" "$work/serve.out" | head -1)
[ -n "$url" ] || { cat "$work/serve.err" >&2; exit 1; }

# 4. The app: for each photo of the JSON, a signed imgproxy URL of its 128-wide thumbnail, as a front end builds it.
python3 - "$url" "$key" "$salt" "$work/photos.json" <<'PY'
import base64, hashlib, hmac, json, sys, urllib.request
service, key, salt, photos = sys.argv[1], bytes.fromhex(sys.argv[2]), bytes.fromhex(sys.argv[3]), json.load(open(sys.argv[4]))["photos"]
sources = []
for photo in photos:
    path = "/rs:fit:128:0/" + base64.urlsafe_b64encode(photo["img_src"].encode()).rstrip(b"=").decode()
    signature = base64.urlsafe_b64encode(hmac.new(key, salt + path.encode(), hashlib.sha256).digest()).rstrip(b"=").decode()
    with urllib.request.urlopen(service + "/" + signature + path) as response:
        body = response.read()
        sources.append(response.headers["X-TileCache-Source"])
        assert response.status == 200 and response.headers["Content-Type"] == "image/jpeg" and body[:2] == b"\xff\xd8", photo
print(f"rover: served {len(sources)} thumbnails, from {', '.join(sorted(set(sources)))} (warmed: none fetched upstream)")
assert set(sources) <= {"diskHit", "memory"}, sources
PY
