#!/usr/bin/env python3
"""Builds the ai-hwaccel wheel with the shared library and the ai-hwaccel
command inside the package.

    scripts/build-wheel.py --lib build/libai_hwaccel.so.0 --cli build/ai-hwaccel --out build/wheel

The wheel is written by the package's own build backend
(python/_build/backend.py, standard library only), so it builds with no
network and no `wheel` or `setuptools` package; the same backend builds the
pure-Python wheel of `pip install ./python`.  The tag is
py3-none-<platform>: the Python code runs on any Python 3, the bundled
library and command only on this platform (a linux_* tag: installable with
pip here, not uploadable to PyPI, which wants manylinux tags from
auditwheel).  ai_hwaccel/_lib.py loads the bundled library when
AI_HWACCEL_LIB is unset; the console script `ai-hwaccel`
(ai_hwaccel/cli.py) runs the bundled command.
"""

import argparse
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "python", "_build"))

import backend  # noqa: E402 - python/_build, found through sys.path above


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--lib", required=True, help="the built " + backend.SONAME)
    ap.add_argument("--cli", help="the built ai-hwaccel command (bundled as the console script's program)")
    ap.add_argument("--out", required=True, help="directory for the .whl")
    a = ap.parse_args()
    print(backend.build(a.out, lib=a.lib, cli=a.cli))


if __name__ == "__main__":
    sys.exit(main())
