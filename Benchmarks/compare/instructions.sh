#!/usr/bin/env bash
# Instructions per operation of `CacheComparison OPERATION` (get-ours, get-tinylfu, set-ours, set-tinylfu, ...), counted
# by valgrind's callgrind, which repeats to the instruction where timings on a shared machine do not: the count at
# 400,000 operations minus the count at 200,000, over 200,000 (what start-up and filling the cache cost cancels out),
# with the standard library's hashing seeded the same in every run (SWIFT_DETERMINISTIC_HASHING).
#   Benchmarks/compare/instructions.sh Benchmarks/.build/release/CacheComparison get-ours get-tinylfu
# Needs valgrind and objcopy (Debian: apt-get install valgrind binutils).
set -euo pipefail
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# Debian 12's valgrind (3.19) cannot read Swift 6's DWARF 5: it counts a copy without debug information.
binary="$work/$(basename "$1")"
objcopy --strip-debug "$1" "$binary"
shift
count() {  # OPERATION OPERATIONS: instructions of one round
    SWIFT_DETERMINISTIC_HASHING=1 OPERATIONS=$2 ROUNDS=1 valgrind --tool=callgrind --callgrind-out-file="$work/out" "$binary" "$1" > /dev/null 2> "$work/err" \
        || { cat "$work/err" >&2; exit 1; }
    sed -n 's/^summary: //p' "$work/out"
}
for operation in "$@"; do
    small=$(count "$operation" 200000)
    large=$(count "$operation" 400000)
    echo "$operation: $(( (large - small) / 200000 )) instructions per operation"
done
