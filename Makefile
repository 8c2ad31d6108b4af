# flowd — build, test, demo, install.
#
#   make                 release build of the daemon, flowctl and the shipped plugins
#   make test            every test: unit, integration (private dbus-daemon), the fuzzers briefly,
#                        desktop (Xvfb), the plugin template (built from the installed SDK, loaded by the
#                        installed flowd), system (real systemd), package (the .deb in a clean Debian 12)
#   make test-desktop    the desktop client in a headless X server, driven through AT-SPI (e2e/desktop)
#   make demo            private bus + flowd with the example flows and plugins + a flow driven by flowctl
#                        (DEMO_KEEP=1: keep them up afterwards for flowctl by hand, until Ctrl-C)
#   make demo-installed  the same from an installed tree, no toolchain: TREE=stage (make stage) or TREE=/
#   make install         DESTDIR=... PREFIX=/usr: the layout in docs/admin.md
#   make uninstall       the same variables: removes it again (keeps configuration and sessions)
#   make deb             the Debian packages, in build-deb/ (lintian-clean)
#   make bench           the benchmark (docs/performance.md)
#   make bench-instructions  flowd's instructions per call under callgrind, against their budgets
#   make fuzz            every fuzz target, then the D-Bus fuzzer, FUZZ_SECONDS each (default 600)
#   make soak            many clients against flowd for SOAK_SECONDS (default 600)
#   make demo-gtk        private bus + flowd with the example flows and plugins + a flow in flowd-gtk's window
#                        (DEMO_FLOW=survey for another flow; needs a display)

SWIFT    ?= swift
PREFIX   ?= /usr/local
DESTDIR  ?=
# Warnings are errors everywhere: the project builds warning-free in Swift 6 mode.
SWIFTFLAGS ?= -Xswiftc -warnings-as-errors
RELEASE  = $(SWIFT) build -c release $(SWIFTFLAGS)
DEBUG    = $(SWIFT) build $(SWIFTFLAGS)

BIN_RELEASE := $(shell $(SWIFT) build -c release --show-bin-path 2>/dev/null)
BIN_DEBUG   := $(shell $(SWIFT) build --show-bin-path 2>/dev/null)

.PHONY: all build debug test test-unit test-fuzz test-desktop test-template test-system test-package demo demo-installed
.PHONY: demo-gtk install uninstall stage deb bench bench-instructions fuzz soak clean setup

# Debian's python3, which has python3-dbus (a pyenv or venv python on PATH may not).
PYTHON3 ?= /usr/bin/python3
FUZZ_SECONDS ?= 600
SOAK_SECONDS ?= 600

all: build

setup:
	scripts/setup-debian.sh

# What `make` builds, product by product: what `make install` ships, and
# flowd-bench. Not every target: the fuzz targets import modules @testable,
# which a release build cannot; Fuzz/run.sh and the debug build make them.
RELEASE_PRODUCTS := flowd flowctl flowd-gtk flowd-plugin-probe flowd-plugin-host flowd-bench \
	SpoolPlugin CommandPlugin WebhookPlugin ValidatorsPlugin ProvidersPlugin
build:
	for product in $(RELEASE_PRODUCTS); do $(RELEASE) --product $$product || exit 1; done

debug:
	$(DEBUG)

# Unit and integration tests. Integration tests start their own private
# dbus-daemon and the built flowd; nothing on the host bus is touched.
test-unit:
	$(SWIFT) build --build-tests $(SWIFTFLAGS)
	$(SWIFT) test --skip-build
	$(SWIFT) test --package-path Packages/FlowKit $(SWIFTFLAGS)
	$(MAKE) -C Packages/PluginTemplate test SWIFT="$(SWIFT)" FLOWD_SDK="$(CURDIR)/Packages"
	Fuzz/run.sh --replay

# The fuzzers briefly (docs/fuzzing.md): each libFuzzer target 10 s from its
# corpus (so a regression input kept there fails here), the D-Bus fuzzer and
# the soak test 20 s each against the debug flowd.
test-fuzz: debug
	SWIFT="$(SWIFT)" Fuzz/run.sh --seconds 10
	$(PYTHON3) Fuzz/bus/fuzz.py --seconds 20
	$(PYTHON3) Fuzz/bus/soak.py --seconds 20 --clients 8

# The desktop client end to end (e2e/desktop/README.md): flowd-gtk in Xvfb
# with a private session bus and its accessibility bus, on the real flowd with
# every shipped flow and plugin, driven through AT-SPI;
# screenshots in DESKTOP_SHOTS. Where no X server can be started it says why
# in one line and passes (status 77 from run.sh).
DESKTOP_SHOTS ?= $(CURDIR)/.build/desktop-shots
test-desktop:
	$(SWIFT) build $(SWIFTFLAGS)
	@e2e/desktop/run.sh "$(BIN_DEBUG)" "$(DESKTOP_SHOTS)"; status=$$?; \
		if [ $$status -eq 77 ]; then exit 0; else exit $$status; fi

# The plugin template (docs/plugins.md, "Start from the template") as a new
# author gets it: from the install tree's SDK, its own unit tests, its
# Makefile's build, and flowd from the install tree loading it with no
# toolchain on the library path (scripts/test-template.sh).
test-template:
	$(MAKE) stage
	scripts/test-template.sh stage

# End-to-end under a real systemd in a container (e2e/system/README.md): the
# staged install, run where it is (make demo-installed), the hardening score
# and unit verification (nothing booted), then the staged tree in a booted
# container. As root.
test-system:
	$(MAKE) stage
	$(MAKE) demo-installed TREE=stage
	e2e/system/security-score.sh --stage stage
	e2e/system/run.sh --stage stage

# The Debian packages (make deb) in a clean Debian 12 root made by mmdebstrap,
# booted with systemd-nspawn, no Swift toolchain inside (e2e/package/README.md):
# install, D-Bus activation, flows as a user and as root, an upgrade from the
# previous version with sessions kept, remove and purge. As root, with the
# package mirror reachable; otherwise the container part is skipped with a
# line saying why.
test-package: deb
	e2e/package/run.sh --debs "$(DEB_DIR)"

# One after the other, even under -j: all build in .build. The system and
# package suites boot containers, which needs root: as another user they are
# skipped with a line saying so (CI runs as root); `make test-system` on its
# own insists.
test: test-unit
	$(MAKE) test-fuzz
	$(MAKE) test-desktop
	$(MAKE) test-template
	@if [ "$$(id -u)" -eq 0 ]; then $(MAKE) test-system && $(MAKE) test-package; else \
		echo "make test: NOT RUN: the system suite (real systemd in a container) needs root; run: sudo make test-system"; \
		echo "make test: NOT RUN: the package suite (the .deb in a clean Debian 12 container) needs root; run: sudo make test-package"; \
	fi

# The install layout of docs/admin.md, from the release build. Checks that the
# tree runs without the Swift toolchain (RUNPATHs, runtime libraries).
install: build
	BUILD_DIR="$(BIN_RELEASE)" DESTDIR="$(DESTDIR)" PREFIX="$(PREFIX)" scripts/install.sh

# What `make install` put in place, with the same DESTDIR and PREFIX; an edited
# flowd.conf, your flows and drop-ins, /var/lib/flowd and the flowd user stay
# (docs/admin.md, "Upgrade, roll back, remove").
uninstall:
	DESTDIR="$(DESTDIR)" PREFIX="$(PREFIX)" scripts/install.sh --uninstall

# `make install` into ./stage with PREFIX=/usr, as a package would: what the
# end-to-end suite boots.
stage:
	rm -rf stage
	$(MAKE) install DESTDIR="$(CURDIR)/stage" PREFIX=/usr

# The Debian packages flowd, flowd-plugin-dev (and flowd-gtk once the desktop
# client is in the tree), built by debian/rules from `make` and `make install`
# with dpkg-buildpackage, into $(DEB_DIR); lintian must find no error or warning.
DEB_DIR ?= $(CURDIR)/build-deb
deb:
	scripts/build-deb.sh . "$(DEB_DIR)"

# The benchmark (docs/performance.md): the release build, then flowd-bench with
# its defaults: a private bus and flowd, 10,000 stored sessions, latency
# against Peer.Ping on one connection, 8 connections, memory per session, and
# READY=1 with 100,000 stored sessions. BENCH_ARGS adds options, for example
# BENCH_ARGS="--scaling 1000,10000,100000". Takes a few minutes.
BENCH_ARGS ?=
bench: build
	"$(BIN_RELEASE)/flowd-bench" --build-dir "$(BIN_RELEASE)" --flows-dir "$(CURDIR)/flows" $(BENCH_ARGS)
	"$(BIN_RELEASE)/flowd-bench" --plugin-modes --build-dir "$(BIN_RELEASE)"

# flowd's instructions per call, counted by callgrind (docs/performance.md,
# "Counted instructions"): GetStep, SetAnswers, a message of the mixed rounds,
# against the targets; a FAIL line and a failed make when a call costs more
# than its regression budget. Needs valgrind. A few minutes.
bench-instructions: build
	"$(BIN_RELEASE)/flowd-bench" --callgrind --build-dir "$(BIN_RELEASE)" --flows-dir "$(CURDIR)/flows" $(BENCH_ARGS)

# The README's main job: a private bus, flowd with the example flows and the
# shipped plugins, and the consultation flow driven to submitted by flowctl.
demo: build
	DEMO_KEEP="$(DEMO_KEEP)" scripts/demo.sh "$(BIN_RELEASE)"

# The demo from an installed tree: its own flowd, flowctl, plugins and flows
# (TREE as DESTDIR with PREFIX=/usr; / is the machine's own install). Fails
# unless every plugin loads and every installed flow is served.
TREE ?= stage
demo-installed:
	DEMO_KEEP="$(DEMO_KEEP)" scripts/demo.sh --installed "$(TREE)"

# The desktop client (docs/desktop.md): a private bus, flowd with the example
# flows and the shipped plugins, and flowd-gtk on DEMO_FLOW (default
# consultation; Escape shows every flow). Needs a display.
DEMO_FLOW ?= consultation
demo-gtk: build
	scripts/demo-gtk.sh "$(BIN_RELEASE)" "$(DEMO_FLOW)"

# Each libFuzzer target, then the D-Bus fuzzer (against the debug flowd), for
# FUZZ_SECONDS each (docs/fuzzing.md).
fuzz: debug
	SWIFT="$(SWIFT)" Fuzz/run.sh --seconds $(FUZZ_SECONDS)
	$(PYTHON3) Fuzz/bus/fuzz.py --seconds $(FUZZ_SECONDS)

# Many clients for SOAK_SECONDS: latency percentiles, bounded memory and
# descriptors (docs/fuzzing.md).
soak: debug
	$(PYTHON3) Fuzz/bus/soak.py --seconds $(SOAK_SECONDS)

clean:
	$(SWIFT) package clean
	rm -rf Packages/FlowKit/.build Packages/PluginTemplate/.build
	rm -rf stage demo-state build-deb .cache/package-test
	if command -v dh >/dev/null; then debian/rules clean; fi
