"""fetch_model: what planning needs of a Hugging Face model repository.

The library never opens a socket; this module fetches, as the CLI's
`--model org/name` does (internal/hub), and returns the request's "model"
object (docs/requests.md):

    model = ai_hwaccel.fetch_model("Qwen/Qwen3-8B")
    plan = ai_hwaccel.plan(model=model, engine="vllm")

It reads config.json, then model.safetensors.index.json or, when there is
none, the header of model.safetensors (two HTTP range requests); a
repository without config.json (or "org/name:Q4_K_M") is a GGUF repository,
whose file's header is read in growing range requests.  Files come from
{endpoint}/{repo}/resolve/{revision}/{file} and the file list from
{endpoint}/api/models/{repo}/revision/{revision}, the URLs of huggingface_hub
(src/huggingface_hub/constants.py); errors are told apart by the
X-Error-Code header as its hf_raise_for_status does
(src/huggingface_hub/utils/_http.py,
https://github.com/huggingface/huggingface_hub).  The cache is the CLI's:
$XDG_CACHE_HOME/ai-hwaccel/hub/<org>--<name>/<revision>/.  urllib only.
"""

import base64
import json
import os
import re
import struct
import tempfile
import urllib.error
import urllib.parse
import urllib.request
from typing import Any, Dict, Optional

__all__ = ["FetchError", "fetch_model"]

DEFAULT_ENDPOINT = "https://huggingface.co"

_CONFIG = "config.json"
_INDEX = "model.safetensors.index.json"
_SINGLE = "model.safetensors"
_INFO = "api-model.json"
_HEADER = ".header"
_MISSING = ".missing"

_MAX_JSON = 64 << 20
_MAX_SAFETENSORS_HEADER = 100000000
_FIRST_GGUF_RANGE = 4 << 20
_MAX_GGUF_HEADER = 64 << 20
_TIMEOUT = 120

_REPO = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9][A-Za-z0-9._-]*(:[A-Za-z0-9._-]+)?$")


class FetchError(Exception):
    """A fetch failed.  kind is one of "not_found", "gated", "no_revision",
    "network", "truncated", "not_cached", "invalid"."""

    def __init__(self, kind: str, message: str):
        super().__init__(message)
        self.kind = kind
        self.message = message


class _NoEntry(Exception):
    """The repository and revision exist; the file does not."""


def cache_dir() -> str:
    """$XDG_CACHE_HOME/ai-hwaccel, else ~/.cache/ai-hwaccel (the CLI's)."""
    base = os.environ.get("XDG_CACHE_HOME", "")
    if not os.path.isabs(base):
        base = os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "ai-hwaccel")


def fetch_model(repo: str, revision: Optional[str] = None, token: Optional[str] = None,
                endpoint: Optional[str] = None, offline: bool = False,
                cache: Optional[str] = None) -> Dict[str, Any]:
    """The request's "model" object for the repository repo ("org/name", or
    "org/name:Q4_K_M" for a GGUF file).  token defaults to $HF_TOKEN, endpoint
    to $HF_ENDPOINT (else https://huggingface.co), revision to "main";
    offline reads only the cache.  Raises FetchError."""
    if not _REPO.match(repo or "") or ".." in repo:
        raise FetchError("invalid", "%r is not a Hugging Face model id (org/name or org/name:QUANT)" % (repo,))
    revision = revision or "main"
    if ".." in revision or "\\" in revision or "\x00" in revision:
        raise FetchError("invalid", "revision %r is not a branch, tag or commit name" % (revision,))
    if token is None:
        token = os.environ.get("HF_TOKEN") or None
    if endpoint is None:
        endpoint = os.environ.get("HF_ENDPOINT") or DEFAULT_ENDPOINT
    name, _, quant = repo.partition(":")
    f = _Fetch(name, revision, token, endpoint.rstrip("/"), offline, cache or cache_dir())
    if quant:
        return f.gguf(quant)
    try:
        cfg = f.file(_CONFIG)
    except _NoEntry:
        return f.gguf("")
    obj = {"config": _python_json(cfg, _CONFIG, name)}  # type: Dict[str, Any]
    try:
        obj["safetensors_index"] = _python_json(f.file(_INDEX), _INDEX, name)
        return obj
    except _NoEntry:
        pass
    try:
        obj["safetensors_header_base64"] = base64.b64encode(f.safetensors_header(_SINGLE)).decode("ascii")
    except _NoEntry:
        pass
    return obj


def _python_json(b: bytes, what: str, repo: str):
    # json.loads takes Python's Infinity and NaN, which Mamba configs carry;
    # the request is strict JSON, so they become None (the engine's config
    # reader does the same: internal/model DecodeConfig).
    try:
        return json.loads(b.decode("utf-8"), parse_constant=lambda _: None)
    except ValueError as e:
        raise FetchError("invalid", "%s of %s is not JSON: %s" % (what, repo, e))


class _Fetch:
    def __init__(self, repo, rev, token, endpoint, offline, cache):
        self.repo, self.rev, self.token, self.endpoint, self.offline = repo, rev, token, endpoint, offline
        self.dir = os.path.join(cache, "hub", repo.replace("/", "--"), rev.replace("/", "--"))

    # -- cache ---------------------------------------------------------
    def cached(self, path):
        try:
            with open(path, "rb") as fh:
                return fh.read()
        except FileNotFoundError:
            if os.path.exists(path + _MISSING):
                raise _NoEntry()
            raise FetchError("not_cached", "%s of %s at revision %s is not in the cache (%s); fetch once without offline"
                             % (os.path.basename(path), self.repo, self.rev, self.dir))

    def store(self, path, b):
        os.makedirs(os.path.dirname(path), exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".part-", dir=os.path.dirname(path))
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(b)
            os.replace(tmp, path)
        except BaseException:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise

    def mark_missing(self, path):
        self.store(path + _MISSING, b"")

    # -- HTTP ----------------------------------------------------------
    def url(self, name):
        return "%s/%s/resolve/%s/%s" % (self.endpoint, self.repo, urllib.parse.quote(self.rev, safe=""), name)

    def get(self, url, what, rng=None, limit=_MAX_JSON):
        req = urllib.request.Request(url, headers={"User-Agent": "ai-hwaccel"})
        if self.token:
            req.add_header("Authorization", "Bearer " + self.token)
        if rng:
            req.add_header("Range", rng)
        try:
            resp = urllib.request.urlopen(req, timeout=_TIMEOUT)
        except urllib.error.HTTPError as e:
            raise self.status_error(e, what)
        except (urllib.error.URLError, OSError) as e:
            raise FetchError("network", "no network: cannot reach %s (%s); offline=True plans from the cache of an earlier fetch"
                             % (self.endpoint, getattr(e, "reason", e)))
        with resp:
            length = resp.headers.get("Content-Length")
            want = int(length) if length and length.isdigit() else None
            if want is not None and want > limit:
                raise FetchError("invalid", "%s of %s is %d bytes, more than the %d read for planning" % (what, self.repo, want, limit))
            try:
                b = resp.read(limit + 1)
            except Exception as e:  # http.client.IncompleteRead, a reset connection
                got = len(getattr(e, "partial", b""))
                raise FetchError("truncated", "%s of %s: got %d of %s bytes: truncated download (the connection ended early; try again)"
                                 % (what, self.repo, got, want))
        if want is not None and len(b) != want:
            raise FetchError("truncated", "%s of %s: got %d of %d bytes: truncated download (the connection ended early; try again)"
                             % (what, self.repo, len(b), want))
        if len(b) > limit:
            raise FetchError("invalid", "%s of %s is more than the %d bytes read for planning" % (what, self.repo, limit))
        return b

    def status_error(self, e, what):
        code = e.headers.get("X-Error-Code", "") if e.headers else ""
        msg = e.headers.get("X-Error-Message", "") if e.headers else ""
        if not msg:
            try:
                msg = json.loads(e.read(4096).decode("utf-8")).get("error", "")
            except Exception:
                msg = ""
        if code == "GatedRepo" or (e.code == 403 and "restricted" in msg):
            hint = ("HF_TOKEN was sent: its account has not been granted access" if self.token
                    else "set HF_TOKEN to a token of an account that was granted access")
            return FetchError("gated", "%s is a gated repository (%d: %s); request access at %s/%s and %s"
                              % (self.repo, e.code, msg, self.endpoint, self.repo, hint))
        if code == "RevisionNotFound":
            return FetchError("no_revision", "%s has no revision %r (a branch, tag or commit)" % (self.repo, self.rev))
        if code == "EntryNotFound":
            return _NoEntry()
        if code == "RepoNotFound" or e.code == 401:
            # The Hub answers 401 for a missing repository as for a private one.
            hint = "" if self.token else " (if it is private, set HF_TOKEN)"
            return FetchError("not_found", "no model repository %s on %s%s" % (self.repo, self.endpoint, hint))
        if e.code == 404:
            return _NoEntry()
        return FetchError("invalid", "%s of %s: %s answered %d: %s" % (what, self.repo, self.endpoint, e.code, msg or e.reason))

    # -- files ---------------------------------------------------------
    def file(self, name):
        path = os.path.join(self.dir, name)
        if self.offline:
            return self.cached(path)
        try:
            b = self.get(self.url(name), name)
        except _NoEntry:
            self.mark_missing(path)
            raise
        self.store(path, b)
        if os.path.exists(path + _MISSING):
            os.unlink(path + _MISSING)
        return b

    def safetensors_header(self, name):
        path = os.path.join(self.dir, name + _HEADER)
        if self.offline:
            return self.cached(path)
        try:
            head = self.get(self.url(name), name, "bytes=0-7", 8)
        except _NoEntry:
            self.mark_missing(path)
            raise
        if len(head) != 8:
            raise FetchError("invalid", "%s of %s is shorter than a safetensors header" % (name, self.repo))
        (n,) = struct.unpack("<Q", head)
        if n < 2 or n > _MAX_SAFETENSORS_HEADER:
            raise FetchError("invalid", "%s of %s: header length %d is outside [2, %d]" % (name, self.repo, n, _MAX_SAFETENSORS_HEADER))
        hdr = self.get(self.url(name), name, "bytes=8-%d" % (8 + n - 1), n)
        if len(hdr) != n:
            raise FetchError("truncated", "%s of %s: got %d of the header's %d bytes" % (name, self.repo, len(hdr), n))
        b = head + hdr
        self.store(path, b)
        return b

    def gguf(self, quant):
        name = self.gguf_file(quant)
        path = os.path.join(self.dir, name.replace("/", "--") + _HEADER)
        if self.offline:
            b = self.cached(path)
        else:
            b = self.gguf_header(name)
            self.store(path, b)
        return {"gguf_header_base64": base64.b64encode(b).decode("ascii")}

    def gguf_file(self, quant):
        path = os.path.join(self.dir, _INFO)
        if self.offline:
            b = self.cached(path)
        else:
            url = "%s/api/models/%s/revision/%s" % (self.endpoint, self.repo, urllib.parse.quote(self.rev, safe=""))
            try:
                b = self.get(url, "the file list")
            except _NoEntry:
                raise FetchError("not_found", "no model repository %s on %s" % (self.repo, self.endpoint))
            self.store(path, b)
        names = [s.get("rfilename", "") for s in json.loads(b.decode("utf-8")).get("siblings", [])]
        return _pick_gguf(self.repo, quant, names)

    def gguf_header(self, name):
        n = _FIRST_GGUF_RANGE
        while True:
            n = min(n, _MAX_GGUF_HEADER)
            b = self.get(self.url(name), name, "bytes=0-%d" % (n - 1), n)
            end = _gguf_header_end(b)
            if end is not None:
                return b
            if len(b) < n:
                raise FetchError("invalid", "%s of %s ends inside its GGUF header" % (name, self.repo))
            if n == _MAX_GGUF_HEADER:
                raise FetchError("invalid", "%s of %s: the header is longer than %d bytes" % (name, self.repo, _MAX_GGUF_HEADER))
            n *= 4


# llama.cpp's rule for the file of `llama-server -hf REPO:TYPE`, as
# internal/llamahf states it (find_best_model and gguf_filename_is_model in
# common/download.cpp,
# https://github.com/unslothai/llama.cpp/blob/d32676d77426540327835040d5d3279728f0b4c8/common/download.cpp).
_SPLIT_PART = re.compile(r"-([0-9]{5})-of-([0-9]{5})\.gguf$", re.IGNORECASE)


def _is_model_file(path):
    """A .gguf file whose name holds neither "mmproj" nor "imatrix"."""
    name = path.rsplit("/", 1)[-1]
    return path.endswith(".gguf") and "mmproj" not in name and "imatrix" not in name


def _is_later_part(path):
    """A part of a split file other than its first."""
    m = _SPLIT_PART.search(path)
    return m is not None and int(m.group(2)) > 1 and int(m.group(1)) != 1


def _llama_pick(tag, paths):
    """The first path matching tag followed by "." or "-", in any case,
    unanchored; None when none does."""
    pattern = re.compile(re.escape(tag) + "[.-]", re.IGNORECASE)
    for p in paths:
        if _is_model_file(p) and not _is_later_part(p) and pattern.search(p):
            return p
    return None


def _pick_gguf(repo, quant, names):
    """The GGUF file to read: with quant, the one `llama-server -hf
    repo:quant` loads (for a split file its first part); else the only
    model file."""
    files = sorted(n for n in names if _is_model_file(n) and not _is_later_part(n))
    if not files:
        raise FetchError("not_found", "%s has neither config.json nor a .gguf file: not a model repository planning can read" % repo)
    if quant:
        name = _llama_pick(quant, files)
        if name is None:
            raise FetchError("not_found", "%s has no .gguf file of type %s: no file name has %s followed by \".\" or \"-\", "
                             "as llama-server -hf %s:%s needs (it has %s)" % (repo, quant, quant, repo, quant, ", ".join(files)))
        return name
    if len(files) > 1:
        raise FetchError("invalid", "%s has %d .gguf files; name one type as %s:TYPE (files: %s)" % (repo, len(files), repo, ", ".join(files)))
    return files[0]


# GGUF value types (ggml docs/gguf.md): fixed sizes; 8 is a string, 9 an array.
_GGUF_SIZES = {0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}


def _gguf_header_end(b):
    """The offset where the GGUF header in b ends (after the tensor infos),
    None when b stops before it.  Layout: ggml docs/gguf.md."""
    try:
        if b[:4] != b"GGUF":
            raise FetchError("invalid", "not a GGUF file (no GGUF magic)")
        (_version, n_tensors, n_kv) = struct.unpack_from("<IQQ", b, 4)
        off = 24

        def string(off):
            (n,) = struct.unpack_from("<Q", b, off)
            if off + 8 + n > len(b):
                raise struct.error("short")
            return off + 8 + n

        def value(typ, off):
            if typ in _GGUF_SIZES:
                return off + _GGUF_SIZES[typ]
            if typ == 8:
                return string(off)
            if typ == 9:
                (inner, count) = struct.unpack_from("<IQ", b, off)
                off += 12
                if inner in _GGUF_SIZES:
                    return off + count * _GGUF_SIZES[inner]
                for _ in range(count):
                    off = value(inner, off)
                    if off > len(b):
                        raise struct.error("short")
                return off
            raise FetchError("invalid", "GGUF value type %d is not known" % typ)

        for _ in range(n_kv):
            off = string(off)
            (typ,) = struct.unpack_from("<I", b, off)
            off = value(typ, off + 4)
        for _ in range(n_tensors):
            off = string(off)
            (dims,) = struct.unpack_from("<I", b, off)
            off += 4 + 8 * dims + 4 + 8
        if off > len(b):
            return None
        return off
    except struct.error:
        return None
