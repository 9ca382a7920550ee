#!/usr/bin/env bash
# Installs the Debian packages TileCache builds against, if any is missing.
# Runs apt-get as root, or through sudo; otherwise says what to install and fails.
set -euo pipefail
packages=(libcurl4-openssl-dev libturbojpeg0-dev libpng-dev pkg-config)
missing=()
for package in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
[ ${#missing[@]} -eq 0 ] && exit 0
echo "install-deps: installing missing Debian packages: ${missing[*]}" >&2
if [ "$(id -u)" -eq 0 ]; then
    apt_get=(apt-get)
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    apt_get=(sudo apt-get)
else
    echo "install-deps: need root or passwordless sudo to install: ${missing[*]}" >&2
    echo "install-deps: run as root: apt-get install -y ${missing[*]}" >&2
    exit 1
fi
export DEBIAN_FRONTEND=noninteractive
"${apt_get[@]}" update -qq
"${apt_get[@]}" install -y -qq "${missing[@]}" >/dev/null
echo "install-deps: done" >&2
