#!/usr/bin/env bash
# TileCache side by side with its peers (issue 5): installs them, builds release binaries, runs compare.py.
# Usage: make bench-compare   (ROUNDS=5 WRK_SECONDS=6 SOAK_SECONDS=600 by default). Writes docs/benchmarks.md,
# docs/benchmarks-thumbnails.md (with the side-by-side images in docs/images/thumbnails) and docs/benchmarks-encoders.md.
set -euo pipefail
cd "$(dirname "$0")/../.."
ROUNDS=${ROUNDS:-5}
packages=(curl aria2 nginx-light wrk libjpeg-turbo-progs netpbm imagemagick time libvips-tools nghttp2-client openssl)
missing=()
for package in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
if [ ${#missing[@]} -gt 0 ]; then
    echo "bench-compare: installing ${missing[*]}" >&2
    if [ "$(id -u)" -eq 0 ]; then apt_get=(apt-get); else apt_get=(sudo apt-get); fi
    DEBIAN_FRONTEND=noninteractive "${apt_get[@]}" update -qq
    DEBIAN_FRONTEND=noninteractive "${apt_get[@]}" install -y -qq "${missing[@]}" >/dev/null
fi
venv=.build/compare-venv
if [ ! -x "$venv/bin/thumbor" ] || ! "$venv/bin/python" -c "import numpy, blurhash, thumbhash" 2>/dev/null; then
    python3 -m venv "$venv"
    "$venv/bin/pip" install -q Pillow aiohttp thumbor numpy "blurhash==1.1.5" "thumbhash-rs==0.1.0"
fi
# Open sources: the URL builders and thumbor as the open-sources check has them.
scripts/check-envs.sh sources
sources_venv=.build/sources-venv
make --no-print-directory release  # the release build as users get it (Makefile, RELEASE_BUILD)
(cd Benchmarks && swift build -c release --product CacheComparison && swift build -c release --product DecodeThroughput \
    && swift build -c release --product ServeFloor)
work=$(mktemp -d /tmp/tilecache-compare.XXXXXX)
chmod 755 "$work"  # nginx workers run as www-data and must read the static files
trap 'rm -rf "$work"' EXIT
bin="$(swift build -c release --show-bin-path)/tilecache"
# The comparisons with reports of their own run first and leave their summary rows in $work for compare.py.
export BENCH_SUMMARY_DIR="$work"
# The disk cache at 1,000, 10,000 and 100,000 entries (docs/benchmarks-disk-scale.md, embedded by compare.py).
python3 Benchmarks/compare/disk_scale.py "$bin" "$work/disk-scale"
# Thumbnails: quality (PSNR/SSIM against Pillow's LANCZOS), speed and size beside vipsthumbnail and Pillow.
"$venv/bin/python" Benchmarks/compare/thumbnails.py "$bin" Tests/TestSupport/photos docs/benchmarks-thumbnails.md docs/images/thumbnails "$ROUNDS"
# AVIF and WebP beside JPEG: bytes, quality and time against libvips and Pillow (docs/benchmarks-encoders.md).
"$venv/bin/python" Benchmarks/compare/encoders.py "$bin" Tests/TestSupport/photos docs/benchmarks-encoders.md "$ROUNDS"
# Placeholders per second against the reference BlurHash and ThumbHash encoders (PyPI).
"$venv/bin/python" Benchmarks/compare/placeholders.py "$bin" Tests/TestSupport/photos "$work/placeholders.json" "$ROUNDS"
# Open sources: imgproxy URLs against thumbor, cold and warm, and the resize against vipsthumbnail.
mkdir -p "$work/open-sources"
"$sources_venv/bin/python" Benchmarks/compare/open_sources.py "$bin" "$sources_venv/bin/thumbor" "$work/open-sources" "$ROUNDS" \
    docs/benchmarks-open-sources.md
# Everything else, and docs/benchmarks.md with every row.
"$venv/bin/python" Benchmarks/compare/compare.py "$bin" "$(cd Benchmarks && swift build -c release --show-bin-path)/CacheComparison" "$work" "$ROUNDS"
