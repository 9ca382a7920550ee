# TileCache: `make demo` and `make test` work on a fresh Debian 12 machine with Swift 6.3.
SWIFT ?= swift
## Every release build links the Swift runtime statically, so the binary runs where no toolchain is (and one build
## serves the demo, the tests, the benchmarks and `make install`). It is linked by lld, which the Swift toolchain ships
## beside `swift`, with its relative relocations packed (`-z pack-relative-relocs`, DT_RELR, read by glibc 2.36 and
## later: Debian 12's): the 133,000 relocations of the 46 MB binary were a 3.2 MB table the dynamic loader read at every
## start, now 26 KB (gold, the default linker, cannot pack them). Measured: `tilecache --version` 14.84 -> 14.24 ms and
## 32.7 -> 30.3 MB peak RSS; `serve`'s file-backed resident pages under the soak's mix 47 -> 43 MiB (docs/benchmarks.md,
## "Issue 35, fifth session"). Without an ld.lld beside `swift`, gold links it as before. It has no run path
## (`--disable-local-rpath`: SwiftPM's `$ORIGIN` made the loader look for each of its 20 system libraries in the build
## folder's glibc-hwcaps, tls and x86_64 subfolders first, 30 failed opens a start): `tilecache --version` 13.74 -> 13.04 ms
## (medians of 150 alternating runs).
SWIFT_LLD := $(shell d=$$(dirname "$$(readlink -f "$$(command -v $(SWIFT))")") && [ -x "$$d/ld.lld" ] && echo "$$d/ld.lld")
LLD_TOOLSET = $(CURDIR)/.build/lld-toolset.json
LLD_TOOLSET_JSON = {"schemaVersion": "1.0", "linker": {"path": "$(SWIFT_LLD)"}}
RELEASE_BUILD = $(if $(SWIFT_LLD),mkdir -p .build && echo '$(LLD_TOOLSET_JSON)' > $(LLD_TOOLSET) && )$(SWIFT) build -c release --static-swift-stdlib --disable-local-rpath --product tilecache$(if $(SWIFT_LLD), --toolset $(LLD_TOOLSET) -Xlinker -z -Xlinker pack-relative-relocs)
PREFIX ?= /usr/local
DESTDIR ?=
BINDIR = $(DESTDIR)$(PREFIX)/bin
MANDIR = $(DESTDIR)$(PREFIX)/share/man/man1
BASH_COMPLETIONS = $(DESTDIR)$(PREFIX)/share/bash-completion/completions
ZSH_COMPLETIONS = $(DESTDIR)$(PREFIX)/share/zsh/vendor-completions
FISH_COMPLETIONS = $(DESTDIR)$(PREFIX)/share/fish/vendor_completions.d

.PHONY: deps test-deps build release man install uninstall demo test release-check fleet verdicts test-sanitize fuzz soak clean catalogue bench bench-compare bench-disk-scale bench-open-sources

deps:
	@scripts/install-deps.sh

build: deps
	$(SWIFT) build

## The release binary, .build/release/tilecache.
release: deps
	$(RELEASE_BUILD)

## One man page per command in .build/man, generated from the argument parser's own definitions by the tool behind
## its GenerateManual plugin. The plugin is asked only to build that tool: its own run would rebuild the release binary
## without --static-swift-stdlib (`swift package` takes no such flag), so the tool is run on our binary directly.
man: release
	$(SWIFT) package generate-manual --help > /dev/null
	rm -rf .build/man && mkdir -p .build/man
	tool=$$(find .build -path '*/debug/generate-manual-tool' -type f | head -1); \
	test -x "$$tool" || { echo "make man: swift-argument-parser's generate-manual tool was not built" >&2; exit 1; }; \
	"$$tool" .build/release/tilecache --multi-page --authors "TileCache developers" --output-directory .build/man
	# Debian names a subcommand's page tool-sub (git-commit.1), so `man tilecache-serve` works; the help page goes.
	cd .build/man && rm -f tilecache.help.1 && for page in tilecache.*.1; do \
	    sed -e 's/^\.Xr tilecache\.\([a-z-]*\)/.Xr tilecache-\1/' -e 's/^\.Dt TILECACHE\./.Dt TILECACHE-/' "$$page" \
	        | grep -v '^\.Xr tilecache-help ' > "$$(echo "$$page" | sed 's/^tilecache\./tilecache-/')" && rm "$$page"; done
	sed -i -e 's/^\.Xr tilecache\.\([a-z-]*\)/.Xr tilecache-\1/' -e '/^\.Xr tilecache-help /d' .build/man/tilecache.1
	@ls .build/man | grep -q '^tilecache-serve.1$$' || { echo "make man: no page for tilecache serve" >&2; exit 1; }

## Installs the binary (Swift runtime linked in, web front end compiled in: it runs on a Debian 12 machine without the
## toolchain), the man pages and the bash, zsh and fish completions under DESTDIR/PREFIX (default /usr/local).
install: man
	install -d $(BINDIR) $(MANDIR) $(BASH_COMPLETIONS) $(ZSH_COMPLETIONS) $(FISH_COMPLETIONS)
	install -m 755 -s .build/release/tilecache $(BINDIR)/tilecache
	install -m 644 .build/man/*.1 $(MANDIR)/
	.build/release/tilecache --generate-completion-script bash > $(BASH_COMPLETIONS)/tilecache
	.build/release/tilecache --generate-completion-script zsh > $(ZSH_COMPLETIONS)/_tilecache
	.build/release/tilecache --generate-completion-script fish > $(FISH_COMPLETIONS)/tilecache.fish
	@echo "installed $(BINDIR)/tilecache, its man pages and completions"

## Removes what `make install` put under DESTDIR/PREFIX.
uninstall:
	rm -f $(BINDIR)/tilecache $(MANDIR)/tilecache.1 $(MANDIR)/tilecache-*.1
	rm -f $(BASH_COMPLETIONS)/tilecache $(ZSH_COMPLETIONS)/_tilecache $(FISH_COMPLETIONS)/tilecache.fish

## Builds (release) and runs `tilecache demo`: every element image from the built-in origin, cold, warm disk, warm memory.
demo: deps
	$(RELEASE_BUILD)
	.build/release/tilecache demo

## What the suite needs besides the build, for `make test` and `make test-sanitize`: SeaweedFS and PostgreSQL (the
## fleet tools), the ICC profiles of the colour tests (SWOP CMYK), the TLS test's certificate and client, and strace
## (system-call counts of the disk cache's scaling test), and iproute2 (the SSRF check's network namespaces).
test-deps: deps
	scripts/install-fleet-deps.sh
	scripts/apt-install.sh test-deps libgs-common openssl curl strace iproute2

## The debug build of `tilecache`, which the checks below and the suite's child processes run.
DEBUG_BIN = .build/debug/tilecache
## The debug builds of `make test` and `make verdicts` write no debug information: 10-15% less compiling (measured on
## swift-nio's NIOHTTP1 and 24 of BoringSSL's C++ files, 2026-11-27), and neither the checks nor the suite read it
## (Swift Testing reports where an expectation failed from its own macros). Nor does clang index the C and C++ files
## (BoringSSL's 772 among them: 15% of each file's time, measured on 12 of them): SwiftPM's test discovery reads the
## index of the Swift modules only, at the path it gives them itself, so the Swift compiler is given that path and the
## rest of the indexing is turned off. Every debug build here passes the same flags, so none undoes another's work
## (scripts/example-check.sh and scripts/verdict-check.sh read them from the environment).
DEBUG_INDEX := $(CURDIR)/.build/$(shell uname -m)-unknown-linux-gnu/debug/index/store
DEBUG_FLAGS = -debug-info-format none --disable-index-store -Xswiftc -index-store-path -Xswiftc $(DEBUG_INDEX)
export TILECACHE_DEBUG_FLAGS = $(DEBUG_FLAGS)

## Builds `tilecache` (debug); runs the API check (schemathesis over docs/openapi.yaml against the running service;
## curl, Python's gzip and brotli decode its compressed answers); checks the web front end in headless Chromium
## (installed if missing); kills prefetches at random and verifies the disk cache (short form; `scripts/crash-test.sh
## BINARY 50` for the long one); builds and runs Examples/PrefetchURLs, a package that depends on the library by path;
## checks imgproxy URLs built by two URL builders from PyPI against imgproxy's own geometry and thumbor URLs against
## thumbor itself; checks the placeholders against the reference BlurHash and ThumbHash encoders and decoders (PyPI);
## compares the images `validate --extract` finds in third-party documents with BeautifulSoup's and markdown-it-py's;
## runs the rover-style example (Examples/Rover: a JSON list of photo URLs warmed and served as
## thumbnails); checks the SSRF rules across
## network namespaces (a public host, a private host and the cloud metadata address on real interfaces); runs the
## whole test suite (Swift Testing, every test at once as its default is; tests that start servers or
## processes wait for one of a few places, `.heavy`; its InspectDeterminismTests keep the verdict corpus in .build/verdict-
## corpus); then checks that every file's verdict is the same alone and agrees with Pillow, libvips, djpeg and Chromium
## (their verdicts recorded in scripts/verdict-oracles.json; `make verdicts` judges again and re-records). Every
## script is given the debug binary, so nothing builds twice. One build makes `tilecache` and the test targets, so the
## tests compile on one core while the last library modules compile on the other; the checks' Debian packages and
## Python environments install beside it (scripts/check-envs.sh, its output in .build/check-envs.log). Then the
## checks run one after another beside the suite and the verdict check (scripts/test-all.sh, each check's output in
## .build/checks/).
test: test-deps
	@mkdir -p .build
	scripts/check-envs.sh > .build/check-envs.log 2>&1 & envs=$$!; \
	$(SWIFT) build --build-tests $(DEBUG_FLAGS) || { kill $$envs 2>/dev/null; exit 1; }; \
	wait $$envs || { cat .build/check-envs.log >&2; echo "make test: the checks' environments could not be installed (above)" >&2; exit 1; }
	scripts/test-all.sh $(DEBUG_BIN)

## The release build as users get it (`make demo`, `make install`), checked: it builds the release binary and runs the
## demo with it, since the optimizer can fail where a debug build does not (a Swift 6.3 crash in SIL copy propagation
## was found that way), then the install check (`make install` into a temporary prefix, run from there with the build
## folder and the toolchain hidden). 488 s on a fresh 2-core machine (2026-11-25); the release build alone took 601 s on
## the slowest host kind seen (2026-11-28, docs/benchmarks.md). CI (.ci/run) runs it after `make test`.
release-check: deps
	$(RELEASE_BUILD)
	.build/release/tilecache demo --latency-ms 0 --format json > /dev/null
	INSTALL_CHECK_PREBUILT=1 scripts/install-check.sh

## The fleet demo (docs/fleet.md): SeaweedFS, PostgreSQL, the origin (20 ms), three `tilecache serve` instances and
## nginx on loopback; cold and warm loads, an instance killed, the store and the database restarted; prints a table and
## exits 1 if a step's check fails. About 2 minutes after the build.
fleet: deps
	scripts/install-fleet-deps.sh
	$(RELEASE_BUILD)
	scripts/fleet-demo.py

## The verdict check's long form: 20 rounds of `tilecache inspect` at -j 1 and -j 16 over the verdict corpus, and every
## file judged again by Pillow, libvips, djpeg and Chromium, their verdicts re-recorded in scripts/verdict-oracles.json.
verdicts: deps
	$(SWIFT) build --product tilecache $(DEBUG_FLAGS)
	VERDICT_ORACLES_RECORD=1 scripts/verdict-check.sh $(DEBUG_BIN) 20

## Regenerates the embedded element catalogue from ../shared/data (dev-time only).
catalogue:
	scripts/generate-catalogue.py

clean:
	rm -rf .build

## Runs the ImageCore micro-benchmarks (ordo-one/benchmark; separate package, not part of `make test`).
bench: deps
	cd Benchmarks && $(SWIFT) package --allow-writing-to-package-directory benchmark

## Open sources side by side (docs/benchmarks-open-sources.md): a cold resized miss and a warm hit of imgproxy URLs
## against thumbor (PyPI) on the same photos and size, cold misses of camera photos up to 10 megapixels, and the resize
## itself against vipsthumbnail. About 3 minutes after the release build.
bench-open-sources: deps
	$(RELEASE_BUILD)
	scripts/check-envs.sh sources
	work=$$(mktemp -d /tmp/tilecache-bench-sources.XXXXXX); \
	.build/sources-venv/bin/python Benchmarks/compare/open_sources.py .build/release/tilecache .build/sources-venv/bin/thumbor "$$work" $${ROUNDS:-3} docs/benchmarks-open-sources.md; \
	status=$$?; rm -rf "$$work"; exit $$status

## Runs TileCache side by side with curl, aria2c, Pillow, ImageMagick, tjbench, djpeg, libpng, NSCache, nginx (HTTP/1.1
## by wrk, HTTP/2 over TLS by h2load), the Hummingbird and SwiftNIO floors, thumbor and vipsthumbnail, libvips' and
## Pillow's encoders, the reference BlurHash and ThumbHash encoders (installs them), with the disk cache at 100,000
## entries and the open sources' comparison, and writes docs/benchmarks.md with every row and the host's CPU. About 70
## minutes with the 10-minute serve soak (SOAK_SECONDS=600; ROUNDS=5, WRK_SECONDS=6).
bench-compare: deps
	Benchmarks/compare/run.sh

## The disk cache at 1,000, 10,000 and 100,000 entries: cold and warm prefetches, `stats --verify` and an evicting
## prefetch, time per image and peak RSS (docs/benchmarks-disk-scale.md and its section of docs/benchmarks.md). About
## 15 minutes (ROUNDS=3 for the smaller sizes, LARGE_ROUNDS=1 at 100,000; about 1.3 GB of disk at 100,000).
bench-disk-scale: deps
	$(RELEASE_BUILD)
	work=$$(mktemp -d /tmp/tilecache-disk-scale.XXXXXX) && trap 'rm -rf "$$work"' EXIT && \
	    python3 Benchmarks/compare/disk_scale.py .build/release/tilecache "$$work"

## Runs the Swift test suite under ThreadSanitizer, then AddressSanitizer with LeakSanitizer (separate build folders;
## a first run builds everything twice, about 25 minutes on 2 cores). One test at a time, with deadlines stretched
## 4x, so the sanitizers' slowdown is not mistaken for a failure. XCTest is off: every test is a Swift Testing test,
## and XCTest's own runner leaks a few objects at exit. It installs what the suite needs and starts SeaweedFS and
## PostgreSQL around each pass, as `make test` does (the same scripts and packages). LeakSanitizer reads
## scripts/lsan-suppressions.txt (thread pools that live as long as the process), given by absolute path because the
## tests' child `tilecache` processes inherit LSAN_OPTIONS and run in other directories.
##
## Two kinds of test run under AddressSanitizer in a second process with LeakSanitizer off (memory errors are still
## caught), because what leaks there belongs to a library, shown in docs/reliability.md ("Sanitizers"): the seed
## clients' FoundationNetworking URLSession, which leaks four libcurl allocations on every request (a 14-line program
## reproduces it), and the service's favourites on PostgreSQL, after which postgres-nio's client is at times left in a
## reference cycle with a query whose promise is never completed (0 to 60 KB a run).
SANITIZE_TEST = TILECACHE_TEST_TIME_SCALE=4 scripts/with-test-servers.sh $(SWIFT) test --disable-xctest --no-parallel
LEAKS_NOT_OURS = 'SeedContractTests' 'PostgresFavoritesTests' 'FavoritesAndOperationsTests/(favorites|favoriteResource|favoritesPaged|persistence)\('
test-sanitize: test-deps
	$(SANITIZE_TEST) --sanitize=thread --scratch-path .build-tsan
	LSAN_OPTIONS='suppressions=$(CURDIR)/scripts/lsan-suppressions.txt:print_suppressions=0' \
	    $(SANITIZE_TEST) --sanitize=address --scratch-path .build-asan $(foreach t,$(LEAKS_NOT_OURS),--skip $(t))
	ASAN_OPTIONS=detect_leaks=0 \
	    $(SANITIZE_TEST) --sanitize=address --scratch-path .build-asan $(foreach t,$(LEAKS_NOT_OURS),--filter $(t))

## Fuzzes the inspector and decoders (JPEG, PNG, WebP, GIF, AVIF) with libFuzzer under AddressSanitizer for
## FUZZ_SECONDS (default 120), seeded with the origin's images, every fault-matrix body, PngSuite, the photos, the GIF
## test suite and libavif's test files. A crash input lands in Fuzz/crashes/.
FUZZ_SECONDS ?= 120
fuzz: deps
	scripts/fuzz.sh $(FUZZ_SECONDS)

## Runs the service for SOAK_SECONDS (default 600) under wrk with cached, resized, missing and failing requests while
## the origin injects faults; reports statuses, upstream failures and resident memory every 10 s.
SOAK_SECONDS ?= 600
soak: deps
	scripts/soak.sh $(SOAK_SECONDS)
