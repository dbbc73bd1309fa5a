"""Tests of the ai_hwaccel Python package against the built library.

Run by `make test-pypkg`: cd python && AI_HWACCEL_LIB=<build>/libai_hwaccel.so.0
python3 -m unittest discover -s tests -t .  Fixture machines come from
testdata/machines (see their README.md for where every value comes from).
"""

import ctypes
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import unittest

import ai_hwaccel
from ai_hwaccel import _lib

HERE = os.path.dirname(os.path.abspath(__file__))
PYDIR = os.path.dirname(HERE)
ROOT = os.path.dirname(PYDIR)
HEADER = os.path.join(ROOT, "include", "ai_hwaccel.h")
CPU_ONLY = os.path.join(ROOT, "testdata", "machines", "cpu-only", "root")
DGX = os.path.join(ROOT, "testdata", "machines", "dgx-h100")
MI300X_CPX = os.path.join(ROOT, "testdata", "machines", "mi300x-8-cpx")
LIB = os.environ.get("AI_HWACCEL_LIB", "")
EXAMPLE = os.path.join(ROOT, "examples", "python-ctypes", "show_devices.py")

STABLE_CODES = {"invalid_json", "invalid_argument", "unknown_model", "model_file", "too_large",
                "detection_failed", "forked_child", "internal"}  # fmt: skip

# /proc/meminfo MemTotal of the cpu-only fixture: 65921280 kB.
CPU_ONLY_MEMORY = 65921280 * 1024


def header_text():
    with open(HEADER, encoding="utf-8") as f:
        return f.read()


def header_define(name):
    m = re.search(r"^#define %s (\S+)$" % name, header_text(), re.M)
    return m.group(1)


def header_prototypes():
    """Every `HWACCEL_API <prototype>;` of the header, whitespace-normalised."""
    return sorted(
        " ".join(m.group(1).split()) for m in re.finditer(r"^HWACCEL_API (.*?;)", header_text(), re.M | re.S)
    )


def run_python(code, env_extra=None, drop=(), cwd=None, timeout=60):
    """Runs code in a fresh interpreter; returns (rc, stdout, stderr)."""
    env = dict(os.environ)
    for k in drop:
        env.pop(k, None)
    env.update(env_extra or {})
    p = subprocess.run(
        [sys.executable, "-c", code], env=env, cwd=cwd or PYDIR, capture_output=True, text=True, timeout=timeout
    )
    return p.returncode, p.stdout, p.stderr


def dgx(**extra):
    """Detection options of the dgx-h100 fixture, its vendor tools included."""
    opts = {"sysroot": os.path.join(DGX, "root"), "path": os.path.join(DGX, "bin"), "timeout_ms": 20000}
    opts.update(extra)
    return opts


def rss_kb():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise AssertionError("no VmRSS")


class HeaderAgreement(unittest.TestCase):
    """The constants and prototypes the binding hard-codes match the header."""

    def test_soname_major(self):
        self.assertEqual(_lib.SONAME, "libai_hwaccel.so." + header_define("HWACCEL_VERSION_MAJOR"))

    def test_abi_version(self):
        self.assertEqual(_lib.ABI_VERSION, int(header_define("HWACCEL_ABI_VERSION")))

    def test_cdef_matches_header(self):
        cdef = sorted(" ".join(line.split()) for line in _lib.CDEF.strip().splitlines())
        self.assertEqual(cdef, header_prototypes())

    def test_package_version_matches_header(self):
        self.assertEqual(ai_hwaccel.__version__, json.loads(header_define("HWACCEL_VERSION_STRING")))


class ApiTests:
    """The public API, run once per backend (subclasses set BACKEND)."""

    BACKEND = None

    @classmethod
    def setUpClass(cls):
        ai_hwaccel.set_backend(cls.BACKEND)

    @classmethod
    def tearDownClass(cls):
        ai_hwaccel.set_backend("ctypes")

    def fixture(self):
        return ai_hwaccel.detect(sysroot=CPU_ONLY, no_exec=True)

    def test_backend_and_versions(self):
        self.assertEqual(ai_hwaccel.backend_name(), self.BACKEND)
        self.assertEqual(ai_hwaccel.version(), json.loads(header_define("HWACCEL_VERSION_STRING")))
        self.assertEqual(ai_hwaccel.abi_version(), _lib.ABI_VERSION)

    def test_detect_cpu_only(self):
        reg = self.fixture()
        self.assertEqual(reg["schema_version"], 1)
        devs = ai_hwaccel.devices(reg)
        self.assertEqual([d.id for d in devs], ["cpu:0"])
        cpu = devs[0]
        self.assertEqual((cpu.kind, cpu.family, cpu.vendor), ("cpu", "cpu", "intel"))
        self.assertEqual(cpu.name, "Intel(R) Xeon(R) CPU L5640 @ 2.27GHz")
        self.assertEqual(cpu.memory_bytes, CPU_ONLY_MEMORY)
        self.assertIsNone(cpu.memory_bandwidth_gb_s, "unknown values stay unknown")
        self.assertEqual(cpu.raw["cores"], 12)

    def test_detect_dgx_with_tools(self):
        reg = ai_hwaccel.detect(dgx())
        gpus = [d for d in ai_hwaccel.devices(reg) if d.kind == "cuda_gpu"]
        self.assertEqual(len(gpus), 8)
        # The fixture's sysfs bus ids, in order; GPUs 0-3 on NUMA node 0.
        bus = ["0000:18:00.0", "0000:2a:00.0", "0000:3a:00.0", "0000:5d:00.0",
               "0000:9a:00.0", "0000:ab:00.0", "0000:ba:00.0", "0000:db:00.0"]  # fmt: skip
        for i, g in enumerate(gpus):
            self.assertEqual(g.id, "cuda:%d" % i)
            self.assertEqual(g.name, "NVIDIA H100 80GB HBM3")
            # nvidia-smi memory.total 81559 MiB in the fixture.
            self.assertEqual(g.memory_bytes, 81559 * 1024 * 1024)
            self.assertEqual(g.pci_bus_id, bus[i])
            self.assertEqual(g.numa_node, 0 if i < 4 else 1)
        cpu = reg["devices"][0]
        self.assertEqual((cpu["id"], cpu["memory_bytes"]), ("cpu:0", 2164152250368))

    def test_detect_env_option(self):
        reg = ai_hwaccel.detect(dgx(env={"CUDA_VISIBLE_DEVICES": "1"}))
        gpus = [d for d in ai_hwaccel.devices(reg) if d.kind == "cuda_gpu"]
        self.assertEqual([g.pci_bus_id for g in gpus], ["0000:2a:00.0"])

    def test_detect_json_text_and_request_forms(self):
        opts = json.dumps({"sysroot": CPU_ONLY, "no_exec": True})
        text = ai_hwaccel.detect_json(opts)
        self.assertTrue(text.startswith('{"schema_version":1'), text[:80])
        self.assertEqual(json.loads(ai_hwaccel.detect_json(opts.encode()))["devices"][0]["id"], "cpu:0")
        with self.assertRaises(TypeError):
            ai_hwaccel.detect_json(opts, no_exec=True)

    def test_plan_on_registry(self):
        # llama.cpp: vLLM's CPU backend needs AVX2 or AVX-512, which the
        # fixture's Xeon L5640 lacks, so a vLLM plan there is refused.
        p = ai_hwaccel.plan(model={"params_b": 8}, registry=self.fixture(), engine="llama.cpp")
        self.assertIsInstance(p, ai_hwaccel.Plan)
        self.assertTrue(p.fits, p.explanation)
        self.assertEqual([s.device_id for s in p.shards], ["cpu:0"])
        self.assertLessEqual(p.shards[0].memory_bytes, p.shards[0].memory_available_bytes)
        self.assertIn("-c", p.engine_args["llama.cpp"])
        self.assertTrue(p.explanation)

    def test_model_as_a_string(self):
        """A model given as one string is read as the CLI reads --model: a
        catalog name, a Hugging Face id or a size with a unit."""
        reg = self.fixture()
        by_name = ai_hwaccel.plan_sharding(model="Llama-3.1-8B", registry=reg)
        self.assertEqual(by_name, ai_hwaccel.plan_sharding(model={"name": "Llama-3.1-8B"}, registry=reg))
        self.assertEqual(by_name, ai_hwaccel.plan_sharding(model="meta-llama/Llama-3.1-8B", registry=reg))
        size = ai_hwaccel.plan_sharding(model="70b", registry=reg)
        self.assertEqual(size["model"]["params"], 70 * 10**9)
        train = ai_hwaccel.estimate_training(model="Llama-3.1-8B", registry=reg,
                                             training={"method": "distillation", "teacher": "Llama-3.1-70B"})  # fmt: skip
        self.assertIn("fits", train)
        with self.assertRaises(ai_hwaccel.HwaccelError) as e:
            ai_hwaccel.plan(model="no-such-model-xyz", registry=reg)
        self.assertEqual(e.exception.code, "unknown_model")
        with self.assertRaises(ai_hwaccel.HwaccelError) as e:
            ai_hwaccel.plan(model="70", registry=reg)
        self.assertIn("ambiguous", e.exception.message)

    def test_errors_in_the_contracts_words(self):
        """No Go type reaches Python; a misspelt member names the right one."""
        reg = self.fixture()
        m = "Llama-3.1-8B"
        for bad in ({"model": {"name": 5}}, {"model": 5}, {"model": m, "devices": "cuda:0"},
                    {"model": m, "training": {"seq_len": 1.5}}, {"model": m, "registry": []}):  # fmt: skip
            with self.assertRaises(ai_hwaccel.HwaccelError) as e:
                ai_hwaccel.estimate_training(bad)
            self.assertEqual(e.exception.code, "invalid_argument", bad)
            for word in ("Go struct", "Go value", "json:", "[]string", "wire.", "float64"):
                self.assertNotIn(word, e.exception.message, bad)
        with self.assertRaises(ai_hwaccel.HwaccelError) as e:
            ai_hwaccel.plan(model="Llama-3.1-8B", registry=reg, contxt_length=4096)
        self.assertEqual(e.exception.message,
                         'request: unknown field "contxt_length"; did you mean "context_length"?')  # fmt: skip

    def test_models_and_fit(self):
        everything = ai_hwaccel.models()
        self.assertGreater(len(everything), 10)
        llama = ai_hwaccel.models(filter="llama-3.1-8b")
        self.assertEqual([m["name"] for m in llama], ["Llama-3.1-8B"])
        self.assertEqual(llama[0]["hf_id"], "meta-llama/Llama-3.1-8B")
        self.assertEqual(ai_hwaccel.models(filter="no-such-family"), [])
        self.assertEqual(json.loads(ai_hwaccel.models_json({"quant": "mxfp4"}))["models"][0]["name"][:7], "gpt-oss")
        # 63 GiB of host memory: the 8B and 70B models fit, the 405B does not.
        # On the CPU the level is chosen by speed as well as fit: int4 decodes
        # about 2.8x as fast as bf16 on the fixture's Xeon L5640, so the 8B is
        # planned at int4 with a speed (docs/inference-servers.md).
        rows = {r["model"]: r for r in ai_hwaccel.fit(registry=self.fixture(), filter="llama-3.1")}
        self.assertEqual((rows["Llama-3.1-8B"]["fits"], rows["Llama-3.1-8B"]["quant"]), (True, "int4"), rows)
        self.assertGreater(rows["Llama-3.1-8B"]["decode_tokens_per_s"], 0, rows)
        self.assertEqual(rows["Llama-3.1-70B"]["quant"], "int4", rows)
        self.assertEqual(rows["Llama-3.1-405B"]["refusal"], "insufficient_memory")
        order = [r["fits"] for r in rows.values()]
        self.assertEqual(order, sorted(order, reverse=True), "the models that fit come first")
        with self.assertRaises(ai_hwaccel.HwaccelError) as e:
            ai_hwaccel.fit(filtr="llama")
        self.assertIn('did you mean "filter"?', e.exception.message)

    def test_plan_on_detected_dgx(self):
        reg = ai_hwaccel.detect(dgx())
        plan = ai_hwaccel.plan_sharding({"model": {"params_b": 70}, "registry": reg})
        self.assertTrue(plan["fits"], plan.get("explanation"))
        free = {d["id"]: d.get("memory_free_bytes", d.get("memory_bytes")) for d in reg["devices"]}
        self.assertTrue(plan["shards"])
        for shard in plan["shards"]:
            self.assertIn(shard["device_id"], free)
            self.assertLessEqual(shard["memory_bytes"], free[shard["device_id"]])

    def test_device_telemetry_and_nics(self):
        gpus = [d for d in ai_hwaccel.devices(ai_hwaccel.detect(dgx())) if d.kind == "cuda_gpu"]
        g = gpus[0]
        # The fixture's nvidia-smi: 700 W power limit; mlx5_0 is on cuda:0's PCIe switch (PIX).
        self.assertEqual(g.telemetry["power_limit_watts"], 700)
        self.assertEqual(g.telemetry, g.raw["telemetry"])
        self.assertEqual(g.nics[0], {"name": "mlx5_0", "path": "PIX"})
        self.assertIsNone(g.partition, "an H100 has no AMD compute partition")
        cpu = ai_hwaccel.devices(self.fixture())[0]
        self.assertEqual((cpu.telemetry, cpu.partition, cpu.nics), (None, None, None))

    def test_device_partition(self):
        opts = {"sysroot": os.path.join(MI300X_CPX, "root"), "path": os.path.join(MI300X_CPX, "bin")}
        devs = {d.id: d for d in ai_hwaccel.devices(ai_hwaccel.detect(**opts))}
        parent = devs["rocm:0"]
        # The fixture's MI300X in CPX mode: 8 partitions, rocm:8 to rocm:15.
        self.assertEqual((parent.partition["compute"], parent.partition["count"]), ("CPX", 8))
        self.assertEqual(parent.partition["children"][0], "rocm:8")
        self.assertEqual(devs["rocm:8"].partition["parent"], "rocm:0")

    def test_plan_budget_idle_load_and_env(self):
        reg = ai_hwaccel.detect(dgx())
        # "placement": "fewest": the fewest GPUs, the others idle (by
        # default a vLLM plan uses all eight, docs/requests.md "placement").
        p = ai_hwaccel.plan(model={"name": "Llama-3.3-70B-Instruct"}, registry=reg, placement="fewest")
        self.assertTrue(p.fits, p.explanation)
        self.assertEqual(p.budget, p.raw["budget"])
        self.assertEqual(p.budget["engine"], "vllm")
        used = [s.device_id for s in p.shards]
        self.assertTrue(p.idle_devices, "70B on 2 of 8 H100s leaves some idle")
        self.assertFalse(set(used) & set(p.idle_devices))
        self.assertEqual(p.load["vllm"]["repo"], "meta-llama/Llama-3.3-70B-Instruct")
        env = p.engine_env["vllm"]
        self.assertEqual(env["CUDA_DEVICE_ORDER"], "PCI_BUS_ID")
        self.assertEqual(env["CUDA_VISIBLE_DEVICES"], ",".join(u.split(":")[1] for u in used))
        # Absent from the answer, absent here: no engine_env off CUDA/ROCm.
        q = ai_hwaccel.plan(model={"params_b": 8}, registry=self.fixture(), engine="llama.cpp")
        self.assertIsNone(q.engine_env)
        self.assertIsNone(q.idle_devices)

    def test_model_that_does_not_fit_is_an_answer(self):
        p = ai_hwaccel.plan(model={"params_b": 2000}, quant="fp32", registry=self.fixture())
        self.assertIs(p.fits, False)
        self.assertIsNone(p.quant)
        self.assertTrue(p.explanation)

    def test_unknown_memory_is_not_no(self):
        reg = {"schema_version": 1, "devices": [{"id": "cuda:0", "kind": "cuda_gpu", "family": "gpu",
                                                  "index": 0, "available": True}],
               "system_io": {"interconnects": [], "numa_nodes": []}, "warnings": []}
        p = ai_hwaccel.plan(model={"params_b": 8}, registry=reg)
        self.assertIsNone(p.fits, p.explanation)
        self.assertEqual(p.raw["refusal"]["code"], "no_device")
        # docs/python.md: these four are None when the answer has none;
        # raw is the whole answer, never None.
        self.assertEqual((p.budget, p.idle_devices, p.load, p.engine_env), (None, None, None, None))
        self.assertEqual(p.raw["fits"], None)
        self.assertIn("refusal", p.raw)
        # fit plans each model as plan does, and says the same: unknown.
        rows = ai_hwaccel.fit(registry=reg, filter="Llama-3.1-8B")
        self.assertEqual([(r["fits"], r["refusal"]) for r in rows], [(None, "no_device")], rows)

    def test_unknown_memory_left_out_is_not_no(self):
        # docs/requests.md (fits): a GPU of unknown memory is left out, and
        # where the GPUs of known memory do not hold the model the answer is
        # fits None, not False, with its refusal code insufficient_memory:
        # counted, the one left out might hold it. The docstrings of fit()
        # and Plan said None meant only that no device's memory is known.
        gpu = {"kind": "cuda_gpu", "family": "gpu", "available": True}
        reg = {"schema_version": 1, "devices": [
                   dict(gpu, id="cuda:0", index=0, memory_bytes=8 << 30),
                   dict(gpu, id="cuda:1", index=1)],
               "system_io": {"interconnects": [], "numa_nodes": []}, "warnings": []}
        p = ai_hwaccel.plan(model={"params_b": 70}, registry=reg)
        self.assertIsNone(p.fits, p.explanation)
        self.assertEqual(p.raw["refusal"]["code"], "insufficient_memory")
        self.assertIn("left out because their memory is unknown", p.raw["refusal"]["text"])
        rows = ai_hwaccel.fit(registry=reg, filter="Llama-3.1-70B")
        self.assertEqual([(r["model"], r["fits"], r["refusal"]) for r in rows],
                         [("Llama-3.1-70B", None, "insufficient_memory")], rows)
        for doc in (ai_hwaccel.fit.__doc__, ai_hwaccel.Plan.__doc__):
            self.assertIn("memory is unknown", doc)
            self.assertIn("insufficient_memory", doc)

    def test_suggest_and_training(self):
        req = {"model": {"params_b": 8}, "registry": self.fixture()}
        self.assertIn(ai_hwaccel.suggest_quant(req)["quant"], ("fp32", "fp16", "bf16", "fp8", "int8", "int4"))
        train = ai_hwaccel.estimate_training(req)
        self.assertIsInstance(train, dict)
        self.assertNotIn("error", train)

    def test_rent(self):
        # rent (issue 26): catalog machines ranked by cost per token; the
        # filters go in "rent", and a user price replaces the catalog's.
        a = ai_hwaccel.rent(model={"name": "Llama-3.1-8B"}, rent={"providers": ["aws"],
            "prices": {"schema": 1, "machines": [{"provider": "aws", "type": "p5.4xlarge",
                                                  "price": {"usd_per_hour": 1.5, "seen": "2026-11-20"}}]}})
        self.assertEqual(a["sort"], "cost")
        self.assertTrue(a["choices"])
        self.assertEqual({c["provider"] for c in a["choices"]}, {"aws"})
        p5 = [c for c in a["choices"] if c["type"] == "p5.4xlarge"][0]
        self.assertEqual((p5["price_per_hour"], p5["price_from"]), (1.5, "user"))
        with self.assertRaises(ai_hwaccel.HwaccelError) as cm:
            ai_hwaccel.rent(model={"name": "Llama-3.1-8B"}, registry=self.fixture())
        self.assertEqual(cm.exception.code, "invalid_argument")

    def test_errors(self):
        rows = [
            ("unknown option", lambda: ai_hwaccel.detect(bogus=1), "invalid_argument"),
            ("bad json", lambda: ai_hwaccel.plan_sharding('{"model":'), "invalid_json"),
            ("empty request", lambda: ai_hwaccel.suggest_quant(""), "invalid_argument"),
            ("no request", lambda: ai_hwaccel.plan_sharding(None), "invalid_argument"),
            ("unknown model", lambda: ai_hwaccel.plan_sharding(model={"name": "no-such-model-xyz"}), "unknown_model"),
            ("sysroot not a dir", lambda: ai_hwaccel.detect(sysroot="/nonexistent/x"), "detection_failed"),
        ]
        for name, fn, code in rows:
            with self.subTest(name):
                self.assertErrorCode(code, fn)

    def assertErrorCode(self, code, fn):
        with self.assertRaises(ai_hwaccel.HwaccelError) as cm:
            fn()
        self.assertEqual(cm.exception.code, code, cm.exception.message)
        self.assertIn(cm.exception.code, STABLE_CODES)
        self.assertTrue(cm.exception.message)

    def test_detect_errors(self):
        rows = [
            ("truncated", "{", "invalid_json"),
            ("not utf-8", b"\xff\xfe", "invalid_json"),
            ("nested too deep", "[" * 100000 + "]" * 100000, "invalid_json"),
            ("negative timeout", {"timeout_ms": -5}, "invalid_argument"),
            ("over 16 MiB", b" " * (16 << 20) + b"{}", "too_large"),
        ]
        for name, options, code in rows:
            with self.subTest(name):
                self.assertErrorCode(code, lambda: ai_hwaccel.detect(options))

    def test_planning_errors(self):
        # Requests as text: the library, not the binding, judges them.
        rows = [
            ("no request", None, "invalid_argument"),
            ("empty", "", "invalid_argument"),
            ("truncated", "{", "invalid_json"),
            ("not an object", "[]", "invalid_argument"),
            ("over 16 MiB", b"[" * (20 << 20), "too_large"),
        ]
        for fn in (ai_hwaccel.suggest_quant, ai_hwaccel.plan_sharding, ai_hwaccel.estimate_training):
            for name, request, code in rows:
                with self.subTest(fn=fn.__name__, case=name):
                    self.assertErrorCode(code, lambda: fn(request))

    def test_embedded_nul_is_refused(self):
        # The C functions read up to the first NUL: this request used to
        # detect "/" (the text before the NUL is "{}") instead of CPU_ONLY.
        opts = '{}\0{"sysroot":%s,"no_exec":true}' % json.dumps(CPU_ONLY)
        for request in (opts, opts.encode()):
            with self.subTest(type=type(request).__name__):
                self.assertErrorCode("invalid_argument", lambda: ai_hwaccel.detect(request))
        for fn in (ai_hwaccel.suggest_quant, ai_hwaccel.plan_sharding, ai_hwaccel.estimate_training):
            with self.subTest(fn=fn.__name__):
                self.assertErrorCode("invalid_argument", lambda: fn('{"model":{"params_b":7}}\0'))
        # The 0.2.0 functions: each text before the NUL alone would be answered.
        for fn, text in ((ai_hwaccel.models, '{"filter":"llama"}'), (ai_hwaccel.fit, '{"filter":"llama-3.1-8b"}'),
                         (ai_hwaccel.rent, '{"model":"8b","rent":{"providers":["aws"]}}')):
            with self.subTest(fn=fn.__name__):
                self.assertErrorCode("invalid_argument", lambda: fn(text + "\0x"))

    def test_threads(self):
        # Concurrent detections, vendor tools included, answer the same
        # registry (timing aside) as a lone one.
        def strip(reg):
            reg.pop("timing", None)
            return reg

        want = strip(ai_hwaccel.detect(dgx()))
        results, errors = [], []

        def work():
            try:
                for _ in range(5):
                    results.append(strip(ai_hwaccel.detect(dgx())))
                for _ in range(20):
                    results.append(ai_hwaccel.detect(sysroot=CPU_ONLY, no_exec=True)["devices"][0]["id"])
            except Exception as e:  # reported below
                errors.append(e)

        threads = [threading.Thread(target=work) for _ in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(errors, [])
        self.assertEqual([r for r in results if r != "cpu:0"], [want] * 40)
        self.assertEqual(results.count("cpu:0"), 160)

    def test_calls_release_the_gil(self):
        # docs/python.md: the package calls the library "releasing the GIL
        # during each call". A detection whose only tool hangs blocks in the
        # library for its timeout_ms; a Python thread must keep running
        # meanwhile (holding the GIL, it would not tick once in that time).
        with tempfile.TemporaryDirectory() as tools:
            hang = os.path.join(tools, "nvidia-smi")
            with open(hang, "w") as f:
                f.write("#!/bin/sh\nexec sleep 30\n")
            os.chmod(hang, 0o755)
            ticks, stop = [], threading.Event()

            def ticker():
                while not stop.is_set():
                    ticks.append(time.monotonic())
                    time.sleep(0.01)

            t = threading.Thread(target=ticker)
            t.start()
            try:
                start = time.monotonic()
                reg = ai_hwaccel.detect(sysroot=os.path.join(DGX, "root"), path=tools, backends=["cuda"],
                                        timeout_ms=1000)
                end = time.monotonic()
            finally:
                stop.set()
                t.join()
        codes = [w["code"] for w in reg["warnings"]]
        self.assertIn("tool_timeout", codes, "the call blocked on the hanging tool")
        self.assertGreaterEqual(end - start, 0.9, "the call lasted its timeout_ms")
        during = [x for x in ticks if start + 0.2 < x < end - 0.2]
        self.assertGreater(len(during), 5, "the other thread ran while the library worked")

    def test_answers_are_freed(self):
        # Each error answer echoes the 4000-character key: ~4 KiB per call.
        # 20000 leaked answers would be ~80 MB, which the RSS check below would see.
        opts = {"k" * 4000: 1}
        for _ in range(2000):  # warm up allocator and runtime
            self.assertRaises(ai_hwaccel.HwaccelError, ai_hwaccel.detect, opts)
        before = rss_kb()
        for _ in range(20000):
            self.assertRaises(ai_hwaccel.HwaccelError, ai_hwaccel.detect, opts)
        grown_mb = (rss_kb() - before) / 1024
        self.assertLess(grown_mb, 20, "RSS grew %.1f MB over 20000 calls" % grown_mb)

    def test_registry_answers_are_freed(self):
        # Successful answers too: cached registries (no detection work, so
        # only the answer's allocation) alternating with error answers.
        opts = {"sysroot": CPU_ONLY, "no_exec": True, "cache_ttl_ms": 600000}
        size = len(ai_hwaccel.detect_json(opts))
        for _ in range(2000):  # warm up
            ai_hwaccel.detect_json(opts)
        before = rss_kb()
        for i in range(20000):
            if i % 2:
                ai_hwaccel.detect_json(opts)
            else:
                self.assertRaises(ai_hwaccel.HwaccelError, ai_hwaccel.plan_sharding, "{")
        grown = (rss_kb() - before) * 1024
        self.assertLess(grown, 5 * 1000 * 1000, "RSS grew %d bytes (10000 registries: %d)" % (grown, 10000 * size))


class CtypesApi(ApiTests, unittest.TestCase):
    BACKEND = "ctypes"

    def test_json_functions_return_void_pointers(self):
        lib = _lib.backend()._lib
        for fn in _lib.JSON_FUNCTIONS:
            self.assertIs(getattr(lib, fn).restype, ctypes.c_void_p, fn)
            self.assertEqual(getattr(lib, fn).argtypes, [ctypes.c_char_p], fn)
        self.assertEqual(lib.hwaccel_free_string.argtypes, [ctypes.c_void_p])
        self.assertIs(lib.hwaccel_version.restype, ctypes.c_char_p)  # static storage, never freed


def cffi_missing():
    try:
        import cffi  # noqa: F401

        return None
    except ImportError as e:
        return "cffi is not installed (%s): the cffi backend is optional; pip install cffi to test it" % e


@unittest.skipIf(cffi_missing(), cffi_missing())
class CffiApi(ApiTests, unittest.TestCase):
    BACKEND = "cffi"


class Loading(unittest.TestCase):
    """Where the library is found, and when (fresh interpreters)."""

    PRINT = "import ai_hwaccel; print(ai_hwaccel.library_path()); print(ai_hwaccel.version())"

    def test_import_does_not_load(self):
        code = (
            "import ai_hwaccel\n"
            "maps = open('/proc/self/maps').read()\n"
            "print('libai_hwaccel' in maps)\n"
            "ai_hwaccel.version()\n"
            "print('libai_hwaccel' in open('/proc/self/maps').read())\n"
        )
        rc, out, err = run_python(code)
        self.assertEqual(rc, 0, err)
        self.assertEqual(out.split(), ["False", "True"])

    def test_env_directory(self):
        rc, out, err = run_python(self.PRINT, {"AI_HWACCEL_LIB": os.path.dirname(LIB)})
        self.assertEqual(rc, 0, err)
        self.assertEqual(out.split()[0], os.path.join(os.path.abspath(os.path.dirname(LIB)), _lib.SONAME))

    def test_bundled_in_package(self):
        with tempfile.TemporaryDirectory() as tmp:
            shutil.copytree(os.path.join(PYDIR, "ai_hwaccel"), os.path.join(tmp, "ai_hwaccel"))
            shutil.copy(os.path.realpath(LIB), os.path.join(tmp, "ai_hwaccel", _lib.SONAME))
            rc, out, err = run_python(self.PRINT, drop=("AI_HWACCEL_LIB", "LD_LIBRARY_PATH"), cwd=tmp)
            self.assertEqual(rc, 0, err)
            self.assertEqual(out.split()[0], os.path.join(tmp, "ai_hwaccel", _lib.SONAME))

    def test_system_loader(self):
        env = {"LD_LIBRARY_PATH": os.path.dirname(os.path.realpath(LIB))}
        rc, out, err = run_python(self.PRINT, env, drop=("AI_HWACCEL_LIB",))
        self.assertEqual(rc, 0, err)
        self.assertEqual(out.split()[0], _lib.SONAME)

    def test_not_found_says_how_to_fix(self):
        rc, out, err = run_python(self.PRINT, {"LD_LIBRARY_PATH": "/nonexistent"}, drop=("AI_HWACCEL_LIB",))
        self.assertNotEqual(rc, 0)
        self.assertIn("ImportError: libai_hwaccel not found; set AI_HWACCEL_LIB", err)

    def test_env_naming_a_missing_file_loads_no_other_copy(self):
        # The system loader could find the library (LD_LIBRARY_PATH), but the
        # user named another file: that is an ImportError, not a silent
        # fallback to a different copy.
        missing = "/nonexistent/libai_hwaccel.so.0"
        env = {"AI_HWACCEL_LIB": missing, "LD_LIBRARY_PATH": os.path.dirname(os.path.realpath(LIB))}
        for backend in ("ctypes", "cffi"):
            with self.subTest(backend=backend):
                rc, out, err = run_python(self.PRINT, dict(env, AI_HWACCEL_BACKEND=backend))
                self.assertNotEqual(rc, 0, out)
                self.assertIn("ImportError: AI_HWACCEL_LIB=%s: cannot load %s" % (missing, missing), err)

    def test_env_naming_another_library_is_an_import_error(self):
        # A shared library without our functions (the C library itself):
        # ImportError naming the file, not AttributeError.
        with open("/proc/self/maps") as f:
            libc = next(line.split()[-1] for line in f if re.search(r"/libc[.-]", line))
        for backend in ("ctypes", "cffi"):
            with self.subTest(backend=backend):
                rc, out, err = run_python(self.PRINT, {"AI_HWACCEL_LIB": libc, "AI_HWACCEL_BACKEND": backend})
                self.assertNotEqual(rc, 0, out)
                last = err.strip().splitlines()[-1]
                self.assertTrue(last.startswith("ImportError: %s is not libai_hwaccel" % libc), err)

    def test_backend_from_environment(self):
        rc, out, err = run_python(
            "import ai_hwaccel; print(ai_hwaccel.backend_name())", {"AI_HWACCEL_BACKEND": "nope"}
        )
        self.assertNotEqual(rc, 0)
        self.assertIn("AI_HWACCEL_BACKEND='nope'", err)


class Fork(unittest.TestCase):
    """fork() after import but before the first call is fine; after a call the
    child gets "forked_child" instead of hanging (include/ai_hwaccel.h)."""

    CODE = """
import os, signal, sys, ai_hwaccel
if sys.argv[1] == "load-first":
    ai_hwaccel.version()
r, w = os.pipe()
pid = os.fork()
if pid == 0:
    signal.alarm(10)  # hang detector: a hung child dies by SIGALRM
    os.close(r)
    try:
        reg = ai_hwaccel.detect(sysroot=sys.argv[2], no_exec=True)
        msg = "ok " + reg["devices"][0]["id"]
    except ai_hwaccel.HwaccelError as e:
        msg = "error " + e.code
    os.write(w, msg.encode())
    os._exit(0)
os.close(w)
_, status = os.waitpid(pid, 0)
parent = ai_hwaccel.detect(sysroot=sys.argv[2], no_exec=True)["devices"][0]["id"]
print(os.read(r, 100).decode(), os.waitstatus_to_exitcode(status), "parent", parent)
"""

    def run_case(self, mode):
        p = subprocess.run(
            [sys.executable, "-c", self.CODE, mode, CPU_ONLY], cwd=PYDIR, capture_output=True, text=True, timeout=60
        )
        self.assertEqual(p.returncode, 0, p.stderr)
        return p.stdout.strip()

    def test_fork_before_first_call_works(self):
        self.assertEqual(self.run_case("import-only"), "ok cpu:0 0 parent cpu:0")

    def test_fork_after_load_is_an_error_not_a_hang(self):
        self.assertEqual(self.run_case("load-first"), "error forked_child 0 parent cpu:0")


class Example(unittest.TestCase):
    def test_show_devices_runs_from_the_checkout(self):
        """examples/python-ctypes/show_devices.py imports the package from
        python/ without an install."""
        opts = json.dumps(dgx())
        p = subprocess.run([sys.executable, EXAMPLE, opts], cwd=tempfile.gettempdir(), capture_output=True,
                           text=True, timeout=60)  # fmt: skip
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("libai_hwaccel %s (ABI %d)" % (ai_hwaccel.__version__, _lib.ABI_VERSION), p.stdout)
        self.assertRegex(p.stdout, r"\ncuda:7 +NVIDIA H100 80GB HBM3 ")
        self.assertIn("plan for a 70B model: fits=True", p.stdout)
        # layer_end is one past the last layer (schema/plan.schema.json): a
        # 70-layer model on eight GPUs of tensor parallelism holds layers
        # 0-69 on each, as the CLI's LAYERS column says; it printed 0-70.
        self.assertRegex(p.stdout, r"\n  cuda:0 +layers 0-69 ")
        self.assertNotIn("layers 0-70", p.stdout)

    def test_python_md_example_runs_and_names_the_last_layer(self):
        """docs/python.md's complete example, run as written on the dgx-h100
        fixture (its detect() call given the fixture's options): it plans
        Llama-3.1-8B for vLLM, and prints each shard's layers as the CLI
        does, first to last (0-31 of 32), not first to layer_end (0-32)."""
        with open(os.path.join(ROOT, "docs", "python.md")) as f:
            doc = f.read()
        code = re.search(r"```python\n(# plan\.py:.*?)```", doc, re.S).group(1)
        call = "ai_hwaccel.detect(timeout_ms=10000)"
        self.assertIn(call, code)
        code = code.replace(call, "ai_hwaccel.detect(%r)" % dgx())
        p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                           env=dict(os.environ, PYTHONPATH=PYDIR, AI_HWACCEL_LIB=LIB))  # fmt: skip
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("fits: True", p.stdout)
        self.assertRegex(p.stdout, r"\n  cuda:0: layers 0-31, ")
        self.assertNotIn("layers 0-32", p.stdout)


class Packaging(unittest.TestCase):
    def fresh_venv(self, tmp):
        """A new virtual environment with no index (PIP_NO_INDEX) and no
        variable that would find the checkout's library; returns (python, env)."""
        venv = os.path.join(tmp, "venv")
        p = subprocess.run([sys.executable, "-m", "venv", venv], capture_output=True, text=True, timeout=300)
        self.assertEqual(p.returncode, 0, p.stderr)
        env = {k: v for k, v in os.environ.items() if k not in ("AI_HWACCEL_LIB", "LD_LIBRARY_PATH", "PYTHONPATH")}
        env.update(PIP_DISABLE_PIP_VERSION_CHECK="1", PIP_NO_INDEX="1")
        return os.path.join(venv, "bin", "python"), env

    def test_install_offline(self):
        """`pip install --no-index ./python` in a fresh virtual environment,
        build isolation on (pip's default): the in-tree backend
        (python/_build/backend.py) needs nothing from an index, where
        setuptools' did ("pip subprocess to install build dependencies did
        not run successfully").  The installed copy imports and runs; its
        console script says that it carries no command."""
        with tempfile.TemporaryDirectory() as tmp:
            py, env = self.fresh_venv(tmp)
            p = subprocess.run([py, "-m", "pip", "install", "--quiet", "--no-index", PYDIR],
                               capture_output=True, text=True, timeout=300, env=env, cwd=tmp)  # fmt: skip
            self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
            code = "import ai_hwaccel; print(ai_hwaccel.__file__); print(ai_hwaccel.version())"
            p = subprocess.run([py, "-c", code], capture_output=True, text=True, timeout=120,
                               env=dict(env, AI_HWACCEL_LIB=LIB), cwd=tmp)  # fmt: skip
            self.assertEqual(p.returncode, 0, p.stderr)
            lines = p.stdout.split()
            self.assertTrue(lines[0].startswith(os.path.join(tmp, "venv")), lines)
            self.assertEqual(lines[1], ai_hwaccel.__version__)
            cmd = os.path.join(tmp, "venv", "bin", "ai-hwaccel")
            p = subprocess.run([cmd, "--version"], capture_output=True, text=True, timeout=60, env=env)
            self.assertEqual(p.returncode, 127, p.stdout + p.stderr)
            self.assertIn("carries no ai-hwaccel command", p.stderr)

    def test_wheel_in_fresh_venv(self):
        """`make wheel`'s builder bundles the library and the command; pip
        installs the wheel with no index (no network) into a fresh virtual
        environment, `import ai_hwaccel` there finds its own copy with no
        AI_HWACCEL_LIB or LD_LIBRARY_PATH, and the console script
        `ai-hwaccel` is the command."""
        cli = os.path.join(os.path.dirname(os.path.realpath(LIB)), "ai-hwaccel")
        if not os.access(cli, os.X_OK):
            self.skipTest("no built command beside %s (make builds build/ai-hwaccel)" % LIB)
        with tempfile.TemporaryDirectory() as tmp:
            p = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "build-wheel.py"), "--lib", LIB,
                                "--cli", cli, "--out", os.path.join(tmp, "dist")],
                               capture_output=True, text=True, timeout=120)  # fmt: skip
            self.assertEqual(p.returncode, 0, p.stderr)
            wheel = p.stdout.strip()
            py, env = self.fresh_venv(tmp)
            p = subprocess.run([py, "-m", "pip", "install", "--quiet", "--no-index", wheel],
                               capture_output=True, text=True, timeout=300, env=env)  # fmt: skip
            self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
            code = ("import ai_hwaccel, json, sys; print(ai_hwaccel.library_path()); "
                    "print(ai_hwaccel.detect(sysroot=sys.argv[1], no_exec=True)['devices'][0]['id'])")  # fmt: skip
            p = subprocess.run([py, "-c", code, CPU_ONLY], capture_output=True, text=True, timeout=120, env=env, cwd=tmp)
            self.assertEqual(p.returncode, 0, p.stderr)
            path, device = p.stdout.split()
            self.assertTrue(path.startswith(os.path.join(tmp, "venv", "lib")), path)
            self.assertTrue(path.endswith("/ai_hwaccel/" + _lib.SONAME), path)
            self.assertEqual(device, "cpu:0")
            cmd = os.path.join(tmp, "venv", "bin", "ai-hwaccel")
            p = subprocess.run([cmd, "models", "--filter", "Llama-3.1-8B"], capture_output=True, text=True,
                               timeout=60, env=env)  # fmt: skip
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertIn("meta-llama/Llama-3.1-8B", p.stdout)


if __name__ == "__main__":
    unittest.main()
