#!/usr/bin/env bash
# Fuzzes ImageCore's inspector and decoders (JPEG, PNG, WebP, GIF and AVIF bytes) with libFuzzer under AddressSanitizer
# for a bounded time. Seeds: the built-in origin's images (every fault-matrix response included), PngSuite, the real
# photos, the GIF test suite and libavif's test files of the test fixtures. The corpus grows in Fuzz/.corpus across runs; a crash is saved under Fuzz/crashes/ and the script
# fails.
# A crash becomes a regression test: copy the file into Tests/ImageCoreTests/Fixtures/fuzz-regressions/.
# Usage: scripts/fuzz.sh [SECONDS] (default 60).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
root=$PWD
swift build --product tilecache >/dev/null
tilecache="$(swift build --show-bin-path)/tilecache"
work=$(mktemp -d /tmp/tilecache-fuzz.XXXXXX)
origin_pid=""
cleanup() { [ -n "$origin_pid" ] && kill "$origin_pid" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT

# Seeds: what the origin serves, including every fault-matrix body, fetched as sent (gzip stays compressed).
source scripts/origin.sh
start_origin "$tilecache" "$work" --faults matrix
mkdir -p "$work/seeds"
python3 - "$tiles" "$images" "$work/seeds" <<'PY'
import sys, urllib.request, urllib.error
tiles, images, out = sys.argv[1:4]
urls = [f"{tiles}/Tiles/{n:03d}/s7.JPG" for n in range(1, 32) if n not in (16, 17, 18, 19)]  # skip hang, drip, 21 MiB
urls += [f"{tiles}/Tiles/{n:03d}/s7.JPG" for n in (40, 79)] + [f"{images}/{name}.jpg" for name in ("gold", "neon")]
for index, url in enumerate(urls):
    try:
        body = urllib.request.urlopen(url, timeout=5).read()
    except urllib.error.HTTPError as error:
        body = error.read()
    except Exception:
        continue  # reset and cut-off bodies: nothing useful to keep
    if body:
        open(f"{out}/seed-{index:02d}", "wb").write(body)
PY
kill "$origin_pid" 2>/dev/null; origin_pid=""
cp Tests/TestSupport/pngsuite/*.png Tests/TestSupport/photos/*.jpg Tests/TestSupport/gifsuite/*.gif Tests/TestSupport/avif/*.avif \
    Tests/ImageCoreTests/Fixtures/webp/*.webp "$work/seeds/"
echo "fuzz: $(ls "$work/seeds" | wc -l) seeds"

cd Fuzz
if ! swift build -Xswiftc -sanitize=fuzzer,address --product ImageFuzzer > "$work/build.log" 2>&1; then
    grep -E "error" "$work/build.log" | head -20 >&2
    echo "fuzz FAILED: the fuzzer did not build (nothing was fuzzed)" >&2
    exit 1
fi
fuzzer="$(swift build -Xswiftc -sanitize=fuzzer,address --show-bin-path)/ImageFuzzer"
mkdir -p .corpus crashes
echo "fuzz: running $fuzzer for $seconds s"
if ! "$fuzzer" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=262144 -print_final_stats=1 \
        -artifact_prefix="$root/Fuzz/crashes/" .corpus "$work/seeds" 2> "$work/fuzz.log"; then
    tail -60 "$work/fuzz.log" >&2
    echo "fuzz FAILED: crash input saved in Fuzz/crashes/; copy it into Tests/ImageCoreTests/Fixtures/fuzz-regressions/" >&2
    exit 1
fi
grep -E "^#[0-9]+ *DONE|stat::number_of_executed_units|stat::average_exec_per_sec|stat::peak_rss_mb" "$work/fuzz.log" || tail -5 "$work/fuzz.log"
echo "fuzz: no crash in $seconds s; corpus $(ls .corpus | wc -l) inputs"
