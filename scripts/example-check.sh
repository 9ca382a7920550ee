#!/usr/bin/env bash
# TileCache as a library another package depends on (part of `make test`): builds Examples/PrefetchURLs, a package
# that depends on the ImageCore product by path, in the same build folder as TileCache (so only the example's own
# file compiles), and runs it against the built-in origin: three thumbnails and one missing image, prefetched twice.
# SwiftPM allows `unsafeFlags` in a package depended on by path but refuses them in one depended on by version, so
# Package.swift is checked for them too.
#   scripts/example-check.sh TILECACHE_BINARY
set -euo pipefail
cd "$(dirname "$0")/.."
tilecache=${1:?usage: scripts/example-check.sh TILECACHE_BINARY}
if grep -n "\.unsafeFlags(" Package.swift; then
    echo "example-check FAILED: Package.swift uses unsafeFlags (above): a package that depends on TileCache by version cannot build it" >&2
    exit 1
fi
work=$(mktemp -d /tmp/tilecache-example.XXXXXX)
trap 'kill "${origin_pid:-}" 2>/dev/null || true; rm -rf "$work"' EXIT
# The flags of the build that made the binary (`make test` exports them), so that nothing already built is built again.
read -r -a flags <<< "${TILECACHE_DEBUG_FLAGS:-}"
swift build --package-path Examples/PrefetchURLs --scratch-path .build "${flags[@]}" > "$work/build.log" 2>&1 \
    || { cat "$work/build.log" >&2; echo "example-check FAILED: Examples/PrefetchURLs does not build" >&2; exit 1; }
example="$(swift build --package-path Examples/PrefetchURLs --scratch-path .build "${flags[@]}" --show-bin-path)/PrefetchURLs"
. scripts/origin.sh
start_origin "$tilecache" "$work"
printf '%s\n' "# three tiles and a photo the host does not have" "$tiles/Tiles/001/s7.JPG" "$tiles/Tiles/026/s7.JPG" \
    "$tiles/Tiles/079/s7.JPG" "$images/nosuchelement.jpg" > "$work/urls.txt"
status=0
"$example" "$work/urls.txt" "$work/cache" > "$work/out.txt" || status=$?
cat "$work/out.txt"
expect() { grep -qF -- "$1" "$work/out.txt" || { echo "example-check FAILED: the output lacks '$1'" >&2; exit 1; }; }
expect "first pass: 4 images, 0 from memory, 0 from disk, 3 downloaded, 1 failed"
expect "second pass: 4 images, 3 from memory, 0 from disk, 0 downloaded, 1 failed"
expect "broken: $images/nosuchelement.jpg: http-status"
[ "$status" = 2 ] || { echo "example-check FAILED: exit code $status, expected 2 (a broken image)" >&2; exit 1; }
echo "example-check: passed (Examples/PrefetchURLs built against the library and run on the origin)"
