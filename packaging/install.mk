# packaging/install.mk: installation and the tests of what hosts consume.
# Included by the top Makefile, which defines VERSION*, LIB, LIBFILE, SONAME,
# HEADER and BUILD.
#
#   make install   [PREFIX=/usr/local] [LIBDIR=...] [INCLUDEDIR=...] [DESTDIR=...]
#       lib/libai_hwaccel.so.X.Y.Z, the .so.X (SONAME) and .so (link-time) links,
#       include/ai_hwaccel.h and include/ai_hwaccel.hpp,
#       lib/pkgconfig/ai_hwaccel.pc,
#       lib/cmake/ai_hwaccel/ai_hwaccel-config.cmake and -config-version.cmake,
#       bin/ai-hwaccel (the command, built by `make cli`, part of `all`).
#     The .pc and CMake files hold no absolute path (relative to their own
#     directory), so the tree can be staged with DESTDIR or moved after install.
#     `cmake --install <build dir> [--prefix P]` of the top CMakeLists.txt
#     installs the identical tree (packaging/install.cmake: same templates,
#     same substitutions as pkg_subst below; keep the two in step).
#   make uninstall (same variables)
#   make test-packaging   everything below (part of `make test`)
#     test-install   install into a temporary prefix with make and with
#                    cmake --install, check both trees are identical, move
#                    them, and build and run against each a C consumer found
#                    by pkg-config and one found by CMake
#                    find_package(ai_hwaccel 0.1 CONFIG REQUIRED)
#     test-cpp       the C++ header's test and example (-Werror, ASan)
#     test-pypkg     the Python package's unittest suite (ctypes and cffi)
#     test-rust      the Rust crate's `cargo test --offline` (skipped without cargo)

PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
LIBDIR ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig
CMAKEPKGDIR ?= $(LIBDIR)/cmake/ai_hwaccel

ABI_VERSION := $(call hdr_define,HWACCEL_ABI_VERSION)
HEADER_HPP := include/ai_hwaccel.hpp

# relpath FROM TO: TO relative to the directory FROM (paths need not exist).
relpath = $(shell realpath -m --relative-to='$(1)' '$(2)')

# Substitutions shared by the generated packaging files (packaging/pkg-files.cmake
# makes the same ones for cmake --install).
pkg_subst = sed -e 's|@VERSION@|$(VERSION)|g' \
                -e 's|@VERSION_MAJOR@|$(VERSION_MAJOR)|g' \
                -e 's|@ABI_VERSION@|$(ABI_VERSION)|g' \
                -e 's|@LIBFILE@|$(LIBFILE)|g' \
                -e 's|@SONAME@|$(SONAME)|g' \
                -e 's|@PC_TO_PREFIX@|$(call relpath,$(PKGCONFIGDIR),$(PREFIX))|g' \
                -e 's|@CMAKE_TO_PREFIX@|$(call relpath,$(CMAKEPKGDIR),$(PREFIX))|g' \
                -e 's|@PREFIX_TO_LIBDIR@|$(call relpath,$(PREFIX),$(LIBDIR))|g' \
                -e 's|@PREFIX_TO_INCLUDEDIR@|$(call relpath,$(PREFIX),$(INCLUDEDIR))|g'

install: all
	install -d $(DESTDIR)$(LIBDIR) $(DESTDIR)$(INCLUDEDIR) $(DESTDIR)$(PKGCONFIGDIR) $(DESTDIR)$(CMAKEPKGDIR) $(DESTDIR)$(BINDIR)
	install -m 0755 $(BUILD)/ai-hwaccel $(DESTDIR)$(BINDIR)/ai-hwaccel
	install -m 0755 $(LIB) $(DESTDIR)$(LIBDIR)/$(LIBFILE)
	ln -sfn $(LIBFILE) $(DESTDIR)$(LIBDIR)/$(SONAME)
	ln -sfn $(SONAME) $(DESTDIR)$(LIBDIR)/libai_hwaccel.so
	install -m 0644 $(HEADER) $(HEADER_HPP) $(DESTDIR)$(INCLUDEDIR)/
	$(pkg_subst) packaging/ai_hwaccel.pc.in > $(DESTDIR)$(PKGCONFIGDIR)/ai_hwaccel.pc
	$(pkg_subst) packaging/ai_hwaccel-config.cmake.in > $(DESTDIR)$(CMAKEPKGDIR)/ai_hwaccel-config.cmake
	$(pkg_subst) packaging/ai_hwaccel-config-version.cmake.in > $(DESTDIR)$(CMAKEPKGDIR)/ai_hwaccel-config-version.cmake
	chmod 0644 $(DESTDIR)$(PKGCONFIGDIR)/ai_hwaccel.pc $(DESTDIR)$(CMAKEPKGDIR)/ai_hwaccel-config*.cmake

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/ai-hwaccel \
	      $(DESTDIR)$(LIBDIR)/$(LIBFILE) $(DESTDIR)$(LIBDIR)/$(SONAME) \
	      $(DESTDIR)$(LIBDIR)/libai_hwaccel.so \
	      $(DESTDIR)$(INCLUDEDIR)/ai_hwaccel.h $(DESTDIR)$(INCLUDEDIR)/ai_hwaccel.hpp \
	      $(DESTDIR)$(PKGCONFIGDIR)/ai_hwaccel.pc \
	      $(DESTDIR)$(CMAKEPKGDIR)/ai_hwaccel-config.cmake \
	      $(DESTDIR)$(CMAKEPKGDIR)/ai_hwaccel-config-version.cmake
	-rmdir $(DESTDIR)$(CMAKEPKGDIR) 2>/dev/null

# ---------------------------------------------------------------------------
# Tests of what hosts consume
# ---------------------------------------------------------------------------

CXX ?= g++
CARGO ?= cargo
CPP_BUILD := $(BUILD)/cpp
CPP_FLAGS := -std=c++17 -Wall -Wextra -Werror -g -Iinclude
CPP_ASAN := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
CPP_LINK := -L$(BUILD) -lai_hwaccel -Wl,-rpath,$(CURDIR)/$(BUILD)

.PHONY: test-packaging test-install test-cpp test-pypkg test-rust

test-packaging: test-install test-cpp test-pypkg test-rust

# -o: the library is up to date (built by `all`); the nested `make install`
# must not rebuild it under tests that are running beside it (make -j).
# The recipe does not name $(MAKE) itself: make runs a line that does even
# under `make -n` ("How the MAKE Variable Works" in the GNU make manual), and
# this one installs and builds for real, so `make -n test` ran it
# (TestMakeDryRunRunsNoScript in internal/repocheck). The nested make is
# then not a recursive make of this one: it gets the flags without -j and
# the jobserver, whose descriptors it would not inherit ("jobserver
# unavailable" warning), and installs serially.
test_install_make = $(MAKE)
test-install: all
	MAKEFLAGS="$(filter-out -j% --jobserver-auth=% --jobserver-fds=%,$(MAKEFLAGS))" \
	  MAKE="$(test_install_make) -o $(LIB) -o cli" packaging/test-install.sh

test-cpp: all
	@mkdir -p $(CPP_BUILD)
	$(CXX) $(CPP_FLAGS) $(CPP_ASAN) -o $(CPP_BUILD)/test_hpp tests/cpp/test_hpp.cpp $(CPP_LINK)
	$(CXX) $(CPP_FLAGS) -o $(CPP_BUILD)/plan_model examples/cpp/plan_model.cpp $(CPP_LINK)
	HWACCEL_SOURCE_DIR=$(CURDIR) $(CPP_BUILD)/test_hpp
	$(CPP_BUILD)/plan_model --sysroot testdata/machines/cpu-only/root --params-b 8 --engine llama.cpp | grep -q '"fits":true'
	@# A wrong command line is a usage error (exit 2, what is wrong on stderr), not an
	@# uncaught std::stod exception (abort) or a trailing flag silently dropped.
	@for args in "--params-b abc" "--params-b 8x" "--params-b nan" "--sysroot" "--model"; do \
	  status=0; $(CPP_BUILD)/plan_model $$args >/dev/null 2>$(CPP_BUILD)/plan_model.err || status=$$?; \
	  if [ $$status -ne 2 ] || ! grep -q 'plan_model: ' $(CPP_BUILD)/plan_model.err; then \
	    echo "test-cpp: plan_model $$args: exit $$status, stderr: $$(cat $(CPP_BUILD)/plan_model.err)"; exit 1; fi; \
	done

test-pypkg: all
	cd python && AI_HWACCEL_LIB=$(CURDIR)/$(BUILD)/$(SONAME) $(PYTHON) -m unittest discover -s tests -t . -v

test-rust: all
	@if command -v $(CARGO) >/dev/null 2>&1; then \
	  cd examples/rust && HWACCEL_LIB_DIR=$(CURDIR)/$(BUILD) $(CARGO) test --offline && \
	  HWACCEL_LIB_DIR=$(CURDIR)/$(BUILD) $(CARGO) run --offline --quiet --example show_devices -- ../../testdata/machines/cpu-only/root | grep -q '"fits":true'; \
	else \
	  echo "test-rust: SKIPPED: cargo not found (install Rust to run examples/rust's tests)"; \
	fi
