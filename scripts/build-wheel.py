#!/usr/bin/env python3
"""Builds the ai-hwaccel wheel with the shared library inside the package.

    scripts/build-wheel.py --lib build/libai_hwaccel.so.0 --out build/wheel

Only the standard library is used, so the wheel builds with no network and
no `wheel` or `setuptools` package (neither is in a fresh virtual
environment of Python >= 3.12, and setuptools < 70.1 cannot build wheels
without `wheel`).  The layout follows the binary distribution format
(https://packaging.python.org/en/latest/specifications/binary-distribution-format/):
the package files, then NAME-VERSION.dist-info/{METADATA,WHEEL,RECORD}, with
a sha256 and size for every file in RECORD.  The package metadata (name,
version, summary, Python requirement, extras) is read from
python/pyproject.toml, the one place it is written.

The tag is py3-none-<platform>: the Python code runs on any Python 3, the
bundled library only on this platform (a linux_* tag: installable with pip
here, not uploadable to PyPI, which wants manylinux tags from auditwheel).
ai_hwaccel/_lib.py loads the bundled copy when AI_HWACCEL_LIB is unset.
"""

import argparse
import base64
import hashlib
import os
import re
import sys
import sysconfig
import zipfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PYDIR = os.path.join(ROOT, "python")
SONAME = "libai_hwaccel.so.0"


def project_metadata():
    """name, version, description, requires-python and the cffi extra of
    python/pyproject.toml (tomllib where it exists, else a line reader
    that knows only this file's simple `key = "value"` lines)."""
    path = os.path.join(PYDIR, "pyproject.toml")
    try:
        import tomllib  # noqa: PLC0415 - Python >= 3.11

        with open(path, "rb") as f:
            p = tomllib.load(f)["project"]
        return p["name"], p["version"], p["description"], p["requires-python"], p["optional-dependencies"]
    except ImportError:
        text = open(path, encoding="utf-8").read()
        get = lambda key: re.search(r'^%s = "([^"]*)"' % key, text, re.M).group(1)  # noqa: E731
        extra = re.search(r'^cffi = \["([^"]*)"\]', text, re.M).group(1)
        return get("name"), get("version"), get("description"), get("requires-python"), {"cffi": [extra]}


def record_line(arcname, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return "%s,sha256=%s,%d" % (arcname, digest, len(data))


def build(lib, out):
    name, version, summary, requires_python, extras = project_metadata()
    dist = name.replace("-", "_")
    tag = "py3-none-" + sysconfig.get_platform().replace("-", "_").replace(".", "_")
    files = []
    pkg = os.path.join(PYDIR, "ai_hwaccel")
    for fn in sorted(os.listdir(pkg)):
        if fn.endswith(".py"):
            with open(os.path.join(pkg, fn), "rb") as f:
                files.append(("ai_hwaccel/" + fn, f.read()))
    with open(os.path.realpath(lib), "rb") as f:
        files.append(("ai_hwaccel/" + SONAME, f.read()))
    meta = ["Metadata-Version: 2.1", "Name: " + name, "Version: " + version, "Summary: " + summary,
            "License: MIT", "Requires-Python: " + requires_python, "Classifier: Operating System :: POSIX :: Linux"]
    for extra, reqs in sorted(extras.items()):
        meta.append("Provides-Extra: " + extra)
        meta += ['Requires-Dist: %s; extra == "%s"' % (r, extra) for r in reqs]
    info = "%s-%s.dist-info" % (dist, version)
    files.append((info + "/METADATA", ("\n".join(meta) + "\n").encode()))
    wheel = "Wheel-Version: 1.0\nGenerator: ai-hwaccel scripts/build-wheel.py\nRoot-Is-Purelib: false\nTag: %s\n" % tag
    files.append((info + "/WHEEL", wheel.encode()))
    record = [record_line(a, d) for a, d in files] + [info + "/RECORD,,"]
    files.append((info + "/RECORD", ("\n".join(record) + "\n").encode()))

    os.makedirs(out, exist_ok=True)
    path = os.path.join(out, "%s-%s-%s.whl" % (dist, version, tag))
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for arcname, data in files:
            zi = zipfile.ZipInfo(arcname, date_time=(2026, 1, 1, 0, 0, 0))
            zi.external_attr = (0o755 if arcname.endswith(SONAME) else 0o644) << 16
            zi.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(zi, data)
    return path


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--lib", required=True, help="the built " + SONAME)
    ap.add_argument("--out", required=True, help="directory for the .whl")
    a = ap.parse_args()
    print(build(a.lib, a.out))


if __name__ == "__main__":
    sys.exit(main())
