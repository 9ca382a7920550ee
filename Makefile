# TileCache: `make demo` and `make test` work on a fresh Debian 12 machine with Swift 6.3.
SWIFT ?= swift

.PHONY: deps build demo test fleet verdicts test-sanitize fuzz soak clean catalogue bench bench-compare

deps:
	@scripts/install-deps.sh

build: deps
	$(SWIFT) build

## Builds (release) and runs `tilecache demo`: every element image from the built-in origin, cold, warm disk, warm memory.
demo: deps
	$(SWIFT) build -c release --product tilecache
	.build/release/tilecache demo

## Checks the web front end in headless Chromium (installed if missing), kills prefetches at random and verifies the
## disk cache (short form; `scripts/crash-test.sh 50` for the long one), checks that verdicts depend only on the bytes
## and agree with Pillow, libvips, djpeg and Chromium (short form; `make verdicts` for the long one), then runs the
## whole test suite (swift test last, so its summary closes the output). First it builds the release binary and runs the
## demo with it, as `make demo` does: the optimizer can fail where a debug build does not (a Swift 6.3 crash in SIL
## copy propagation was found that way).
test: deps
	scripts/install-fleet-deps.sh
	scripts/apt-install.sh test-deps libgs-common  # ICC profiles the colour tests use (a SWOP CMYK profile)
	$(SWIFT) build -c release --product tilecache
	.build/release/tilecache demo --latency-ms 0 --format json > /dev/null
	scripts/browser-check.sh
	scripts/crash-test.sh 3
	scripts/verdict-check.sh 3
	scripts/with-test-servers.sh $(SWIFT) test

## The fleet demo (docs/fleet.md): SeaweedFS, PostgreSQL, the origin (20 ms), three `tilecache serve` instances and
## nginx on loopback; cold and warm loads, an instance killed, the store and the database restarted; prints a table and
## exits 1 if a step's check fails. About 2 minutes after the build.
fleet: deps
	scripts/install-fleet-deps.sh
	$(SWIFT) build -c release --product tilecache
	scripts/fleet-demo.py

## The verdict check's long form: 20 rounds of `tilecache inspect` at -j 1 and -j 16 over the verdict corpus.
verdicts: deps
	scripts/verdict-check.sh 20

## Regenerates the embedded element catalogue from ../shared/data (dev-time only).
catalogue:
	scripts/generate-catalogue.py

clean:
	rm -rf .build

## Runs the ImageCore micro-benchmarks (ordo-one/benchmark; separate package, not part of `make test`).
bench: deps
	cd Benchmarks && $(SWIFT) package --allow-writing-to-package-directory benchmark

## Runs TileCache side by side with curl, aria2c, Pillow, ImageMagick, tjbench, NSCache, nginx and thumbor (installs them)
## and writes docs/benchmarks.md. About 10-15 minutes.
bench-compare: deps
	Benchmarks/compare/run.sh

## Runs the Swift test suite under ThreadSanitizer, then AddressSanitizer with LeakSanitizer (separate build folders;
## a first run builds everything twice, about 10-15 minutes on 2 cores). One test at a time, with deadlines stretched
## 4x, so the sanitizers' slowdown is not mistaken for a failure. XCTest is off: every test is a Swift Testing test,
## and XCTest's own runner leaks a few objects at exit.
SANITIZE_TEST = TILECACHE_TEST_TIME_SCALE=4 $(SWIFT) test --disable-xctest --no-parallel
test-sanitize: deps
	$(SANITIZE_TEST) --sanitize=thread --scratch-path .build-tsan
	$(SANITIZE_TEST) --sanitize=address --scratch-path .build-asan

## Fuzzes the JPEG/PNG inspector and decoders with libFuzzer under AddressSanitizer for FUZZ_SECONDS (default 120),
## seeded with the origin's images, every fault-matrix body and PngSuite. A crash input lands in Fuzz/crashes/.
FUZZ_SECONDS ?= 120
fuzz: deps
	scripts/fuzz.sh $(FUZZ_SECONDS)

## Runs the service for SOAK_SECONDS (default 600) under wrk with cached, resized, missing and failing requests while
## the origin injects faults; reports statuses, upstream failures and resident memory every 10 s.
SOAK_SECONDS ?= 600
soak: deps
	scripts/soak.sh $(SOAK_SECONDS)
