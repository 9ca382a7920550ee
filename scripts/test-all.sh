#!/usr/bin/env bash
# What `make test` runs once its build is done, in two lanes: the checks one after another in the background, and in
# front the Swift Testing suite (with scripts/with-test-servers.sh) and then the verdict check, which reads the corpus
# the suite leaves, and then whichever checks the other lane has not started yet (each check is claimed by one lane;
# the longest go first). Most checks keep one core busy and the suite about one and a half, so on a 2-core machine the
# lanes take about the sum of their CPU time over two. The suite's binary is run directly, not by `swift test`, which
# would hold the build folder's lock for the whole run while a check (example-check) builds in it.
# Each check's output goes to .build/checks/NAME.log; a line says when it passed, and a failed check's whole log is
# printed once both lanes are done. Exits 1 if anything failed, naming each failure.
#   scripts/test-all.sh TILECACHE_BINARY      (the debug build: the test bundle beside it is the suite)
set -uo pipefail
cd "$(dirname "$0")/.."
tilecache=${1:?usage: scripts/test-all.sh TILECACHE_BINARY}
suite="$(dirname "$tilecache")/TileCachePackageTests.xctest"
for binary in "$tilecache" "$suite"; do
    [ -x "$binary" ] || { echo "test-all: no $binary (build first: swift build --build-tests)" >&2; exit 1; }
done

# Each check with the arguments after the binary (the Makefile's comment on `test` says what each does), the longest
# first.
checks=(
    "scripts/api-check.sh"
    "scripts/open-sources-check.sh"
    "scripts/crash-test.sh 3"
    "scripts/browser-check.sh"
    "scripts/example-check.sh"
    "scripts/placeholder-check.sh"
    "scripts/extract-check.sh"
    "Examples/Rover/rover.sh"
    "scripts/ssrf-check.sh"
)
logs=.build/checks
rm -rf "$logs" && mkdir -p "$logs" && : > "$logs/failed"

# Runs every check no lane has claimed yet (mkdir claims: it fails if the folder is there), appending the names of
# those that fail to $logs/failed.
run_checks() {
    local entry script arguments name start
    for entry in "${checks[@]}"; do
        read -r script arguments <<< "$entry"
        name=$(basename "$script" .sh)
        mkdir "$logs/$name.claimed" 2> /dev/null || continue
        start=$SECONDS
        # shellcheck disable=SC2086  # arguments are words
        if "$script" "$tilecache" $arguments > "$logs/$name.log" 2>&1; then
            echo "test-all: $name passed ($((SECONDS - start)) s)"
        else
            echo "test-all: $name FAILED ($((SECONDS - start)) s; its output is printed at the end)"
            echo "$name" >> "$logs/failed"
        fi
    done
}

start=$SECONDS
run_checks &
checks_pid=$!
trap 'kill "$checks_pid" 2>/dev/null' INT TERM

rm -rf .build/verdict-corpus
failures=()
TILECACHE_VERDICT_CORPUS_DIR=$PWD/.build/verdict-corpus scripts/with-test-servers.sh "$suite" --testing-library swift-testing \
    || failures+=("the test suite")
if [ ${#failures[@]} -eq 0 ]; then
    scripts/verdict-check.sh "$tilecache" 3 .build/verdict-corpus || failures+=("verdict-check")
else
    echo "test-all: verdict-check not run (it reads the corpus the suite writes)"
fi
run_checks
echo "test-all: the suite's lane done after $((SECONDS - start)) s"
wait "$checks_pid"
echo "test-all: the checks' lane done after $((SECONDS - start)) s"
while read -r name; do
    [ -n "$name" ] || continue
    echo "==== $name FAILED; its output ($logs/$name.log):"
    cat "$logs/$name.log"
    failures+=("$name")
done < "$logs/failed"
if [ ${#failures[@]} -gt 0 ]; then
    printf 'test-all: FAILED: %s\n' "${failures[@]}" >&2
    exit 1
fi
echo "test-all: the suite, the verdict check and ${#checks[@]} checks passed ($((SECONDS - start)) s)"
