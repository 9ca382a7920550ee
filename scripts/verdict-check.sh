#!/usr/bin/env bash
# Verdicts that depend only on the bytes, end to end:
#  1. the verdict corpus (real photos, each with every JPEG quirk, PngSuite, the origin's forms) judged by `tilecache
#     inspect` ROUNDS times at -j 1 and at -j 16 in one process must give identical JSON (the InspectDeterminismTests
#     suite, which keeps the corpus in CORPUS_DIR). `make test` runs that suite with the rest and passes its corpus
#     here; without CORPUS_DIR this script runs the suite itself;
#  2. every file judged alone, one `tilecache inspect FILE` process each, must get its verdict in the whole folder's
#     report;
#  3. Pillow, libvips, djpeg and Chromium judge every file (scripts/verdict_oracles.py; their verdicts are recorded
#     in scripts/verdict-oracles.json by file digest and tool version) and the rules listed there must hold.
# Installs libvips-tools, libjpeg-turbo-progs and chromium (Debian) and Pillow (PyPI, into .build/verdict-venv) when
# missing (scripts/check-envs.sh).
#   scripts/verdict-check.sh TILECACHE_BINARY [ROUNDS [CORPUS_DIR]]     (`make verdicts`: 20 rounds, oracles re-recorded)
set -euo pipefail
cd "$(dirname "$0")/.."
tilecache=${1:?usage: scripts/verdict-check.sh TILECACHE_BINARY [ROUNDS [CORPUS_DIR]]}
rounds=${2:-3}
corpus=${3:-}
scripts/check-envs.sh verdict
venv=.build/verdict-venv
work=$(mktemp -d /tmp/tilecache-verdicts.XXXXXX)
trap 'rm -rf "$work"' EXIT

if [ -z "$corpus" ]; then
    corpus="$work/corpus"
    echo "verdict-check: inspect at -j 1 and -j 16, $rounds rounds"
    if ! TILECACHE_VERDICT_CORPUS_DIR="$corpus" TILECACHE_VERDICT_ROUNDS="$rounds" \
            swift test ${TILECACHE_DEBUG_FLAGS:-} --filter InspectDeterminismTests > "$work/test.log" 2>&1; then
        grep -E "✘|error" "$work/test.log" >&2 || tail -20 "$work/test.log" >&2
        echo "verdict-check FAILED: tilecache inspect gave different JSON at -j 1 and -j 16" >&2
        exit 1
    fi
    grep -E "^✔ Test \"the same JSON" "$work/test.log" || true
fi
[ -n "$(ls -A "$corpus" 2>/dev/null)" ] || { echo "verdict-check FAILED: no corpus in $corpus" >&2; exit 1; }
"$tilecache" inspect "$corpus" --format json > "$work/inspect.json" || [ $? -eq 2 ]

echo "verdict-check: each file alone, one process per file"
python3 - "$tilecache" "$corpus" "$work/inspect.json" <<'PY'
import concurrent.futures, json, os, subprocess, sys
binary, corpus, report = sys.argv[1:4]
together = {os.path.basename(r["path"]): r for r in json.load(open(report))}
def alone(name):
    run = subprocess.run([binary, "inspect", os.path.join(corpus, name), "--format", "json"], capture_output=True, text=True)
    verdict = json.loads(run.stdout)[0]
    if verdict != together[name] or run.returncode != (0 if verdict["valid"] else 2):
        return f"{name}: alone {verdict}, in the folder {together[name]}"
    return None
with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
    differ = [line for line in pool.map(alone, sorted(os.listdir(corpus))) if line]
if differ:
    sys.exit("verdict-check FAILED:\n" + "\n".join(differ))
print(f"verdict-check: {len(together)} files, each verdict alone equals its verdict in the folder")
PY

"$venv/bin/python" scripts/verdict_oracles.py "$corpus" "$work/inspect.json" ${VERDICT_ORACLES_RECORD:+--record}
