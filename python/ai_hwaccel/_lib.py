"""Loading libai_hwaccel and calling it (ctypes; cffi optionally).

The library is loaded lazily, on the first call that needs it, never at
import: a process that imports ai_hwaccel and then forks (gunicorn --preload,
multiprocessing "fork") has not started the library's Go runtime yet, so each
child loads its own copy and works.  A child forked AFTER the library was
loaded gets HwaccelError("forked_child") from every call, never a hang
(include/ai_hwaccel.h, "fork()").

Where the library comes from, first match wins:
  1. the AI_HWACCEL_LIB environment variable: a path to the library file, or
     to a directory that holds libai_hwaccel.so.<major>; when it is set,
     nothing else is tried (a missing or wrong file is an ImportError);
  2. libai_hwaccel.so.<major> inside this package (a wheel that bundles it);
  3. libai_hwaccel.so.<major> through the dynamic loader (ld.so.cache,
     LD_LIBRARY_PATH), i.e. a `make install` into a system prefix.

Two call layers implement the same three methods (text in, text out):
ctypes (always available) and cffi ABI mode (only when `import cffi` works).
The backend is chosen by AI_HWACCEL_BACKEND=ctypes|cffi or set_backend()
before the first call; the default is ctypes.
"""

import ctypes
import os
import threading

# The SONAME major version and ABI this binding speaks (include/ai_hwaccel.h:
# HWACCEL_VERSION_MAJOR and HWACCEL_ABI_VERSION; a test keeps them in step).
SONAME = "libai_hwaccel.so.0"
ABI_VERSION = 1

# The prototypes fed to cffi, as in include/ai_hwaccel.h (a test compares).
CDEF = """
const char *hwaccel_version(void);
int hwaccel_abi_version(void);
void hwaccel_free_string(char *s);
char *hwaccel_detect_json(const char *options_json);
char *hwaccel_suggest_quant(const char *request_json);
char *hwaccel_plan_sharding(const char *request_json);
char *hwaccel_estimate_training(const char *request_json);
char *hwaccel_models_json(const char *request_json);
char *hwaccel_fit_json(const char *request_json);
char *hwaccel_rent_json(const char *request);
"""

# The functions that return an owned JSON string.
JSON_FUNCTIONS = (
    "hwaccel_detect_json",
    "hwaccel_suggest_quant",
    "hwaccel_plan_sharding",
    "hwaccel_estimate_training",
    "hwaccel_models_json",
    "hwaccel_fit_json",
    # rent (issue 26)
    "hwaccel_rent_json",
)

_HERE = os.path.dirname(os.path.abspath(__file__))


def candidates():
    """The library paths or names to try, in order (see the module doc).
    AI_HWACCEL_LIB, when set, is the only one: a library the user named that
    cannot be loaded is an error, never a reason to load another copy."""
    found = []
    env = os.environ.get("AI_HWACCEL_LIB")
    if env:
        path = os.path.join(env, SONAME) if os.path.isdir(env) else env
        # An absolute path: dlopen must not search for a bare name.
        return [os.path.abspath(path)]
    bundled = os.path.join(_HERE, SONAME)
    if os.path.exists(bundled):
        found.append(bundled)
    found.append(SONAME)
    return found


class CtypesBackend:
    """Calls through ctypes.CDLL (which releases the GIL during each call).

    Every JSON function has restype c_void_p, never c_char_p: c_char_p copies
    the bytes and drops the pointer, leaking every answer."""

    name = "ctypes"

    def __init__(self, path):
        self.path = path
        lib = ctypes.CDLL(path)
        lib.hwaccel_version.argtypes = []
        lib.hwaccel_version.restype = ctypes.c_char_p  # static storage
        lib.hwaccel_abi_version.argtypes = []
        lib.hwaccel_abi_version.restype = ctypes.c_int
        lib.hwaccel_free_string.argtypes = [ctypes.c_void_p]
        lib.hwaccel_free_string.restype = None
        for fn in JSON_FUNCTIONS:
            f = getattr(lib, fn)
            f.argtypes = [ctypes.c_char_p]
            f.restype = ctypes.c_void_p
        self._lib = lib

    def version(self):
        return self._lib.hwaccel_version().decode("utf-8")

    def abi_version(self):
        return self._lib.hwaccel_abi_version()

    def call(self, fn, arg):
        """Calls a JSON function with arg (bytes or None); returns the text."""
        ptr = getattr(self._lib, fn)(arg)
        if not ptr:
            raise MemoryError(fn + " returned NULL (out of memory)")
        try:
            return ctypes.string_at(ptr).decode("utf-8")
        finally:
            self._lib.hwaccel_free_string(ptr)


class CffiBackend:
    """Calls through cffi in ABI mode (no compiler needed)."""

    name = "cffi"

    def __init__(self, path):
        import cffi  # noqa: PLC0415 - optional dependency, imported on demand

        self.path = path
        self._ffi = cffi.FFI()
        self._ffi.cdef(CDEF)
        self._lib = self._ffi.dlopen(path)

    def version(self):
        return self._ffi.string(self._lib.hwaccel_version()).decode("utf-8")

    def abi_version(self):
        return self._lib.hwaccel_abi_version()

    def call(self, fn, arg):
        ptr = getattr(self._lib, fn)(self._ffi.NULL if arg is None else arg)
        if ptr == self._ffi.NULL:
            raise MemoryError(fn + " returned NULL (out of memory)")
        try:
            return self._ffi.string(ptr).decode("utf-8")
        finally:
            self._lib.hwaccel_free_string(ptr)


BACKENDS = {"ctypes": CtypesBackend, "cffi": CffiBackend}

_lock = threading.Lock()
_backend = None
_backend_name = None


def set_backend(name):
    """Chooses "ctypes" or "cffi" for the calls to come.  Loading happens on
    the next call; switching after a call loads the library again through the
    other binding (same process-wide library: dlopen returns the same copy)."""
    global _backend, _backend_name
    if name not in BACKENDS:
        raise ValueError("unknown backend %r (want one of %s)" % (name, ", ".join(sorted(BACKENDS))))
    with _lock:
        _backend_name = name
        _backend = None


def backend():
    """The loaded backend; loads the library on first use (thread-safe)."""
    global _backend
    b = _backend
    if b is not None:
        return b
    with _lock:
        if _backend is None:
            name = _backend_name or os.environ.get("AI_HWACCEL_BACKEND") or "ctypes"
            if name not in BACKENDS:
                raise ValueError("AI_HWACCEL_BACKEND=%r: want ctypes or cffi" % name)
            _backend = _load(BACKENDS[name])
        return _backend


def _load(cls):
    errors = []
    env = os.environ.get("AI_HWACCEL_LIB")
    for path in candidates():
        try:
            b = cls(path)
            abi = b.abi_version()
        except OSError as e:  # not found / not loadable: try the next one
            if env:
                raise ImportError("AI_HWACCEL_LIB=%s: cannot load %s: %s" % (env, path, e)) from e
            errors.append("%s: %s" % (path, e))
            continue
        except AttributeError as e:  # a shared library, but not this one
            raise ImportError(
                "%s is not libai_hwaccel (a function of include/ai_hwaccel.h is missing: %s)%s"
                % (path, e, " (named by AI_HWACCEL_LIB)" if env else "")
            ) from e
        if abi != ABI_VERSION:
            raise ImportError(
                "%s has ABI version %d; this ai_hwaccel package speaks ABI %d"
                % (path, abi, ABI_VERSION)
            )
        return b
    raise ImportError(
        "libai_hwaccel not found; set AI_HWACCEL_LIB to the library path. Tried:\n  " + "\n  ".join(errors)
    )
