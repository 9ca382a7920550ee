#!/usr/bin/env bash
# Runs scripts/browser_check.py: the web front end in a real headless Chromium. Installs Chromium (Debian) and
# websocket-client (PyPI, into .build/browser-venv) when missing. Screenshots go to .build/screenshots/.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v chromium >/dev/null 2>&1; then
    echo "browser-check: installing chromium" >&2
    if [ "$(id -u)" -eq 0 ]; then apt_get=(apt-get); elif sudo -n true 2>/dev/null; then apt_get=(sudo apt-get); else
        echo "browser-check: chromium is missing and cannot be installed without root: apt-get install chromium" >&2; exit 1; fi
    DEBIAN_FRONTEND=noninteractive "${apt_get[@]}" update -qq
    DEBIAN_FRONTEND=noninteractive "${apt_get[@]}" install -y -qq chromium >/dev/null
fi
venv=.build/browser-venv
if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c "import websocket" 2>/dev/null; then
    python3 -m venv "$venv"
    "$venv/bin/pip" install -q websocket-client
fi
swift build --product tilecache
"$venv/bin/python" scripts/browser_check.py "$(swift build --show-bin-path)/tilecache" .build/screenshots
