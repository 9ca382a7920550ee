#!/usr/bin/env bash
# The extract check (part of `make test`): the image URLs `tilecache validate --extract --dump` finds in third-party
# documents (Tests/TestSupport/documents, with their sources and licences in its README.md) against an independent
# extraction by BeautifulSoup and markdown-it-py from PyPI (scripts/extract_check.py). Offline, a few seconds.
# Installs beautifulsoup4 and markdown-it-py into .build/extract-venv (scripts/check-envs.sh).
#   scripts/extract-check.sh [TILECACHE_BINARY]
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/check-envs.sh extract
venv=.build/extract-venv
tilecache=${1:-.build/debug/tilecache}
[ -x "$tilecache" ] || { echo "extract-check: no tilecache binary at $tilecache" >&2; exit 1; }
exec "$venv/bin/python" scripts/extract_check.py "$(realpath "$tilecache")"
