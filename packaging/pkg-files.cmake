# packaging/pkg-files.cmake: writes ai_hwaccel.pc, ai_hwaccel-config.cmake and
# ai_hwaccel-config-version.cmake for `cmake --install`, from the same
# templates (packaging/*.in) and with the same @NAME@ substitutions as the
# pkg_subst rule of packaging/install.mk, so both install paths produce the
# same bytes.
#
# Runs at INSTALL time (install(CODE) in packaging/install.cmake includes it),
# because `cmake --install --prefix P` sets CMAKE_INSTALL_PREFIX only then and
# an absolute LIBDIR's distance to the prefix depends on it.  The caller sets:
#   HWACCEL_PKG_SOURCE_DIR   packaging/ (the templates)
#   HWACCEL_PKG_OUTPUT_DIR   where the generated files go (in the build tree)
#   HWACCEL_PKG_VERSION, _VERSION_MAJOR, _ABI_VERSION, _LIBFILE, _SONAME
#   HWACCEL_PKG_LIBDIR, _INCLUDEDIR, _PKGCONFIGDIR, _CMAKEDIR
#                            relative to the prefix, or absolute

# _hwaccel_pkg_abs(OUT DIR): DIR under the install prefix unless absolute,
# normalised (no "..", no "//") like `realpath -m` does in install.mk.
function(_hwaccel_pkg_abs out dir)
  if(NOT IS_ABSOLUTE "${dir}")
    set(dir "${_hwaccel_pkg_prefix}/${dir}")
  endif()
  get_filename_component(dir "${dir}" ABSOLUTE)
  set(${out} "${dir}" PARENT_SCOPE)
endfunction()

# _hwaccel_pkg_rel(OUT FROM TO): TO relative to the directory FROM, spelt as
# `realpath --relative-to` prints it: no trailing "/" (file(RELATIVE_PATH)
# of some CMake versions ends "../../" with one) and "." for the same directory.
function(_hwaccel_pkg_rel out from to)
  file(RELATIVE_PATH rel "${from}" "${to}")
  string(REGEX REPLACE "/+$" "" rel "${rel}")
  if(rel STREQUAL "")
    set(rel ".")
  endif()
  set(${out} "${rel}" PARENT_SCOPE)
endfunction()

get_filename_component(_hwaccel_pkg_prefix "${CMAKE_INSTALL_PREFIX}" ABSOLUTE)
_hwaccel_pkg_abs(_hwaccel_pkg_libdir "${HWACCEL_PKG_LIBDIR}")
_hwaccel_pkg_abs(_hwaccel_pkg_includedir "${HWACCEL_PKG_INCLUDEDIR}")
_hwaccel_pkg_abs(_hwaccel_pkg_pcdir "${HWACCEL_PKG_PKGCONFIGDIR}")
_hwaccel_pkg_abs(_hwaccel_pkg_cmakedir "${HWACCEL_PKG_CMAKEDIR}")

# The substitution table: the same names, in the same order, as pkg_subst.
set(_hwaccel_pkg_VERSION "${HWACCEL_PKG_VERSION}")
set(_hwaccel_pkg_VERSION_MAJOR "${HWACCEL_PKG_VERSION_MAJOR}")
set(_hwaccel_pkg_ABI_VERSION "${HWACCEL_PKG_ABI_VERSION}")
set(_hwaccel_pkg_LIBFILE "${HWACCEL_PKG_LIBFILE}")
set(_hwaccel_pkg_SONAME "${HWACCEL_PKG_SONAME}")
_hwaccel_pkg_rel(_hwaccel_pkg_PC_TO_PREFIX "${_hwaccel_pkg_pcdir}" "${_hwaccel_pkg_prefix}")
_hwaccel_pkg_rel(_hwaccel_pkg_CMAKE_TO_PREFIX "${_hwaccel_pkg_cmakedir}" "${_hwaccel_pkg_prefix}")
_hwaccel_pkg_rel(_hwaccel_pkg_PREFIX_TO_LIBDIR "${_hwaccel_pkg_prefix}" "${_hwaccel_pkg_libdir}")
_hwaccel_pkg_rel(_hwaccel_pkg_PREFIX_TO_INCLUDEDIR "${_hwaccel_pkg_prefix}" "${_hwaccel_pkg_includedir}")

foreach(_hwaccel_pkg_file ai_hwaccel.pc ai_hwaccel-config.cmake ai_hwaccel-config-version.cmake)
  file(READ "${HWACCEL_PKG_SOURCE_DIR}/${_hwaccel_pkg_file}.in" _hwaccel_pkg_text)
  foreach(_hwaccel_pkg_name VERSION VERSION_MAJOR ABI_VERSION LIBFILE SONAME
          PC_TO_PREFIX CMAKE_TO_PREFIX PREFIX_TO_LIBDIR PREFIX_TO_INCLUDEDIR)
    string(REPLACE "@${_hwaccel_pkg_name}@" "${_hwaccel_pkg_${_hwaccel_pkg_name}}"
           _hwaccel_pkg_text "${_hwaccel_pkg_text}")
  endforeach()
  file(WRITE "${HWACCEL_PKG_OUTPUT_DIR}/${_hwaccel_pkg_file}" "${_hwaccel_pkg_text}")
endforeach()
