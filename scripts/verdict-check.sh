#!/usr/bin/env bash
# Verdicts that depend only on the bytes, end to end, with the release binary's own code paths:
#  1. builds the verdict corpus (real photos, each with every JPEG quirk, PngSuite, the origin's forms) and runs
#     `tilecache inspect` on it ROUNDS times at -j 1 and at -j 16 in one process: the JSON must be identical
#     (the InspectDeterminismTests suite, keeping the corpus);
#  2. judges every file alone, one `tilecache inspect FILE` process each: each verdict must equal the file's entry
#     in the whole folder's report;
#  3. judges every file with Pillow, libvips, djpeg and Chromium (scripts/verdict_oracles.py) and checks the rules
#     listed there.
# Installs libvips-tools, libjpeg-turbo-progs and chromium (Debian) and Pillow (PyPI, into .build/verdict-venv) when
# missing. Usage: scripts/verdict-check.sh [ROUNDS] (default 3; `make verdicts` runs 20).
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-3}
scripts/apt-install.sh verdict-check libvips-tools libjpeg-turbo-progs chromium
venv=.build/verdict-venv
if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c "import PIL" 2>/dev/null; then
    python3 -m venv "$venv"
    "$venv/bin/pip" install -q pillow
fi
work=$(mktemp -d /tmp/tilecache-verdicts.XXXXXX)
trap 'rm -rf "$work"' EXIT

echo "verdict-check: inspect at -j 1 and -j 16, $rounds rounds"
if ! TILECACHE_VERDICT_CORPUS_DIR="$work/corpus" TILECACHE_VERDICT_ROUNDS="$rounds" \
        swift test --filter InspectDeterminismTests > "$work/test.log" 2>&1; then
    grep -E "✘|error" "$work/test.log" >&2 || tail -20 "$work/test.log" >&2
    echo "verdict-check FAILED: tilecache inspect gave different JSON at -j 1 and -j 16" >&2
    exit 1
fi
grep -E "^✔ Test \"the same JSON" "$work/test.log" || true

swift build --product tilecache > "$work/build.log" 2>&1 || { cat "$work/build.log" >&2; exit 1; }
tilecache="$(swift build --show-bin-path)/tilecache"
"$tilecache" inspect "$work/corpus" --format json > "$work/inspect.json" || [ $? -eq 2 ]

echo "verdict-check: each file alone, one process per file"
python3 - "$tilecache" "$work/corpus" "$work/inspect.json" <<'PY'
import json, os, subprocess, sys
binary, corpus, report = sys.argv[1:4]
together = {os.path.basename(r["path"]): r for r in json.load(open(report))}
differ = []
for name in sorted(os.listdir(corpus)):
    run = subprocess.run([binary, "inspect", os.path.join(corpus, name), "--format", "json"], capture_output=True, text=True)
    alone = json.loads(run.stdout)[0]
    if alone != together[name] or run.returncode != (0 if alone["valid"] else 2):
        differ.append(f"{name}: alone {alone}, in the folder {together[name]}")
if differ:
    sys.exit("verdict-check FAILED:\n" + "\n".join(differ))
print(f"verdict-check: {len(together)} files, each verdict alone equals its verdict in the folder")
PY

"$venv/bin/python" scripts/verdict_oracles.py "$work/corpus" "$work/inspect.json"
