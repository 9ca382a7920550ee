#!/usr/bin/env bash
# The placeholder check (part of `make test`): TileCache's BlurHash and ThumbHash against the reference
# implementations from PyPI (blurhash 1.1.5, thumbhash-rs 0.1.0 with the reference's Rust encoder, and thumbhash 0.1.2)
# on other projects' test images: the same pixels give the same string, the reference decoders read every string and
# draw the image, and the LQIP is a small WebP (scripts/placeholder_check.py). Installs them into
# .build/placeholder-venv (scripts/check-envs.sh); the PyPI `thumbhash` apart (it has the same module name as thumbhash-rs).
set -euo pipefail
cd "$(dirname "$0")/.."
tilecache=${1:-.build/debug/tilecache}
[ -x "$tilecache" ] || { echo "placeholder-check: no tilecache binary at $tilecache" >&2; exit 1; }
scripts/check-envs.sh placeholder
venv=.build/placeholder-venv
PYPI_THUMBHASH_DIR="$venv/thumbhash-pypi" "$venv/bin/python" scripts/placeholder_check.py "$tilecache"
