#!/bin/bash
# Regenerates the measured part of docs/hit-rates.md: one table and one plot per trace (every policy), and the
# W-TinyLFU goal table (seeds 1-3). Usage: scripts/hit-rates.sh [TILECACHE_BINARY] > results.md
# Plots are written to docs/hit-rates-*.svg. Sizes are the built-in origin's images (an empty disk cache).
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-.build/release/tilecache}
empty=$(mktemp -d)
trap 'rm -rf "$empty"' EXIT
for spec in "detail:--pattern detail" "scroll:--pattern scroll" "zipf:--pattern zipf --exponent 1.0" \
            "zipf-0.8:--pattern zipf --exponent 0.8" "uniform:--pattern uniform"; do
    name=${spec%%:*}
    args=${spec#*:}
    heading=${args#--pattern }
    echo "### ${heading/ --exponent/}"
    echo
    echo "![hit rate by cache size, $name trace](hit-rates-$name.svg)"
    echo
    # shellcheck disable=SC2086
    "$bin" bench-cache $args --cache-dir "$empty" --plot "docs/hit-rates-$name.svg" --format markdown | sed -n '/^|/p'
    echo
done
echo "### W-TinyLFU against the goal"
echo
echo "| trace | entries | seed | LRU | W-TinyLFU | Belady | LRU-Belady gap closed |"
echo "|---|---:|---:|---:|---:|---:|---:|"
for args in "--pattern zipf --exponent 0.8" "--pattern zipf --exponent 1.0" "--pattern detail" "--pattern scroll"; do
    for seed in 1 2 3; do
        # shellcheck disable=SC2086
        "$bin" bench-cache $args --seed "$seed" --cache-dir "$empty" --counts 25,50,100 --bytes none --combined none \
            --policies lru,tinylfu,belady --format json | python3 -c '
import json, sys
report = json.load(sys.stdin)
rows = {}
trace = report["trace"]
for r in report["results"]:
    rows.setdefault(r["countLimit"], {})[r["policy"]] = r["hitRate"]
for count in sorted(rows):
    l, t, b = (rows[count][p] for p in ("lru", "tinylfu", "belady"))
    gap = "-" if b <= l else f"{100 * (t - l) / (b - l):.0f}%"
    print(f"| {trace} | {count} | {sys.argv[1]} | {100 * l:.1f}% | {100 * t:.1f}% | {100 * b:.1f}% | {gap} |")
' "$seed"
    done
done
