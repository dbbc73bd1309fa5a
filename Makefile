# Makefile of libai_hwaccel.
#
#   make               build/libai_hwaccel.so.X.Y.Z (+ .so.X and .so links) and build/include/
#   make test          go vet + go test, C tests (CMake + ctest, incl. valgrind and cgocheck2
#                      runs), the C tests built with ASan/UBSan, symbol check, and test-packaging
#                      (install trees, C++, Python tests (python/tests), Rust when cargo exists)
#   make test-asan     only the C tests built with -fsanitize=address,undefined
#   make test-packaging  install into temporary prefixes (make and cmake --install) and build
#                      and run pkg-config/find_package consumers, C++, Python package, Rust
#   make run           build the CLI; print this machine's devices and a plan for a 70B model
#   make example       the same through the C ABI (examples/c)
#   make bench         C benchmark harness (bench/) and docs/performance.md figures
#   make wheel         build/wheel/*.whl: the Python package with the library inside
#   make install       PREFIX=/usr/local: library + links, headers, pkg-config, CMake package,
#                      the ai-hwaccel command in bin/ (packaging/install.mk; `cmake --install`
#                      installs the same tree)
#   make clean

SHELL := /bin/bash
GO ?= go
CMAKE ?= cmake
CTEST ?= ctest
PYTHON ?= python3

# The version lives in one place: the public header.
HEADER := include/ai_hwaccel.h
hdr_define = $(shell sed -n 's/^\#define $(1) \([0-9][0-9]*\)$$/\1/p' $(HEADER))
VERSION_MAJOR := $(call hdr_define,HWACCEL_VERSION_MAJOR)
VERSION_MINOR := $(call hdr_define,HWACCEL_VERSION_MINOR)
VERSION_PATCH := $(call hdr_define,HWACCEL_VERSION_PATCH)
VERSION := $(VERSION_MAJOR).$(VERSION_MINOR).$(VERSION_PATCH)

BUILD := build
SONAME := libai_hwaccel.so.$(VERSION_MAJOR)
LIBFILE := libai_hwaccel.so.$(VERSION)
LIB := $(BUILD)/$(LIBFILE)
# cgo's generated header (prototypes of the Go exports), kept for the
# header/library signature check in scripts/check-symbols.sh.
CGO_HEADER := $(BUILD)/gen/libai_hwaccel_cgo.h

# Test-only libraries: the panic hook build and the GOEXPERIMENT=cgocheck2 build.
TESTHOOKS_LIB := $(BUILD)/test/libai_hwaccel_testhooks.so
CGOCHECK2_LIB := $(BUILD)/cgocheck2/$(SONAME)

CMAKE_DIR := $(BUILD)/cmake
CMAKE_ASAN_DIR := $(BUILD)/cmake-asan

# -trimpath: no build paths in panics; -s -w: no symbol table or DWARF.
# The version script must be given by absolute path: the external linker runs
# in a temporary directory.
shared_ldflags = -s -w -extldflags=-Wl,--version-script=$(CURDIR)/$(1),-soname,$(2)
GO_SHARED := $(GO) build -buildmode=c-shared -trimpath

.PHONY: all lib header cli run example testlibs test go-test scripts-test c-test python-test check-symbols \
        test-asan run clean install uninstall FORCE

all: lib header cli

# Always hand the build to go: its cache makes a no-op rebuild cheap, and
# make cannot see which Go sources under internal/ changed.
lib: $(LIB)
$(LIB): FORCE
	@mkdir -p $(BUILD)/gen
	$(GO_SHARED) -ldflags "$(call shared_ldflags,capi/exports.map,$(SONAME))" -o $@ ./capi
	@mv -f $(BUILD)/libai_hwaccel.so.$(VERSION_MAJOR).$(VERSION_MINOR).h $(CGO_HEADER)
	ln -sf $(LIBFILE) $(BUILD)/$(SONAME)
	ln -sf $(SONAME) $(BUILD)/libai_hwaccel.so

header: $(BUILD)/include/ai_hwaccel.h
$(BUILD)/include/ai_hwaccel.h: $(HEADER)
	@mkdir -p $(dir $@)
	cp $< $@

testlibs: $(TESTHOOKS_LIB) $(CGOCHECK2_LIB)
$(TESTHOOKS_LIB): FORCE
	@mkdir -p $(dir $@)
	$(GO_SHARED) -tags hwaccel_testhooks \
	  -ldflags "$(call shared_ldflags,capi/exports_testhooks.map,libai_hwaccel_testhooks.so)" -o $@ ./capi
	@rm -f $(basename $@).h
$(CGOCHECK2_LIB): FORCE
	@mkdir -p $(dir $@)
	GOEXPERIMENT=cgocheck2 $(GO_SHARED) -ldflags "$(call shared_ldflags,capi/exports.map,$(SONAME))" -o $@ ./capi
	@rm -f $(basename $@).h

# ---------------------------------------------------------------------------
# Tests
# ---------------------------------------------------------------------------

# The tools `make test` needs beyond Go, and the Debian/Ubuntu package of
# each. A missing one stops `make test` before anything is built, with the
# command that installs it (rather than "cmake: command not found" minutes in).
TEST_TOOLS := cmake:cmake ctest:cmake valgrind:valgrind pkg-config:pkg-config cc:gcc c++:g++ $(PYTHON):python3
missing_test_tools = $(strip $(foreach t,$(TEST_TOOLS),$(if $(shell command -v $(firstword $(subst :, ,$(t))) 2>/dev/null),,$(t))))
missing_test_pkgs = $(sort $(foreach t,$(missing_test_tools),$(lastword $(subst :, ,$(t)))))

ifneq ($(filter test check-tools,$(MAKECMDGOALS)),)
ifneq ($(missing_test_tools),)
$(error make test needs $(foreach t,$(missing_test_tools),$(firstword $(subst :, ,$(t)))), not found on PATH. Install: sudo apt-get install -y $(missing_test_pkgs))
endif
endif

.PHONY: check-tools
check-tools:
	@echo "check-tools: $(foreach t,$(TEST_TOOLS),$(firstword $(subst :, ,$(t)))) found"

test: check-tools all testlibs test-packaging
	$(MAKE) go-test
	$(MAKE) scripts-test
	$(MAKE) c-test
	$(MAKE) test-asan
	$(MAKE) check-symbols

# The engine also builds for 32-bit Linux (armv7 boards, i386), where int
# is 32 bits wide and statfs's f_type an int32: vet there too (cgo is off
# when cross-compiling, so capi's cgo glue is left out).
VET_32BIT_ARCHS := 386 arm
# The engine and CLI also build on macOS (the apple backend; docs/comparison.md):
# vet there too, so a Linux-only name in a file every GOOS builds is caught here
# (inline.go's pathCgroup broke the darwin build unnoticed).
VET_OTHER_OS := darwin/arm64 darwin/amd64

go-test:
	$(GO) vet ./...
	$(foreach a,$(VET_32BIT_ARCHS),GOARCH=$(a) $(GO) vet ./... &&) true
	$(foreach p,$(VET_OTHER_OS),GOOS=$(word 1,$(subst /, ,$(p))) GOARCH=$(word 2,$(subst /, ,$(p))) $(GO) vet ./... &&) true
	$(GO) test ./...

c-test: all testlibs
	$(CMAKE) -S . -B $(CMAKE_DIR) -DCMAKE_BUILD_TYPE=Debug -DHWACCEL_TESTS=ON -DHWACCEL_SANITIZE=OFF
	$(CMAKE) --build $(CMAKE_DIR) -j
	cd $(CMAKE_DIR) && $(CTEST) --output-on-failure --no-tests=error

# The device-run converter's tests (scripts/device/test_convert.py: the real
# H200 captures turned into calibration rows); standard library only.
scripts-test:
	$(PYTHON) -m unittest discover -s scripts/device -p 'test_*.py'

# The Python package's suite (python/tests), run by `make test` once, through
# test-packaging (packaging/install.mk).
python-test: test-pypkg

check-symbols: all
	scripts/check-symbols.sh

test-asan: all testlibs
	$(CMAKE) -S . -B $(CMAKE_ASAN_DIR) -DCMAKE_BUILD_TYPE=Debug -DHWACCEL_TESTS=ON -DHWACCEL_SANITIZE=ON
	$(CMAKE) --build $(CMAKE_ASAN_DIR) -j
	cd $(CMAKE_ASAN_DIR) && $(CTEST) --output-on-failure --no-tests=error

# ---------------------------------------------------------------------------
# Run: detect this machine, print its devices and a plan for a 70B model with
# the CLI (cmd/ai-hwaccel, the same engine as the library). `make example`
# does the same through the C ABI (examples/c).
# ---------------------------------------------------------------------------

RUN_MODEL ?= llama-3-70b

# The command (cmd/ai-hwaccel): part of `all`, installed in bin/ by make
# install and cmake --install.
cli: FORCE
	$(GO) build -trimpath -o $(BUILD)/ai-hwaccel ./cmd/ai-hwaccel

run: all cli
	$(BUILD)/ai-hwaccel --table
	@echo
	$(BUILD)/ai-hwaccel plan --model $(RUN_MODEL)

example: all
	$(CMAKE) -S . -B $(BUILD)/cmake-run -DCMAKE_BUILD_TYPE=Release -DHWACCEL_TESTS=OFF
	$(CMAKE) --build $(BUILD)/cmake-run --target show_devices -j
	$(BUILD)/cmake-run/examples/c/show_devices

clean:
	rm -rf $(BUILD)

FORCE:

# ---------------------------------------------------------------------------
# Python wheel: build/wheel/ai_hwaccel-<version>-py3-none-<platform>.whl with
# the library and the ai-hwaccel command inside the package
# (scripts/build-wheel.py through python/_build/backend.py, standard library
# only: builds offline). `pip install --no-index <wheel>` in any virtual
# environment; `import ai_hwaccel` then loads its own copy, no variable
# needed, and the console script `ai-hwaccel` runs the bundled command.
# Tested by python/tests (Packaging.test_wheel_in_fresh_venv).
# ---------------------------------------------------------------------------

.PHONY: wheel
wheel: all
	rm -f $(BUILD)/wheel/*.whl
	$(PYTHON) scripts/build-wheel.py --lib $(LIB) --cli $(BUILD)/ai-hwaccel --out $(BUILD)/wheel

# ---------------------------------------------------------------------------
# Install (library, headers, pkg-config and CMake package) and the tests of
# what hosts consume (C/C++/Python/Rust): packaging/install.mk.
# ---------------------------------------------------------------------------

include packaging/install.mk

# ---------------------------------------------------------------------------
# Benchmarks (docs/performance.md): the C harness in bench/ times the exports
# of the library built by `all`. Go benchmarks: go test -run xxx -bench . ./internal/...
# ---------------------------------------------------------------------------

.PHONY: bench
bench: all
	$(MAKE) -C bench run
