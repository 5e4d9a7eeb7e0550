# muEval: `make run` starts the capture server, `make test` runs every test.
# Both install what is missing first (Debian/Ubuntu packages through apt), so they work on a
# machine that has only the Swift toolchain.

SWIFT        ?= swift
DATA_DIR     ?= ./mueval-data
ARGS         ?=
# Build-time libraries, and the tools the tests drive (python3's plistlib is the independent
# plist writer of the tests; avahi and dbus serve the Zeroconf tests, iproute2 their namespaces).
APT_PACKAGES := libsqlite3-dev sqlite3 libavahi-client-dev libavahi-common-dev avahi-daemon avahi-utils \
                dbus iproute2 python3 pkg-config netcat-openbsd zlib1g-dev

SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: deps build release run test clean

## deps: install the system packages that are missing (apt)
deps:
	@missing=$$(for p in $(APT_PACKAGES); do dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q '^install ok installed' || echo $$p; done); \
	if [ -n "$$missing" ]; then \
		echo "installing:" $$missing; \
		$(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $$missing; \
	fi

## build: debug build of everything
build: deps
	$(SWIFT) build

## release: optimised build of the executables
release: deps
	$(SWIFT) build -c release

## run: start muevald in the foreground with embedded defaults (data in ./mueval-data)
run: release
	@echo "muevald: data in $(DATA_DIR); muevalctl is $$($(SWIFT) build -c release --show-bin-path)/muevalctl"
	$$($(SWIFT) build -c release --show-bin-path)/muevald --data-dir $(DATA_DIR) $(ARGS)

## test: build and run every test
test: deps
	$(SWIFT) build --build-tests
	$(SWIFT) test --skip-build

clean:
	rm -rf .build
