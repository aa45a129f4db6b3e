# fastnow: `make report` runs the main job, `make test` runs every test.

CARGO ?= cargo
GO ?= go

# The aarch64 backend is built with Debian's Rust (which ships the aarch64
# standard library) and run under qemu-user; .ci/run installs both. Linked
# statically: dynamically linked aarch64 programs hang in pthread_create
# under qemu-user 7.2.
AARCH64_ENV = RUSTC=/usr/bin/rustc RUSTDOC=/usr/bin/rustdoc \
	CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_LINKER=aarch64-linux-gnu-gcc \
	CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_RUNNER=qemu-aarch64 \
	CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_RUSTFLAGS="-C target-feature=+crt-static" \
	FASTNOW_TEST_RUNNER=qemu-aarch64
AARCH64_READY = command -v qemu-aarch64 >/dev/null && command -v aarch64-linux-gnu-gcc >/dev/null \
	&& [ -d /usr/lib/rustlib/aarch64-unknown-linux-gnu ]

.PHONY: test test-rust test-package test-aarch64 test-go test-fresh lint test-faults test-platforms report report-screenshot figures figures-go bench fmt

# Independent parts: `make -j2 test` (as .ci/run does) runs two at a time,
# the Go tests beside the Rust ones.
test: lint test-go test-rust test-package test-aarch64 test-fresh

# The lint gate: formatting, clippy and rustdoc with warnings denied, gofmt
# and staticcheck (fetched from the Go module proxy at a pinned version, as
# benchstat is below).
STATICCHECK = honnef.co/go/tools/cmd/staticcheck@v0.8.2
lint:
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy -q --workspace --all-targets --all-features -- -D warnings
	RUSTDOCFLAGS="-D warnings" $(CARGO) doc -q -p fastnow --all-features --no-deps
	@out=$$(gofmt -l go tools); if [ -n "$$out" ]; then echo "gofmt would change: $$out"; exit 1; fi
	cd go && $(GO) run $(STATICCHECK) ./...
	cd go/adapters && $(GO) run $(STATICCHECK) ./...
	cd tools/gomodzip && $(GO) run $(STATICCHECK) ./...

VERSION = $(shell sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -1)

# The library builds with its declared rust-version (1.80); its tests need
# newer toolchains (proptest needs 1.88).
MSRV = 1.80
test-rust:
	$(CARGO) test --workspace --all-features
	$(CARGO) test -p fastnow
	$(CARGO) build -p fastnow --no-default-features
	$(CARGO) test --release -p fastnow-bench --test strict
	@if rustup toolchain list 2>/dev/null | grep -q '^$(MSRV)'; then \
		for f in "" "--features mock,tracing" "--no-default-features"; do \
			echo "cargo +$(MSRV) build -p fastnow $$f"; \
			cargo +$(MSRV) build -q -p fastnow $$f --target-dir target/msrv || exit 1; \
		done; \
	else \
		echo "test-rust: SKIPPED the Rust $(MSRV) build: rustup has no $(MSRV) toolchain (.ci/run installs it)"; \
		[ -z "$$CI" ] || exit 1; \
	fi

# The crates as published: `cargo package` for the whole workspace (which
# resolves fastnow-bench's and fastnow-cli's dependencies on the unpublished
# crates through the packages it has just made); then fastnow's own tests
# and doc tests from its unpacked .crate (the README, SEMANTICS.md,
# MIGRATION.md, the vectors and the licenses travel inside it through links
# in crates/fastnow), and the unpacked CLI built against the unpacked fastnow
# and fastnow-bench, as `cargo install fastnow-cli` would build it. (Not
# `cargo package`'s own verification: it unpacks the new fastnow under the
# same name and version as the last run's, and cargo keeps the stale copy.)
# The files are unpacked with the time of unpacking (tar -m): a .crate
# stores one fixed old time for every file, with which cargo would take the
# last run's build of them for an up-to-date one. They build in target/, as
# the workspace does: each .crate carries the workspace's Cargo.lock, so
# their dependencies are the ones already built there.
PACKAGED = fastnow fastnow-bench fastnow-cli
test-package:
	$(CARGO) package -q --workspace --allow-dirty --no-verify
	for c in $(PACKAGED); do \
		rm -rf target/package/$$c-$(VERSION) && tar -xmzf target/package/$$c-$(VERSION).crate -C target/package || exit 1; \
	done
	@echo "test-package: the packaged README and MIGRATION.md link only absolutely (crates.io and docs.rs render them)"
	cd target/package/fastnow-$(VERSION) && $(CARGO) test -q --all-features --target-dir ../.. --test package
	cd target/package/fastnow-$(VERSION) && $(CARGO) test -q --all-features --target-dir ../..
	cd target/package/fastnow-cli-$(VERSION) && $(CARGO) build -q --target-dir ../.. \
		--config 'patch.crates-io.fastnow.path="../fastnow-$(VERSION)"' \
		--config 'patch.crates-io.fastnow-bench.path="../fastnow-bench-$(VERSION)"'

test-aarch64:
	@if $(AARCH64_READY); then \
		$(AARCH64_ENV) $(CARGO) test --target aarch64-unknown-linux-gnu --target-dir target/aarch64 \
			-p fastnow -p fastnow-bench --features fastnow/mock,fastnow/tracing; \
	else \
		echo "test-aarch64: SKIPPED: needs qemu-user, gcc-aarch64-linux-gnu and Debian's aarch64 Rust std (.ci/run installs them)"; \
		[ -z "$$CI" ] || exit 1; \
	fi

# Go: vet for every backend, the race detector on amd64, the fastnow_time tag
# (testing/synctest), the oldest Go that go.mod's go line names, and the
# arm64 backend under qemu-user; the logger adapters' module (go/adapters,
# its own go.mod) under the race detector, and each module's zip as the
# module proxy builds it (tools/gomodzip: the license travels, nothing is
# left out but nested modules).
# GO_OLDEST comes from the module proxy as a toolchain module
# (GOTOOLCHAIN=go1.22.12 go version; .ci/run fetches it); the step is
# skipped, saying so, when it is not in the module cache.
GO_OLDEST = go1.22.12
GO_VET_TARGETS = linux/amd64 linux/arm64 linux/riscv64 linux/loong64 windows/amd64 darwin/arm64 darwin/amd64 js/wasm wasip1/wasm \
	linux/386 linux/arm linux/ppc64le linux/s390x freebsd/amd64 android/arm64 windows/arm64
test-go:
	cd go && for t in $(GO_VET_TARGETS); do \
		echo "go vet $$t"; GOOS=$${t%/*} GOARCH=$${t#*/} $(GO) vet ./... || exit 1; \
	done
	cd go && $(GO) test -race -count=1 ./...
	cd go && $(GO) test -tags fastnow_time -count=1 ./...
	cd go/adapters && $(GO) vet ./... && $(GO) test -race -count=1 ./...
	cd tools/gomodzip && $(GO) vet ./... && $(GO) test -count=1 ./...
	@if (cd go && GOTOOLCHAIN=$(GO_OLDEST) GOPROXY=off $(GO) version >/dev/null 2>&1); then \
		echo "$(GO_OLDEST): vet and test"; \
		cd go && GOTOOLCHAIN=$(GO_OLDEST) GOPROXY=off $(GO) vet ./... && \
			GOTOOLCHAIN=$(GO_OLDEST) GOPROXY=off $(GO) test -count=1 ./...; \
	else \
		echo "test-go $(GO_OLDEST): SKIPPED: the toolchain is not in the module cache (GOTOOLCHAIN=$(GO_OLDEST) go version fetches it; .ci/run does)"; \
		[ -z "$$CI" ] || exit 1; \
	fi
	@if command -v qemu-aarch64 >/dev/null; then \
		echo "test-go arm64: the Go tests built for GOARCH=arm64, run under qemu-aarch64 (timings under emulation mean nothing)"; \
		cd go && FASTNOW_TEST_RUNNER=qemu-aarch64 GOARCH=arm64 $(GO) test -exec qemu-aarch64 -count=1 ./...; \
	else \
		echo "test-go arm64: SKIPPED: needs qemu-user (.ci/run installs it)"; [ -z "$$CI" ] || exit 1; \
	fi

# The fastnow crate's tests and the Go package's tests as on a machine
# booted a minute ago and on one up for twenty years: Linux time namespaces
# (unshare -T) set CLOCK_MONOTONIC and CLOCK_BOOTTIME for the processes
# started inside (the counter and CLOCK_REALTIME are untouched), here both
# to the age given, read through perl's Time::HiRes (git's dependency),
# and in a time zone 13 h 45 min east of UTC (a POSIX TZ string: no tzdata
# needed), which no test may notice either.
# Built first, outside: inside, cargo finds the tests built and the Go
# tests run from their compiled binary (without -race: the ages are what is
# tested here; test-go runs the race detector). The doc tests, which rustdoc
# compiles at every run, run on the young machine only. Where no time
# namespace can be made (not root, a kernel before 5.6, a container that
# forbids it) it prints SKIPPED and why.
FRESH_YOUNG = 60
FRESH_OLD = 630720000
FRESH_TZ = <+1345>-13:45
FRESH_CLOCKS = perl -MTime::HiRes=clock_gettime,CLOCK_MONOTONIC,CLOCK_BOOTTIME \
	-e 'printf "%d %d\n", clock_gettime(CLOCK_MONOTONIC), clock_gettime(CLOCK_BOOTTIME)'
test-fresh:
	@if ! command -v unshare >/dev/null || ! perl -MTime::HiRes -e1 2>/dev/null; then \
		echo "test-fresh: SKIPPED: needs unshare (util-linux) and perl with Time::HiRes"; \
		[ -z "$$CI" ] || exit 1; exit 0; \
	fi; \
	if ! why=$$(unshare -T --fork true 2>&1); then \
		echo "test-fresh: SKIPPED: no time namespace here (unshare -T: $$why; it needs root and Linux 5.6)"; \
		[ -z "$$CI" ] || exit 1; exit 0; \
	fi; \
	set -e; \
	$(CARGO) test -q -p fastnow --all-features --no-run; \
	mkdir -p target/fresh; \
	(cd go && $(GO) test -c -o ../target/fresh/fastnow.test ./fastnow); \
	export TZ='$(FRESH_TZ)'; \
	for age in $(FRESH_YOUNG) $(FRESH_OLD); do \
		set -- $$($(FRESH_CLOCKS)); \
		ns="unshare -T --monotonic $$(($$age - $$1)) --boottime $$(($$age - $$2)) --fork"; \
		set -- $$($$ns $(FRESH_CLOCKS)); \
		echo "test-fresh: CLOCK_MONOTONIC $$1 s, CLOCK_BOOTTIME $$2 s, TZ=$$TZ inside"; \
		if [ $$1 -lt $$age ] || [ $$1 -gt $$(($$age + 60)) ] || [ $$2 -lt $$age ] || [ $$2 -gt $$(($$age + 60)) ]; then \
			echo "test-fresh: the time namespace did not set the clocks to $$age s"; exit 1; \
		fi; \
		$$ns $(CARGO) test -q -p fastnow --all-features --lib --tests; \
		[ $$age != $(FRESH_YOUNG) ] || $$ns $(CARGO) test -q -p fastnow --all-features --doc; \
		(cd go/fastnow && $$ns ../../target/fresh/fastnow.test); \
	done

# Clock faults injected into the real kernel (adjtimex frequency and tick
# changes, clock_settime steps, the sysfs clocksource switch), with the
# bounds of spec/SEMANTICS.md asserted; every change is undone in a guard.
# Needs CAP_SYS_TIME (root): prints SKIPPED with the reason otherwise.
# Run alone: it moves the machine's clock for about two minutes.
# The Go side (go/cmd/fastnow-faults) runs the same events against the same
# bounds, after the Rust side; each mode in its own process, because the
# clocksource switch (last) moves a process to the OS clock for good.
test-faults:
	$(CARGO) build --release -q -p fastnow-bench --bin faults
	target/release/faults
	target/release/faults --upkeep
	mkdir -p target && cd go && $(GO) build -o ../target/fastnow-faults ./cmd/fastnow-faults
	target/fastnow-faults
	target/fastnow-faults -upkeep

# The other platforms: the fastnow crate's full test suite and the Go tests
# under emulators (riscv64 and loongarch64 under qemu-user, Windows under
# Wine, WASI under wazero; Go's js/wasm under node), macOS compiled and
# linked. Installs what is missing first (see .ci/platforms/). Each step is
# logged in target/platforms/logs/; PLATFORMS picks steps, e.g.
#   make test-platforms PLATFORMS="rust-wasi go-wasip1"
# PLATFORMS_KNOWN_FAILING: steps that fail for want of library support; they
# are reported, not counted against the run. Today: none.
PLATFORMS ?=
PLATFORMS_KNOWN_FAILING ?=
test-platforms:
	.ci/platforms/install
	KNOWN_FAILING="$(PLATFORMS_KNOWN_FAILING)" .ci/platforms/run $(PLATFORMS)

# The main job: this machine's clocks, measured (REPORT.md); the Go side after.
# REPORT_ARGS adds flags, e.g. make report REPORT_ARGS="--quick --html report.html".
REPORT_ARGS ?=
report:
	$(CARGO) run --release -q -p fastnow-cli --features peers -- report $(REPORT_ARGS)
	@echo
	cd go && $(GO) run ./cmd/fastnow-report -quick

# The report's page as a person sees it: a quick report's HTML rendered by
# a headless Chromium at a desktop's and a phone's width, into
# target/report/ (look at the PNGs; they are not committed). Debian:
# apt-get install chromium.
CHROMIUM ?= $(shell command -v chromium chromium-browser google-chrome 2>/dev/null | head -1)
SCREENSHOT_ARGS ?= --quick
report-screenshot:
	@if [ -z "$(CHROMIUM)" ]; then \
		echo "report-screenshot: SKIPPED: no headless browser (apt-get install chromium)"; [ -z "$$CI" ] || exit 1; exit 0; \
	fi; \
	set -e; mkdir -p target/report; \
	$(CARGO) run --release -q -p fastnow-cli --features peers -- report $(SCREENSHOT_ARGS) --html target/report/report.html > target/report/report.txt; \
	for size in 1280,7200 390,16000; do \
		png=target/report/report-$${size%%,*}.png; \
		$(CHROMIUM) --headless --no-sandbox --disable-gpu --hide-scrollbars --window-size=$$size \
			--screenshot=$$png file://$(CURDIR)/target/report/report.html 2>/dev/null; \
		echo "report-screenshot: $$png"; \
	done

# The Go figures in BENCHMARKS.md: go test -bench, 6 runs each, through benchstat.
BENCHSTAT = golang.org/x/perf/cmd/benchstat@v0.0.0-20260908200009-22c9c6c9d4da
# BenchmarkReaderUpdate touches memory between its timed updates and
# BenchmarkReadTail times every call for 10 ms per iteration, so they run a
# fixed 200 times per round, in a second pass (FASTNOW_UPDATE_COSTS=1);
# BenchmarkColdCall idles a second before each call it times, so it runs
# 9 rounds once, in a third (about 50 s).
figures-go:
	mkdir -p target && cd go && $(GO) test -run '^$$' -bench . -count 6 ./fastnow | tee /dev/stderr > ../target/figures-go.txt
	cd go && FASTNOW_UPDATE_COSTS=1 $(GO) test -run '^$$' -bench 'ReaderUpdate|ReadTail' -benchtime 200x -count 6 ./fastnow \
		| tee /dev/stderr > ../target/figures-go-updates.txt
	cd go && FASTNOW_UPDATE_COSTS=1 $(GO) test -run '^$$' -bench 'ColdCall' -benchtime 9x -count 1 ./fastnow \
		| tee /dev/stderr > ../target/figures-go-cold.txt
	cd go && $(GO) run $(BENCHSTAT) ../target/figures-go.txt
	cd go && $(GO) run $(BENCHSTAT) ../target/figures-go-updates.txt

# The Rust figures for BENCHMARKS.md (about 3 minutes; -- --quick: about 20 s).
figures:
	$(CARGO) run --release -q -p fastnow-bench --features peers --bin figures

bench:
	$(CARGO) bench -p fastnow-bench --features peers

fmt:
	$(CARGO) fmt --all
