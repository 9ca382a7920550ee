#!/usr/bin/env bash
# Runs scripts/browser_check.py: the web front end in a real headless Chromium. Installs Chromium (Debian) and
# websocket-client (PyPI, into .build/browser-venv) when missing (scripts/check-envs.sh). Screenshots go to .build/screenshots/.
#   scripts/browser-check.sh TILECACHE_BINARY
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/check-envs.sh browser
.build/browser-venv/bin/python scripts/browser_check.py "${1:?usage: scripts/browser-check.sh TILECACHE_BINARY}" .build/screenshots
