#!/usr/bin/env bash
# The Debian packages and Python environments (.build/NAME-venv, from PyPI, pinned) that the checks of `make test`
# use, in one place. Each check runs `scripts/check-envs.sh NAME` first, which installs only what is missing (a few
# hundred milliseconds when everything is there); `make test` runs it with no NAME, every environment, beside the
# build, so that on a fresh machine the downloads and installs (about two minutes) overlap the compiling.
#   scripts/check-envs.sh [api|browser|extract|h2|placeholder|sources|verdict]...
set -euo pipefail
cd "$(dirname "$0")/.."

# .build/NAME-venv, made and filled when the Python statement CHECK fails in it.
#   venv NAME CHECK PIP_ARGUMENTS...
venv() {
    local dir=.build/$1-venv check=$2
    shift 2
    "$dir/bin/python" -c "$check" 2> /dev/null && return 0
    python3 -m venv "$dir"
    "$dir/bin/pip" install -q "$@" || { echo "check-envs: pip could not install $* into $dir" >&2; return 1; }
    "$dir/bin/python" -c "$check" || { echo "check-envs: $dir still fails '$check' after the install" >&2; return 1; }
}

# One environment by the name of its check.
setup() {
    case $1 in
        # schemathesis, and brotli to decode the service's br answers.
        api) venv api "import schemathesis, brotli" "schemathesis==4.32.5" "brotli==1.1.0" ;;
        # Chromium driven over the DevTools protocol.
        browser)
            command -v chromium > /dev/null 2>&1 || scripts/apt-install.sh check-envs chromium
            venv browser "import websocket" websocket-client ;;
        extract) venv extract "import bs4, markdown_it" "beautifulsoup4==4.15.0" "markdown-it-py==4.3.0" ;;
        # hyper-h2, the HTTP/2 client of HTTPConventionsTests' HTTPS test (Tests/Clients/h2_client.py).
        h2) venv h2 "import h2" "h2==4.4.1" "hpack==4.2.0" "hyperframe==6.1.0" ;;
        # The reference placeholder encoders; the PyPI `thumbhash` apart (its module name is thumbhash-rs' too).
        placeholder)
            venv placeholder "import blurhash, thumbhash, PIL" "blurhash==1.1.5" "thumbhash-rs==0.1.0" "Pillow==12.0.0"
            [ -d .build/placeholder-venv/thumbhash-pypi/thumbhash ] \
                || .build/placeholder-venv/bin/pip install -q --no-deps --target .build/placeholder-venv/thumbhash-pypi "thumbhash==0.1.2" ;;
        # Two imgproxy URL builders, libthumbor and thumbor itself; `vips smartcrop`, the smart crop's reference.
        sources)
            scripts/apt-install.sh check-envs libvips-tools
            venv sources "import imgproxy, pyimgproxy, libthumbor, thumbor, PIL" \
                "imgproxy==1.0.0" "pyimgproxy==0.4" "libthumbor==2.0.2" "thumbor==7.8.0" ;;
        # The verdict oracles: Pillow at the version scripts/verdict-oracles.json was recorded with, libvips, djpeg and
        # Chromium.
        verdict)
            scripts/apt-install.sh check-envs libvips-tools libjpeg-turbo-progs chromium
            venv verdict "import PIL; assert PIL.__version__ == '13.0.0'" "pillow==13.0.0" ;;
        *) echo "check-envs: no environment named '$1' (api, browser, extract, h2, placeholder, sources, verdict)" >&2; return 2 ;;
    esac
}

[ $# -gt 0 ] || set -- api browser extract h2 placeholder sources verdict
for name in "$@"; do
    start=$SECONDS
    setup "$name"
    [ $# -eq 1 ] || echo "check-envs: $name ready ($((SECONDS - start)) s)"
done
