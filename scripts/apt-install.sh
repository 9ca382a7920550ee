#!/usr/bin/env bash
# Installs the Debian packages named on the command line that are missing: as root, or through passwordless sudo;
# otherwise says what to install and fails. Used by install-deps.sh, install-fleet-deps.sh and check-envs.sh.
# Usage: scripts/apt-install.sh WHO PACKAGE... (WHO prefixes the messages, e.g. install-deps)
set -euo pipefail
who=$1
shift
missing=()
for package in "$@"; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
[ ${#missing[@]} -eq 0 ] && exit 0
echo "$who: installing missing Debian packages: ${missing[*]}" >&2
if [ "$(id -u)" -eq 0 ]; then
    apt_get=(apt-get)
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    apt_get=(sudo apt-get)
else
    echo "$who: need root or passwordless sudo to install: ${missing[*]}" >&2
    echo "$who: run as root: apt-get install -y ${missing[*]}" >&2
    exit 1
fi
export DEBIAN_FRONTEND=noninteractive
"${apt_get[@]}" update -qq
"${apt_get[@]}" install -y -qq "${missing[@]}" >/dev/null
echo "$who: done" >&2
