#!/usr/bin/env bash
# The placeholder check (part of `make test`): TileCache's BlurHash and ThumbHash against the reference
# implementations from PyPI (blurhash 1.1.5, thumbhash-rs 0.1.0 with the reference's Rust encoder, and thumbhash 0.1.2)
# on other projects' test images: the same pixels give the same string, the reference decoders read every string and
# draw the image, and the LQIP is a small WebP (scripts/placeholder_check.py). Installs them into
# .build/placeholder-venv; the PyPI `thumbhash` apart (it has the same module name as thumbhash-rs).
set -euo pipefail
cd "$(dirname "$0")/.."
tilecache=${1:-.build/debug/tilecache}
[ -x "$tilecache" ] || { echo "placeholder-check: no tilecache binary at $tilecache" >&2; exit 1; }
venv=.build/placeholder-venv
if ! "$venv/bin/python" -c "import blurhash, thumbhash, PIL" 2>/dev/null || [ ! -d "$venv/thumbhash-pypi/thumbhash" ]; then
    python3 -m venv "$venv"
    "$venv/bin/pip" install -q "blurhash==1.1.5" "thumbhash-rs==0.1.0" "Pillow==12.0.0"
    "$venv/bin/pip" install -q --no-deps --target "$venv/thumbhash-pypi" "thumbhash==0.1.2"
fi
PYPI_THUMBHASH_DIR="$venv/thumbhash-pypi" "$venv/bin/python" scripts/placeholder_check.py "$tilecache"
