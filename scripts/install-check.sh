#!/usr/bin/env bash
# The install test (part of `make release-check`): `make install` into a temporary DESTDIR, then, in a private mount namespace
# where the build folder and the Swift toolchain are hidden under empty tmpfs mounts and PATH holds only the installed
# bin and /usr/bin:/bin, runs `tilecache --help`, `prefetch` against the installed binary's own origin, and `serve`
# (the page, the JSON API and an image), and checks the man pages and shell completions landed where Debian looks.
# Needs root for the mount namespace (CI runs as root); without it, it says so and runs with PATH stripped only.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)
root=$(mktemp -d /tmp/tilecache-install.XXXXXX)
trap 'rm -rf "$root"' EXIT
prefix=/usr/local
# After `make release-check`'s own release build (INSTALL_CHECK_PREBUILT=1), `make install` does not run it again.
make --no-print-directory install DESTDIR="$root" PREFIX="$prefix" ${INSTALL_CHECK_PREBUILT:+RELEASE_BUILD=true} > "$root.log" 2>&1 || { cat "$root.log"; rm -f "$root.log"; exit 1; }
rm -f "$root.log"
bin="$root$prefix/bin/tilecache"

fail() { echo "install-check: $*" >&2; exit 1; }
[ -x "$bin" ] || fail "no executable at $bin"
for page in tilecache.1 tilecache-serve.1 tilecache-prefetch.1 tilecache-validate.1; do
    [ -s "$root$prefix/share/man/man1/$page" ] || fail "man page $page was not installed"
done
[ -s "$root$prefix/share/bash-completion/completions/tilecache" ] || fail "bash completion was not installed"
[ -s "$root$prefix/share/zsh/vendor-completions/_tilecache" ] || fail "zsh completion was not installed"
[ -s "$root$prefix/share/fish/vendor_completions.d/tilecache.fish" ] || fail "fish completion was not installed"
bash -n "$root$prefix/share/bash-completion/completions/tilecache" || fail "the bash completion script does not parse"
toolchain=$(dirname "$(dirname "$(readlink -f "$(command -v swift)")")")
if ldd "$bin" | grep -E "not found|$toolchain" >&2; then fail "the binary needs libraries that are missing or come from the toolchain"; fi

cat > "$root/run.sh" <<'INNER'
set -euo pipefail
bin=$1 work=$2
fail() { echo "install-check: $*" >&2; exit 1; }
cd "$work"
command -v swift >/dev/null 2>&1 && fail "swift is still on PATH"
tilecache --help | grep -q "USAGE: tilecache" || fail "tilecache --help printed no usage"
tilecache serve --help | grep -q -- "--port" || fail "tilecache serve --help lists no --port"
tilecache origin --port 0 > origin.out 2>/dev/null &
origin=$!
for _ in $(seq 100); do grep -q -- "--images-base" origin.out 2>/dev/null && break; sleep 0.1; done
tiles=$(grep -- "--tiles-base" origin.out | cut -d' ' -f2)
images=$(grep -- "--images-base" origin.out | cut -d' ' -f2)
[ -n "$tiles" ] || fail "the installed origin did not start"
tilecache prefetch --tiles-base "$tiles" --images-base "$images" --cache-dir cache --elements 1-10 > prefetch.out \
    || { cat prefetch.out; fail "prefetch failed"; }
tilecache serve --port 0 --tiles-base "$tiles" --images-base "$images" --cache-dir cache --db favorites.sqlite > serve.out 2>&1 &
serve=$!
for _ in $(seq 200); do grep -q "serving on" serve.out 2>/dev/null && break; sleep 0.1; done
url=$(grep -o "http://[^ ]*" serve.out | head -1)
[ -n "$url" ] || { cat serve.out; fail "serve did not start"; }
python3 - "$url" <<'PY'
import json, sys, urllib.request
base = sys.argv[1]
def get(path):
    with urllib.request.urlopen(base + path) as response:
        return response.status, response.headers.get("Content-Type", ""), response.read()
status, kind, body = get("/")
assert status == 200 and kind.startswith("text/html") and b"/app.js" in body, ("page", status, kind)
status, kind, body = get("/api/v1/elements")
assert status == 200 and kind.startswith("application/json") and len(json.loads(body)) == 100, ("elements", status, kind)
status, kind, body = get("/api/v1/elements/1/image")
assert status == 200 and kind == "image/jpeg" and body[:2] == b"\xff\xd8", ("image", status, kind)
PY
kill "$serve" "$origin"
wait 2>/dev/null || true
echo "install-check: passed: --help, prefetch and serve (page, API, image) from the installed binary"
INNER

work="$root/work"
mkdir -p "$work"
if [ "$(id -u)" = 0 ] && unshare --mount --fork true 2>/dev/null; then
    echo "install-check: hiding $repo/.build and $toolchain"
    unshare --mount --fork bash -c '
        set -e
        mount -t tmpfs tmpfs "$1/.build" && mount -t tmpfs tmpfs "$2"
        PATH="$3:/usr/bin:/bin" bash "$4/run.sh" "$5" "$6"' _ "$repo" "$toolchain" "$(dirname "$bin")" "$root" "$bin" "$work"
else
    echo "install-check: not root (or no mount namespaces): build folder and toolchain stay visible; PATH stripped only"
    PATH="$(dirname "$bin"):/usr/bin:/bin" bash "$root/run.sh" "$bin" "$work"
fi
