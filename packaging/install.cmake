# packaging/install.cmake: install rules of the CMake project (included by the
# top CMakeLists.txt), the CMake twin of packaging/install.mk.
#
#   cmake -S . -B build/cmake-install -DHWACCEL_TESTS=OFF
#   cmake --install build/cmake-install [--prefix /usr/local]     (DESTDIR=... honoured)
#
# installs exactly the tree of `make install PREFIX=...`: the same files with
# the same modes, the same links, and the .pc and CMake package files generated
# from the same templates (packaging/*.in) with the same substitutions
# (packaging/pkg-files.cmake), so they are relocatable too.  The library is the
# one `make` built (HWACCEL_LIB, resolved to its real file); nothing needs
# `cmake --build` before `cmake --install`.  packaging/test-install.sh checks
# the two trees are identical.
#
# Directories (relative to the prefix, or absolute), named as GNUInstallDirs
# names them but defaulting to lib and include like `make install`, not to
# GNUInstallDirs' lib64 or lib/<multiarch>:
#   CMAKE_INSTALL_LIBDIR          lib       (make: LIBDIR)
#   CMAKE_INSTALL_INCLUDEDIR      include   (make: INCLUDEDIR)
#   CMAKE_INSTALL_BINDIR          bin       (make: BINDIR)
#   HWACCEL_INSTALL_PKGCONFIGDIR  <libdir>/pkgconfig          (make: PKGCONFIGDIR)
#   HWACCEL_INSTALL_CMAKEDIR      <libdir>/cmake/ai_hwaccel   (make: CMAKEPKGDIR)
# There is no uninstall target: install_manifest.txt in the build directory
# lists what was installed (or use `make uninstall`).

# STRING, not PATH: a PATH entry given as -DCMAKE_INSTALL_LIBDIR=lib64 (no
# type) would be made absolute against the current directory.
set(CMAKE_INSTALL_LIBDIR lib CACHE STRING
    "Library, pkgconfig/ and cmake/ directory, relative to the prefix or absolute (make install: LIBDIR)")
set(CMAKE_INSTALL_INCLUDEDIR include CACHE STRING
    "Header directory, relative to the prefix or absolute (make install: INCLUDEDIR)")
set(CMAKE_INSTALL_BINDIR bin CACHE STRING
    "Directory of the ai-hwaccel command, relative to the prefix or absolute (make install: BINDIR)")
set(HWACCEL_INSTALL_PKGCONFIGDIR "" CACHE STRING
    "Directory of ai_hwaccel.pc (empty: <CMAKE_INSTALL_LIBDIR>/pkgconfig)")
set(HWACCEL_INSTALL_CMAKEDIR "" CACHE STRING
    "Directory of the CMake package files (empty: <CMAKE_INSTALL_LIBDIR>/cmake/ai_hwaccel)")

set(_hwaccel_pkgconfigdir "${HWACCEL_INSTALL_PKGCONFIGDIR}")
if(_hwaccel_pkgconfigdir STREQUAL "")
  set(_hwaccel_pkgconfigdir "${CMAKE_INSTALL_LIBDIR}/pkgconfig")
endif()
set(_hwaccel_cmakedir "${HWACCEL_INSTALL_CMAKEDIR}")
if(_hwaccel_cmakedir STREQUAL "")
  set(_hwaccel_cmakedir "${CMAKE_INSTALL_LIBDIR}/cmake/ai_hwaccel")
endif()

# The version lives in the public header, read with the regex of the
# Makefile's hdr_define.
function(_hwaccel_hdr_define out name)
  file(STRINGS "${HWACCEL_ROOT}/include/ai_hwaccel.h" line REGEX "^#define ${name} [0-9]+$")
  string(REGEX REPLACE ".* ([0-9]+)$" "\\1" value "${line}")
  if(NOT value MATCHES "^[0-9]+$")
    message(FATAL_ERROR "include/ai_hwaccel.h: no '#define ${name} <number>'")
  endif()
  set(${out} "${value}" PARENT_SCOPE)
endfunction()
_hwaccel_hdr_define(_hwaccel_minor HWACCEL_VERSION_MINOR)
_hwaccel_hdr_define(_hwaccel_patch HWACCEL_VERSION_PATCH)
_hwaccel_hdr_define(_hwaccel_abi HWACCEL_ABI_VERSION)
set(_hwaccel_version "${HWACCEL_VERSION_MAJOR}.${_hwaccel_minor}.${_hwaccel_patch}")
set(_hwaccel_libfile "libai_hwaccel.so.${_hwaccel_version}")

# `install -d` and `install -m` modes of install.mk.
if(NOT DEFINED CMAKE_INSTALL_DEFAULT_DIRECTORY_PERMISSIONS)
  set(CMAKE_INSTALL_DEFAULT_DIRECTORY_PERMISSIONS
      OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_EXECUTE WORLD_READ WORLD_EXECUTE)
endif()
set(_hwaccel_mode_0755 OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_EXECUTE WORLD_READ WORLD_EXECUTE)
set(_hwaccel_mode_0644 OWNER_READ OWNER_WRITE GROUP_READ WORLD_READ)

set(_hwaccel_stage "${CMAKE_CURRENT_BINARY_DIR}/packaging")

# The library: the real file behind HWACCEL_LIB (the SONAME link make made),
# installed under its versioned name.
get_filename_component(_hwaccel_lib_real "${HWACCEL_LIB}" REALPATH)
install(FILES "${_hwaccel_lib_real}" DESTINATION "${CMAKE_INSTALL_LIBDIR}"
        RENAME "${_hwaccel_libfile}" PERMISSIONS ${_hwaccel_mode_0755})

# The SONAME and link-time links, made here and copied as links by install.
file(MAKE_DIRECTORY "${_hwaccel_stage}/links")
file(REMOVE "${_hwaccel_stage}/links/${HWACCEL_SONAME}" "${_hwaccel_stage}/links/libai_hwaccel.so")
file(CREATE_LINK "${_hwaccel_libfile}" "${_hwaccel_stage}/links/${HWACCEL_SONAME}" SYMBOLIC)
file(CREATE_LINK "${HWACCEL_SONAME}" "${_hwaccel_stage}/links/libai_hwaccel.so" SYMBOLIC)
install(FILES "${_hwaccel_stage}/links/${HWACCEL_SONAME}" "${_hwaccel_stage}/links/libai_hwaccel.so"
        DESTINATION "${CMAKE_INSTALL_LIBDIR}")

install(FILES "${HWACCEL_ROOT}/include/ai_hwaccel.h" "${HWACCEL_ROOT}/include/ai_hwaccel.hpp"
        DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}" PERMISSIONS ${_hwaccel_mode_0644})

# The .pc and CMake package files, generated at install time (the prefix is
# known only then) into the build tree, then installed like any file.
install(CODE "
set(HWACCEL_PKG_SOURCE_DIR [==[${HWACCEL_ROOT}/packaging]==])
set(HWACCEL_PKG_OUTPUT_DIR [==[${_hwaccel_stage}]==])
set(HWACCEL_PKG_VERSION [==[${_hwaccel_version}]==])
set(HWACCEL_PKG_VERSION_MAJOR [==[${HWACCEL_VERSION_MAJOR}]==])
set(HWACCEL_PKG_ABI_VERSION [==[${_hwaccel_abi}]==])
set(HWACCEL_PKG_LIBFILE [==[${_hwaccel_libfile}]==])
set(HWACCEL_PKG_SONAME [==[${HWACCEL_SONAME}]==])
set(HWACCEL_PKG_LIBDIR [==[${CMAKE_INSTALL_LIBDIR}]==])
set(HWACCEL_PKG_INCLUDEDIR [==[${CMAKE_INSTALL_INCLUDEDIR}]==])
set(HWACCEL_PKG_PKGCONFIGDIR [==[${_hwaccel_pkgconfigdir}]==])
set(HWACCEL_PKG_CMAKEDIR [==[${_hwaccel_cmakedir}]==])
include([==[${HWACCEL_ROOT}/packaging/pkg-files.cmake]==])
")
install(FILES "${_hwaccel_stage}/ai_hwaccel.pc"
        DESTINATION "${_hwaccel_pkgconfigdir}" PERMISSIONS ${_hwaccel_mode_0644})
install(FILES "${_hwaccel_stage}/ai_hwaccel-config.cmake" "${_hwaccel_stage}/ai_hwaccel-config-version.cmake"
        DESTINATION "${_hwaccel_cmakedir}" PERMISSIONS ${_hwaccel_mode_0644})

# The command, built by make next to the library (`make cli`, part of
# `make all`). OPTIONAL: a tree whose make built only the library still
# installs; test-install.sh checks both trees hold it after `make`.
install(PROGRAMS "${HWACCEL_LIB_DIR}/ai-hwaccel" DESTINATION "${CMAKE_INSTALL_BINDIR}" OPTIONAL)
