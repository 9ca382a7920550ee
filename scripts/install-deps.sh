#!/usr/bin/env bash
# Installs the Debian packages TileCache builds against, if any is missing.
set -euo pipefail
exec "$(dirname "$0")/apt-install.sh" install-deps libcurl4-openssl-dev libturbojpeg0-dev libjpeg62-turbo-dev libpng-dev libwebp-dev libgif-dev libavif-dev liblcms2-dev libbrotli-dev zlib1g-dev libexpat1-dev libxml2-dev libcmark-dev libssl-dev libpq-dev pkg-config
