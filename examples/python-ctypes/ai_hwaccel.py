"""ai_hwaccel: a small ctypes binding of libai_hwaccel.

    import ai_hwaccel
    reg = ai_hwaccel.detect({"timeout_ms": 3000})
    for d in reg["devices"]:
        print(d["id"], d.get("name"), d.get("memory_bytes"))
    plan = ai_hwaccel.plan_sharding({"model": {"params_b": 70}, "registry": reg})

Every function takes a dict (or None) and returns the parsed JSON answer as a
dict; an error object becomes HwaccelError(code, message). The library is
loaded lazily on first use (not at import), so importing this module in a
pre-fork parent is safe; call it in the worker processes. Load order:
$AI_HWACCEL_LIB, the repository's build/, next to this module, then the
system's libai_hwaccel.so.<major>.

Ownership (../../include/ai_hwaccel.h): every JSON-returning function hands
back a malloc'ed char*; it is declared c_void_p here (c_char_p would copy the
text and drop the pointer, leaking it), copied with string_at and freed with
hwaccel_free_string in a finally clause.
"""

import ctypes
import json
import os
import threading

__all__ = [
    "HwaccelError",
    "abi_version",
    "detect",
    "estimate_training",
    "library_path",
    "plan_sharding",
    "suggest_quant",
    "version",
]

# The ABI this binding is written against (HWACCEL_ABI_VERSION).
ABI_VERSION = 1
_SONAME = "libai_hwaccel.so.0"

_HERE = os.path.dirname(os.path.abspath(__file__))
_REPO_BUILD = os.path.join(os.path.dirname(os.path.dirname(_HERE)), "build")


class HwaccelError(Exception):
    """An error object answered by the library: code is one of the stable
    codes of include/ai_hwaccel.h (invalid_json, invalid_argument, ...)."""

    def __init__(self, code, message):
        super().__init__("%s: %s" % (code, message))
        self.code = code
        self.message = message


def _candidates():
    env = os.environ.get("AI_HWACCEL_LIB")
    if env:
        yield env
        return
    yield os.path.join(_REPO_BUILD, _SONAME)
    yield os.path.join(_HERE, _SONAME)
    yield _SONAME  # the dynamic loader's search path


_lock = threading.Lock()
_lib = None
_path = None


def _load():
    global _lib, _path
    with _lock:
        if _lib is not None:
            return _lib
        errors = []
        for cand in _candidates():
            if os.sep in cand and not os.path.exists(cand):
                errors.append("%s: not found" % cand)
                continue
            try:
                # CDLL (not PyDLL): the GIL is released during calls.
                lib = ctypes.CDLL(cand)
            except OSError as e:
                errors.append("%s: %s" % (cand, e))
                continue
            _declare(lib)
            if lib.hwaccel_abi_version() != ABI_VERSION:
                raise OSError(
                    "%s has ABI %d, this binding needs %d" % (cand, lib.hwaccel_abi_version(), ABI_VERSION)
                )
            _lib, _path = lib, cand
            return lib
        raise OSError("cannot load libai_hwaccel: " + "; ".join(errors))


def _declare(lib):
    # Always declare restype: without it ctypes truncates pointers to int.
    for name in ("hwaccel_detect_json", "hwaccel_suggest_quant", "hwaccel_plan_sharding",
                 "hwaccel_estimate_training"):
        fn = getattr(lib, name)
        fn.argtypes = [ctypes.c_char_p]
        fn.restype = ctypes.c_void_p  # owned: freed with hwaccel_free_string
    lib.hwaccel_free_string.argtypes = [ctypes.c_void_p]
    lib.hwaccel_free_string.restype = None
    lib.hwaccel_version.argtypes = []
    lib.hwaccel_version.restype = ctypes.c_char_p  # static storage: never freed
    lib.hwaccel_abi_version.argtypes = []
    lib.hwaccel_abi_version.restype = ctypes.c_int


def _call(name, request):
    lib = _load()
    if request is None:
        arg = None
    elif isinstance(request, (bytes, str)):
        arg = request.encode("utf-8") if isinstance(request, str) else request
    else:
        arg = json.dumps(request).encode("utf-8")
    ptr = getattr(lib, name)(arg)
    if not ptr:
        raise MemoryError("%s returned NULL (out of memory)" % name)
    try:
        text = ctypes.string_at(ptr).decode("utf-8")
    finally:
        lib.hwaccel_free_string(ptr)
    answer = json.loads(text)
    err = answer.get("error") if isinstance(answer, dict) else None
    if isinstance(err, dict) and "code" in err:
        raise HwaccelError(err["code"], err.get("message", ""))
    return answer


def detect(options=None):
    """Detect the accelerators; options as in the header (dict, JSON text or None)."""
    return _call("hwaccel_detect_json", options)


def suggest_quant(request):
    """Best precision for request["model"] on the detected or given devices."""
    return _call("hwaccel_suggest_quant", request)


def plan_sharding(request):
    """How to spread request["model"] over the devices."""
    return _call("hwaccel_plan_sharding", request)


def estimate_training(request):
    """Memory needed to train or fine-tune request["model"], per device."""
    return _call("hwaccel_estimate_training", request)


def version():
    """The loaded library's version string, e.g. "0.1.0"."""
    return _load().hwaccel_version().decode("ascii")


def abi_version():
    """The loaded library's ABI version."""
    return _load().hwaccel_abi_version()


def library_path():
    """The path the library was loaded from."""
    _load()
    return _path
