#!/usr/bin/env bash
# Runs scripts/browser_check.py: the web front end in a real headless Chromium. Installs Chromium (Debian) and
# websocket-client (PyPI, into .build/browser-venv) when missing. Screenshots go to .build/screenshots/.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v chromium >/dev/null 2>&1 || scripts/apt-install.sh browser-check chromium
venv=.build/browser-venv
if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c "import websocket" 2>/dev/null; then
    python3 -m venv "$venv"
    "$venv/bin/pip" install -q websocket-client
fi
swift build --product tilecache
"$venv/bin/python" scripts/browser_check.py "$(swift build --show-bin-path)/tilecache" .build/screenshots
