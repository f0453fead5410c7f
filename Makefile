# driverd: `make test` and `make demo` work on a fresh Debian 12 machine with Swift; both install what they need.
SWIFT ?= swift
# lld links the debug build's programs and test bundle (it links the test bundle in seconds where gold took minutes); every target passes the same
# flags, so none rebuilds what another built. Debug information is line tables only (Swift) and none for C (BoringSSL,
# twice): crash backtraces and test failures keep their files and lines, and a clean build takes 461 s instead of 557
# (docs/LEAN.md, "CI time"). For lldb's variables: make DEBUG_INFO= ...
DEBUG_INFO ?= -Xswiftc -gline-tables-only -Xcc -g0
SWIFT_BUILD = $(SWIFT) build -Xswiftc -use-ld=lld $(DEBUG_INFO)
BIN_DIR = $(shell $(SWIFT_BUILD) --show-bin-path)

.PHONY: all deps build build-tests bin-dir test test-kiosk demo bench soak fuzz test-tsan test-asan deb deb-debug test-package clean

all: build

deps:
	@scripts/install-deps.sh

build: deps
	$(SWIFT_BUILD)

# The debug build with every test target: make test's first step (CI runs it alone first to start the package
# test beside the suites).
build-tests: deps
	$(SWIFT_BUILD) --build-tests

bin-dir:
	@echo "$(BIN_DIR)"

# Builds everything (the integration tests run the real binaries), then runs every suite: the integration tests
# in a process of their own (their blocking waits would otherwise starve the in-process servers of Swift
# Concurrency's threads, two on a 2-core machine), TEST_PARALLEL at once, longest first; beside them the unit and
# in-process tests, then the kiosk's browser tests (their logs in .build/unit-tests.log and .build/kiosk-tests.log,
# printed at the end; the unit run is the test bundle itself, not `swift test`: a second SwiftPM beside the
# integration run, even ignoring its lock, once found the build database locked and ran nothing). The integration suite is the longest (its longest test about 210 s). SUITES_BESIDE=no runs
# the three one after another, 8 integration tests at once (about 8 minutes): the old order, for a loaded machine.
# Every daemon the integration tests start leaves its log in .build/test-logs; none may hold customer data.
SUITES_BESIDE ?= yes
TEST_PARALLEL ?= $(if $(filter yes,$(SUITES_BESIDE)),12,8)
test: build-tests
	rm -rf .build/test-logs
	unit() { DRIVERD_BIN_DIR="$(BIN_DIR)" NO_COLOR=1 "$(BIN_DIR)/driverdPackageTests.xctest" --testing-library swift-testing --skip IntegrationTests; }; \
	kiosk() { DRIVERD_TEST_LOG_DIR="$(CURDIR)/.build/test-logs" scripts/test-kiosk.sh "$(BIN_DIR)" --durations=8; }; \
	if [ "$(SUITES_BESIDE)" = yes ]; then \
		{ unit >.build/unit-tests.log 2>&1; echo $$? >.build/unit-tests.status; kiosk >.build/kiosk-tests.log 2>&1; } & beside_pid=$$!; \
	else unit || exit 1; fi; \
	DRIVERD_TEST_PARALLEL=$(TEST_PARALLEL) DRIVERD_BIN_DIR="$(BIN_DIR)" DRIVERD_TEST_LOG_DIR="$(CURDIR)/.build/test-logs" \
		$(SWIFT) test --skip-build --filter IntegrationTests; \
	integration=$$?; \
	echo "the slowest integration tests (seconds of their own, from their slot to their end):"; \
	sort -rn .build/test-logs/timings.tsv | head -8; \
	if [ "$(SUITES_BESIDE)" = yes ]; then \
		wait $$beside_pid; kiosk_status=$$?; unit_status=$$(cat .build/unit-tests.status); \
		echo "== the unit and in-process tests (.build/unit-tests.log), beside the integration suite:"; \
		grep -E "✘|recorded an issue|Test run with" .build/unit-tests.log; [ $$unit_status -eq 0 ] || tail -60 .build/unit-tests.log; \
		echo "== the kiosk's tests (.build/kiosk-tests.log), beside the integration suite:"; cat .build/kiosk-tests.log; \
	else unit_status=0; kiosk; kiosk_status=$$?; fi; \
	[ $$integration -eq 0 ] && [ $$unit_status -eq 0 ] && [ $$kiosk_status -eq 0 ]
	scripts/check-log-privacy.sh .build/test-logs

# The kiosk's tests alone: Debian's chromium driven by Playwright on the real stack (screenshots: .build/kiosk-screens).
test-kiosk: build
	scripts/test-kiosk.sh "$(BIN_DIR)"

demo: build
	scripts/demo.sh "$(BIN_DIR)"

# Measures the binaries the package ships: the static release build of `make deb` (same scratch folder, so one
# serves both).
bench: deps
	scripts/release-build.sh
	scripts/bench.sh "$$(scripts/release-build.sh --show-bin-path)"

# The power-cut soak: the journey of `make test`'s power-cut test with SOAK_CUTS cuts per seed (default 1,000;
# two seeds at once, 25 to 45 minutes); prints each seed's figures (cuts, acknowledged items lost or duplicated,
# dead letters, integrity failures, torn files, pings lost per cut). DRIVERD_POWERCUT_SEEDS=11 runs one seed alone.
# Beside it, a whole shift (8 h) of offline backlog; `make test` replays 2 h of it.
soak: deps
	$(SWIFT_BUILD) --build-tests
	DRIVERD_POWERCUT_CUTS=$${SOAK_CUTS:-1000} DRIVERD_BACKLOG_HOURS=8 DRIVERD_BIN_DIR="$(BIN_DIR)" $(SWIFT) test --skip-build \
		--filter "PowerCutTests/journey|UplinkTests/offlineBacklog" \
		>.build/soak.log 2>&1; status=$$?; grep -E "power-cut soak|recorded an issue|passed after|failed after" .build/soak.log; exit $$status

# libFuzzer over every parser of outside input (Sources/FuzzTargets), FUZZ_SECONDS each (default 60): prints
# executions, rate, coverage and the slowest input per target; a crash, leak or slow input is left in
# .build-fuzz/crashes. `make test` replays the corpus in Tests/FuzzCorpus without fuzzing.
fuzz: deps
	scripts/fuzz.sh

# The unit and in-process suites under ThreadSanitizer and AddressSanitizer, each in a build folder of its own
# (a full build each: about 10 minutes on 2 cores). Suppressions, each with its reason: scripts/tsan.supp.
test-tsan: deps
	$(SWIFT) build --build-tests --build-path .build-tsan --sanitize=thread
	TSAN_OPTIONS="suppressions=$(CURDIR)/scripts/tsan.supp halt_on_error=0 second_deadlock_stack=1" \
		$(SWIFT) test --skip-build --build-path .build-tsan --sanitize=thread --skip IntegrationTests

test-asan: deps
	$(SWIFT) build --build-tests --build-path .build-asan --sanitize=address
	ASAN_OPTIONS=detect_leaks=0 $(SWIFT) test --skip-build --build-path .build-asan --sanitize=address --skip IntegrationTests

# The Debian package: a release build with the Swift runtime linked in, man pages and completions from
# swift-argument-parser, checked by lintian (errors fail). Output: out/driverd_<version>_<arch>.deb
deb:
	@scripts/install-deps.sh --packaging
	scripts/build-deb.sh

# CI's package (.ci/run): the debug build's objects, linked as `make deb` links the release build (static runtime,
# no Foundation), in out/. What the install test checks does not depend on the optimiser; a rebuild is a link.
deb-debug: build-tests
	@scripts/install-deps.sh --packaging
	DRIVERD_DEBUG_BUILD="$(SWIFT_BUILD)" scripts/build-deb.sh

# Installs the package on this machine (root), boots systemd in a PID namespace to run the hardened unit
# against gpsd and dispatch-sim, upgrades over an older build, removes and purges. See the script.
test-package: deb
	$(SWIFT_BUILD)
	scripts/test-package.sh "$(BIN_DIR)"

clean:
	rm -rf .build .build-deb .demo out
