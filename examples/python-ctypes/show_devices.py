#!/usr/bin/env python3
r"""Print the accelerators of this machine and a plan for a 70B model.

    make && python3 examples/python-ctypes/show_devices.py [OPTIONS_JSON]

OPTIONS_JSON are detection options, e.g. from the repository root (path
entries must be absolute: a relative one is invalid_argument):
"{\"sysroot\": \"$PWD/testdata/machines/dgx-h100/root\", \"path\": \"$PWD/testdata/machines/dgx-h100/bin\"}".

It uses the repository's Python package, python/ai_hwaccel (docs/python.md),
straight from the checkout: no install, and the library of build/ unless
AI_HWACCEL_LIB names another.  The ctypes calling pattern lives in the
package's loader, python/ai_hwaccel/_lib.py (CtypesBackend): every
JSON-returning function is declared restype c_void_p (c_char_p would copy
the text and drop the pointer, leaking every answer), copied with string_at
and freed with hwaccel_free_string in a finally clause; hwaccel_version is
c_char_p (static storage, never freed).
"""
import json
import os
import sys

_REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(_REPO, "python"))
_BUILT = os.path.join(_REPO, "build", "libai_hwaccel.so.0")
if "AI_HWACCEL_LIB" not in os.environ and os.path.exists(_BUILT):
    os.environ["AI_HWACCEL_LIB"] = _BUILT  # read on the first call, not at import
import ai_hwaccel  # noqa: E402

GIB = 1 << 30


def gib(v):
    return "%.1f" % (v / GIB) if isinstance(v, (int, float)) else "-"


def main(argv):
    options = json.loads(argv[1]) if len(argv) > 1 else None
    reg = ai_hwaccel.detect(options)
    print("libai_hwaccel %s (ABI %d)" % (ai_hwaccel.version(), ai_hwaccel.abi_version()))
    print("%-8s %-36s %9s %9s %7s %-13s %4s" % ("id", "name", "mem GiB", "free GiB", "GB/s", "bus id", "numa"))
    for d in reg["devices"]:
        print("%-8s %-36.36s %9s %9s %7s %-13s %4s" % (
            d["id"], d.get("name", "-"), gib(d.get("memory_bytes")), gib(d.get("memory_free_bytes")),
            d.get("memory_bandwidth_gb_s", "-"), d.get("pci_bus_id", "-"), d.get("numa_node", "-")))
    for w in reg.get("warnings", []):
        print("warning: %s/%s: %s" % (w.get("backend"), w.get("code"), w.get("message")))
    try:
        plan = ai_hwaccel.plan_sharding({"model": {"params_b": 70}, "registry": reg})
    except ai_hwaccel.HwaccelError as e:
        print("\nno plan for a 70B model: %s" % e)
        return 1
    print("\nplan for a 70B model: fits=%s strategy=%s quant=%s" % (
        plan.get("fits"), plan.get("strategy"), plan.get("quant")))
    for s in plan.get("shards", []):
        # layer_end is one past the shard's last layer: print first-last, as the CLI does.
        print("  %-8s layers %s-%s  %s GiB" % (s.get("device_id"), s.get("layer_start"), s.get("layer_end") - 1,
                                               gib(s.get("memory_bytes"))))
    for line in plan.get("explanation", []):
        print("  - " + line)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
