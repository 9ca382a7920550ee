#!/usr/bin/env bash
# Runs scripts/browser_check.py: the web front end in a real headless Chromium. Installs Chromium (Debian) and
# websocket-client (PyPI, into .build/browser-venv) when missing. Screenshots go to .build/screenshots/.
#   scripts/browser-check.sh TILECACHE_BINARY
set -euo pipefail
cd "$(dirname "$0")/.."
command -v chromium >/dev/null 2>&1 || scripts/apt-install.sh browser-check chromium
venv=.build/browser-venv
if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c "import websocket" 2>/dev/null; then
    python3 -m venv "$venv"
    "$venv/bin/pip" install -q websocket-client
fi
"$venv/bin/python" scripts/browser_check.py "${1:?usage: scripts/browser-check.sh TILECACHE_BINARY}" .build/screenshots
