"""backend: the PEP 517 build backend of the ai-hwaccel Python package,
standard library only.

`pip install ./python` builds the package in an isolated environment into
which it first installs the backend's requirements from an index; with
setuptools as the backend that fails offline ("pip subprocess to install
build dependencies did not run successfully" in a fresh Debian 12 venv, no
index).  This backend has no requirements (pyproject.toml:
requires = [], backend-path = ["_build"]), so the package installs from the
checkout with no network and no setuptools, wheel or build package
(PEP 517, https://peps.python.org/pep-0517/; in-tree backends:
"backend-path").

The wheel follows the binary distribution format
(https://packaging.python.org/en/latest/specifications/binary-distribution-format/):
the package files, then NAME-VERSION.dist-info/{METADATA,WHEEL,
entry_points.txt,RECORD} with a sha256 and size for every file.  Built by
pip from the checkout it is pure Python (py3-none-any) and loads
libai_hwaccel.so.0 from AI_HWACCEL_LIB or the system; scripts/build-wheel.py
(make wheel) calls build() with the library and the ai-hwaccel command to
bundle, which makes it a platform wheel.  Either way the wheel declares the
console script ai-hwaccel (ai_hwaccel/cli.py), which runs the bundled
command.  The metadata is read from pyproject.toml, the one place it is
written.
"""

import base64
import hashlib
import io
import os
import re
import stat
import sysconfig
import tarfile
import zipfile

PYDIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SONAME = "libai_hwaccel.so.0"
CLI = "ai-hwaccel"
# Fixed timestamps: the same sources give the same wheel.
EPOCH = (2026, 1, 1, 0, 0, 0)


def project_metadata():
    """name, version, description, requires-python, optional dependencies and
    console scripts of pyproject.toml (tomllib where it exists, else a line
    reader that knows only this file's simple `key = "value"` lines)."""
    path = os.path.join(PYDIR, "pyproject.toml")
    try:
        import tomllib  # noqa: PLC0415 - Python >= 3.11

        with open(path, "rb") as f:
            p = tomllib.load(f)["project"]
        return (p["name"], p["version"], p["description"], p["requires-python"],
                p["optional-dependencies"], p["scripts"])  # fmt: skip
    except ImportError:
        text = open(path, encoding="utf-8").read()
        get = lambda key: re.search(r'^%s = "([^"]*)"' % re.escape(key), text, re.M).group(1)  # noqa: E731
        extra = re.search(r'^cffi = \["([^"]*)"\]', text, re.M).group(1)
        return (get("name"), get("version"), get("description"), get("requires-python"),
                {"cffi": [extra]}, {CLI: get(CLI)})  # fmt: skip


def _record_line(arcname, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return "%s,sha256=%s,%d" % (arcname, digest, len(data))


def _metadata():
    name, version, summary, requires_python, extras, _ = project_metadata()
    meta = ["Metadata-Version: 2.1", "Name: " + name, "Version: " + version, "Summary: " + summary,
            "License: MIT", "Requires-Python: " + requires_python, "Classifier: Operating System :: POSIX :: Linux"]
    for extra, reqs in sorted(extras.items()):
        meta.append("Provides-Extra: " + extra)
        meta += ['Requires-Dist: %s; extra == "%s"' % (r, extra) for r in reqs]
    return "\n".join(meta) + "\n"


def _entry_points():
    scripts = project_metadata()[5]
    return "[console_scripts]\n" + "".join("%s = %s\n" % kv for kv in sorted(scripts.items()))


def build(out, lib=None, cli=None):
    """Writes the wheel into directory out and returns its path.  lib and cli,
    when given, are the built libai_hwaccel.so.0 and ai-hwaccel command to
    bundle inside the package (then the wheel is for this platform only)."""
    name, version = project_metadata()[:2]
    dist = name.replace("-", "_")
    bundled = lib is not None or cli is not None
    tag = "py3-none-" + (sysconfig.get_platform().replace("-", "_").replace(".", "_") if bundled else "any")
    files = []
    pkg = os.path.join(PYDIR, "ai_hwaccel")
    for fn in sorted(os.listdir(pkg)):
        if fn.endswith(".py"):
            with open(os.path.join(pkg, fn), "rb") as f:
                files.append(("ai_hwaccel/" + fn, f.read()))
    if lib is not None:
        with open(os.path.realpath(lib), "rb") as f:
            files.append(("ai_hwaccel/" + SONAME, f.read()))
    if cli is not None:
        with open(os.path.realpath(cli), "rb") as f:
            files.append(("ai_hwaccel/bin/" + CLI, f.read()))
    info = "%s-%s.dist-info" % (dist, version)
    files.append((info + "/METADATA", _metadata().encode()))
    wheel = "Wheel-Version: 1.0\nGenerator: ai-hwaccel python/_build/backend.py\nRoot-Is-Purelib: %s\nTag: %s\n" % (
        "false" if bundled else "true", tag)
    files.append((info + "/WHEEL", wheel.encode()))
    files.append((info + "/entry_points.txt", _entry_points().encode()))
    record = [_record_line(a, d) for a, d in files] + [info + "/RECORD,,"]
    files.append((info + "/RECORD", ("\n".join(record) + "\n").encode()))

    os.makedirs(out, exist_ok=True)
    path = os.path.join(out, "%s-%s-%s.whl" % (dist, version, tag))
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for arcname, data in files:
            zi = zipfile.ZipInfo(arcname, date_time=EPOCH)
            executable = arcname.endswith(SONAME) or arcname.endswith("/bin/" + CLI)
            # A regular file's type bits with the mode: pip makes a file
            # executable only when S_ISREG and an x bit are both set.
            zi.external_attr = (stat.S_IFREG | (0o755 if executable else 0o644)) << 16
            zi.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(zi, data)
    return path


# PEP 517 hooks.


def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    return os.path.basename(build(wheel_directory))


def build_sdist(sdist_directory, config_settings=None):
    """The package sources, pyproject.toml and this backend, as NAME-VERSION.tar.gz."""
    name, version = project_metadata()[:2]
    base = "%s-%s" % (name.replace("-", "_"), version)
    path = os.path.join(sdist_directory, base + ".tar.gz")
    members = ["pyproject.toml", "_build/backend.py"]
    members += ["ai_hwaccel/" + fn for fn in sorted(os.listdir(os.path.join(PYDIR, "ai_hwaccel"))) if fn.endswith(".py")]
    with tarfile.open(path, "w:gz", format=tarfile.PAX_FORMAT) as tar:
        for rel in members:
            with open(os.path.join(PYDIR, rel), "rb") as f:
                data = f.read()
            ti = tarfile.TarInfo(base + "/" + rel)
            ti.size, ti.mode, ti.mtime = len(data), 0o644, 1767225600
            tar.addfile(ti, io.BytesIO(data))
        pkg_info = _metadata().encode()
        ti = tarfile.TarInfo(base + "/PKG-INFO")
        ti.size, ti.mode, ti.mtime = len(pkg_info), 0o644, 1767225600
        tar.addfile(ti, io.BytesIO(pkg_info))
    return os.path.basename(path)
