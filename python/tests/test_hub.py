"""fetch_model against a local http.server serving recorded Hub responses
(testdata/hub/SOURCES.md); no test reaches the network."""

import base64
import json
import os
import shutil
import struct
import tempfile
import threading
import unittest
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import ai_hwaccel
from ai_hwaccel import hub

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
GRANITE = "ibm-granite/granite-3.1-1b-a400m-instruct"
RECORDED = os.path.join(ROOT, "testdata", "hub", GRANITE.replace("/", "--"))
LIB = os.environ.get("AI_HWACCEL_LIB", "")
GATED = ("Access to model google/gemma-3-1b-pt is restricted. You must have access to it and be "
         "authenticated to access it. Please log in.")


def recorded(name):
    with open(os.path.join(RECORDED, name), "rb") as f:
        return f.read()


def safetensors_start():
    """A single-file checkpoint's start: length, JSON header, some data."""
    hdr = json.dumps({"__metadata__": {"format": "pt"},
                      "lm_head.weight": {"dtype": "BF16", "shape": [49155, 1024], "data_offsets": [0, 100669440]}}).encode()
    return struct.pack("<Q", len(hdr)) + hdr + bytes(4096)


def gguf_start(pad):
    """A GGUF v3 header (ggml docs/gguf.md) whose padding string pushes the
    tensor list past the first range request."""
    def s(x):
        return struct.pack("<Q", len(x)) + x
    b = b"GGUF" + struct.pack("<IQQ", 3, 1, 2)
    b += s(b"general.architecture") + struct.pack("<I", 8) + s(b"llama")
    b += s(b"general.padding") + struct.pack("<I", 8) + s(b"x" * pad)
    b += s(b"token_embd.weight") + struct.pack("<I", 2) + struct.pack("<QQ", 4096, 1000) + struct.pack("<I", 1) + struct.pack("<Q", 0)
    return b + bytes(1024)


class Hub(BaseHTTPRequestHandler):
    files = {}
    hits = {}

    def log_message(self, *args):
        pass

    def error(self, status, code, msg):
        body = json.dumps({"error": msg}).encode()
        self.send_response(status)
        self.send_header("X-Error-Code", code)
        self.send_header("X-Error-Message", msg)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        p = self.path
        Hub.hits[p] = Hub.hits.get(p, 0) + 1
        if p.startswith("/google/gemma-3-1b-pt/"):
            return self.error(401, "GatedRepo", GATED)
        if p.startswith("/org/missing/"):
            return self.error(401, "RepoNotFound", "Repository not found")
        if p.startswith("/%s/resolve/nope/" % GRANITE):
            return self.error(404, "RevisionNotFound", "Invalid rev id: nope")
        if p == "/org/truncated/resolve/main/config.json":
            self.send_response(200)
            self.send_header("Content-Length", "888")
            self.end_headers()
            self.wfile.write(recorded("config.json")[:100])
            self.wfile.flush()
            self.close_connection = True
            return
        b = Hub.files.get(p)
        if b is None:
            return self.error(404, "EntryNotFound", "%s does not exist" % p)
        status, rng = 200, self.headers.get("Range")
        if rng:
            lo, hi = rng[len("bytes="):].split("-")
            b = b[int(lo):int(hi) + 1]
            status = 206
        self.send_response(status)
        self.send_header("Content-Length", str(len(b)))
        self.end_headers()
        self.wfile.write(b)


class FetchModel(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        Hub.files = {
            "/%s/resolve/main/config.json" % GRANITE: recorded("config.json"),
            "/%s/resolve/main/model.safetensors.index.json" % GRANITE: recorded("model.safetensors.index.json"),
            "/org/single/resolve/main/config.json": recorded("config.bf16.json"),
            "/org/single/resolve/main/model.safetensors": safetensors_start(),
            "/org/gguf-GGUF/resolve/main/model-Q4_K_M.gguf": gguf_start(5 << 20),
            "/api/models/org/gguf-GGUF/revision/main": json.dumps(
                {"siblings": [{"rfilename": "model-Q4_K_M.gguf"}, {"rfilename": "model-Q8_0.gguf"}]}).encode(),
        }
        cls.server = ThreadingHTTPServer(("127.0.0.1", 0), Hub)
        cls.endpoint = "http://127.0.0.1:%d" % cls.server.server_address[1]
        threading.Thread(target=cls.server.serve_forever, daemon=True).start()

    @classmethod
    def tearDownClass(cls):
        cls.server.shutdown()
        cls.server.server_close()

    def setUp(self):
        self.cache = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, self.cache)
        Hub.hits = {}

    def fetch(self, repo, **kw):
        kw.setdefault("endpoint", self.endpoint)
        kw.setdefault("token", "")
        return ai_hwaccel.fetch_model(repo, cache=self.cache, **kw)

    def test_sharded_checkpoint_then_offline(self):
        model = self.fetch(GRANITE)
        self.assertEqual(model["config"]["model_type"], "granitemoe")
        self.assertEqual(model["safetensors_index"]["metadata"]["total_size"], 5338513408)
        again = ai_hwaccel.fetch_model(GRANITE, cache=self.cache, endpoint="http://127.0.0.1:9", offline=True)
        self.assertEqual(model, again)

    def test_offline_without_cache(self):
        with self.assertRaises(ai_hwaccel.FetchError) as cm:
            self.fetch(GRANITE, offline=True)
        self.assertEqual(cm.exception.kind, "not_cached")

    def test_single_safetensors_header(self):
        model = self.fetch("org/single")
        b = base64.b64decode(model["safetensors_header_base64"])
        (n,) = struct.unpack("<Q", b[:8])
        self.assertEqual(len(b), 8 + n)
        self.assertEqual(Hub.hits["/org/single/resolve/main/model.safetensors"], 2)

    def test_gguf_header_in_growing_ranges(self):
        model = self.fetch("org/gguf-GGUF:q4_k_m")
        b = base64.b64decode(model["gguf_header_base64"])
        self.assertEqual(hub._gguf_header_end(b), len(gguf_start(5 << 20)) - 1024)
        self.assertEqual(Hub.hits["/org/gguf-GGUF/resolve/main/model-Q4_K_M.gguf"], 2)
        with self.assertRaises(ai_hwaccel.FetchError) as cm:
            self.fetch("org/gguf-GGUF")
        self.assertIn("org/gguf-GGUF:TYPE", str(cm.exception))

    def test_errors(self):
        for repo, kw, kind, says in [
            ("org/missing", {}, "not_found", "set HF_TOKEN"),
            ("google/gemma-3-1b-pt", {}, "gated", "is restricted"),
            ("google/gemma-3-1b-pt", {"token": "hf_x"}, "gated", "HF_TOKEN was sent"),
            (GRANITE, {"revision": "nope"}, "no_revision", "no revision 'nope'"),
            ("org/truncated", {}, "truncated", "of 888 bytes"),
            ("not an id", {}, "invalid", "not a Hugging Face model id"),
        ]:
            with self.subTest(repo=repo, kind=kind):
                with self.assertRaises(ai_hwaccel.FetchError) as cm:
                    self.fetch(repo, **kw)
                self.assertEqual(cm.exception.kind, kind, str(cm.exception))
                self.assertIn(says, str(cm.exception))
        self.assertFalse(os.path.exists(os.path.join(self.cache, "hub", "org--truncated", "main", "config.json")))

    def test_no_network(self):
        with self.assertRaises(ai_hwaccel.FetchError) as cm:
            self.fetch(GRANITE, endpoint="http://127.0.0.1:9")
        self.assertEqual(cm.exception.kind, "network")

    def test_token_from_environment(self):
        seen = []

        class Capture(Hub):
            def do_GET(self):
                seen.append(self.headers.get("Authorization"))
                self.error(401, "RepoNotFound", "Repository not found")

        srv = ThreadingHTTPServer(("127.0.0.1", 0), Capture)
        threading.Thread(target=srv.serve_forever, daemon=True).start()
        self.addCleanup(srv.server_close)
        self.addCleanup(srv.shutdown)
        old = os.environ.get("HF_TOKEN")
        os.environ["HF_TOKEN"] = "hf_secret"
        try:
            with self.assertRaises(ai_hwaccel.FetchError):
                ai_hwaccel.fetch_model("org/private", cache=self.cache, endpoint="http://127.0.0.1:%d" % srv.server_address[1])
        finally:
            if old is None:
                del os.environ["HF_TOKEN"]
            else:
                os.environ["HF_TOKEN"] = old
        self.assertEqual(seen, ["Bearer hf_secret"])

    @unittest.skipUnless(LIB, "AI_HWACCEL_LIB names the library (make test sets it)")
    def test_fetched_model_plans(self):
        model = self.fetch(GRANITE)
        registry = ai_hwaccel.detect(sysroot=os.path.join(ROOT, "testdata", "machines", "cpu-only", "root"), no_exec=True)
        answer = ai_hwaccel.plan_sharding(model=model, registry=registry)
        self.assertIn("metadata.total_size", json.dumps(answer))


class PickGGUF(unittest.TestCase):
    """_pick_gguf mirrors internal/llamahf: the file `llama-server -hf
    REPO:TYPE` downloads (find_best_model in llama.cpp's
    common/download.cpp): the first model file whose path has TYPE followed
    by "." or "-", in any case, unanchored; later parts of a split file and
    projectors are never picked.  The listing is
    bartowski/google_gemma-3-12b-it-GGUF's files as the catalog records them
    (internal/model/catalog.json)."""

    REPO = "bartowski/google_gemma-3-12b-it-GGUF"
    FILES = ["google_gemma-3-12b-it-Q8_0.gguf", "google_gemma-3-12b-it-Q4_K_M.gguf", "google_gemma-3-12b-it-bf16.gguf",
             "google_gemma-3-12b-it-Q3_K_M.gguf", "google_gemma-3-12b-it-IQ3_XXS.gguf",
             "google_gemma-3-12b-it-IQ3_XS.gguf", "mmproj-google_gemma-3-12b-it-f16.gguf", "README.md"]

    def test_type_followed_by_dot_or_dash(self):
        for quant, want in [("Q4_K_M", "google_gemma-3-12b-it-Q4_K_M.gguf"),
                            ("iq3_xs", "google_gemma-3-12b-it-IQ3_XS.gguf"),
                            ("IQ3_XXS", "google_gemma-3-12b-it-IQ3_XXS.gguf"),
                            ("BF16", "google_gemma-3-12b-it-bf16.gguf"),
                            ("F16", "google_gemma-3-12b-it-bf16.gguf")]:
            self.assertEqual(hub._pick_gguf(self.REPO, quant, self.FILES), want, quant)

    def test_start_of_a_longer_type_picks_nothing(self):
        for quant in ["Q4_K", "Q3_K", "Q8"]:
            with self.assertRaises(ai_hwaccel.FetchError) as e:
                hub._pick_gguf(self.REPO, quant, self.FILES)
            self.assertIn("no .gguf file of type " + quant, str(e.exception))
            self.assertIn("followed by", str(e.exception))

    def test_first_part_of_a_split_file(self):
        parts = ["Q2_K/Model-Q2_K-00002-of-00002.gguf", "Q2_K/Model-Q2_K-00001-of-00002.gguf"]
        self.assertEqual(hub._pick_gguf("r/M-GGUF", "Q2_K", parts), parts[1])
        self.assertEqual(hub._pick_gguf("r/M-GGUF", "", parts), parts[1])


if __name__ == "__main__":
    unittest.main()
