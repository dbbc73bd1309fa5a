"""Tests of convert.py on real captures: the H200 runs kept verbatim in
internal/calibration/data (llama-bench JSON, llama-completion logs,
llama-fit-params output), the h200-vm machine's timing.txt, and a recorded
`go test -bench` output (testdata/README.md).

    python3 -m unittest discover -s scripts/device -p 'test_*.py'
"""
import io
import json
import os
import sys
import tarfile
import tempfile
import unittest
from contextlib import redirect_stdout

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
DATA = os.path.join(REPO, "internal", "calibration", "data")
sys.path.insert(0, HERE)
import convert  # noqa: E402

MEMORY = os.path.join(DATA, "llamacpp-cuda-h200-memory")
SPEED = os.path.join(DATA, "h200-speed")
FIT = os.path.join(DATA, "llamacpp-cuda-h200-fit")
TIMING = os.path.join(REPO, "testdata", "machines", "h200-vm", "captures", "timing.txt")
GOBENCH = os.path.join(HERE, "testdata", "gobench-detect.txt")
CPU_MEMORY = os.path.join(HERE, "testdata", "cpu-Qwen3-30B-A3B-2layers-Q4_K_M-c512-faon-f16-ncmoe1.log")
CPU_BENCH = os.path.join(HERE, "testdata", "cpu-Qwen3-30B-A3B-2layers-Q4_K_M-ot.json")


def read(path):
    # as convert.read_out reads captures: a log's generated text may hold
    # bytes that are not UTF-8 (the Qwen3-0.6B logs of 2026-11-28)
    with open(path, errors="replace") as f:
        return f.read()


class Parsers(unittest.TestCase):
    def test_memory_table_and_buffers(self):
        # shared/calibration/llamacpp-cuda-h200/README.md: "CUDA0 self 5173 = model 4403 +
        # context (KV) 512 + compute 258, unaccounted 608; Host model 281 (token_embd)"
        p = convert.parse_memory(read(os.path.join(MEMORY, "Llama-3.1-8B-Q4_K_M-c4096-faon-f16.log")))
        self.assertEqual(p["devices"]["CUDA0 (H200)"], {"total": 143155, "free": 137373, "self": 5173, "model": 4403,
                                                        "context": 512, "compute": 258, "unaccounted": 608})
        self.assertEqual(p["devices"]["Host"], {"self": 301, "model": 281, "context": 0, "compute": 20})
        self.assertEqual(p["buffers_mib"]["CUDA0 model"], 4403.49)
        self.assertEqual(p["buffers_mib"]["CPU_Mapped model"], 281.81)
        self.assertEqual(p["buffers_mib"]["CUDA0 KV"], 512.0)
        self.assertEqual(p["rc"], 0)
        self.assertAlmostEqual(p["prompt_tps"], 4701.08)

    def test_memory_four_sequences(self):
        p = convert.parse_memory(read(os.path.join(MEMORY, "Llama-3.1-8B-Q4_K_M-c65536-faon-f16-np4.log")))
        cuda = p["devices"]["CUDA0 (H200)"]
        self.assertEqual((cuda["self"], cuda["context"], cuda["unaccounted"]), (12853, 8192, 608))
        self.assertEqual(cuda["self"], cuda["model"] + cuda["context"] + cuda["compute"])

    def test_every_recorded_memory_log_parses(self):
        names = sorted(n for n in os.listdir(MEMORY) if n.endswith(".log"))  # README.md beside them
        self.assertEqual(len(names), 19)
        for name in names:
            p = convert.parse_memory(read(os.path.join(MEMORY, name)))
            self.assertEqual(convert.not_on_gpu("memory", p), "", name)
            for dev, v in p["devices"].items():
                # each figure is its bytes floored to MiB (common/fit.cpp), so self
                # may exceed the sum of the three floored parts by up to 2
                # (Phi-3-mini F16: 8721 = 7100 + 1536 + 84)
                parts = v["model"] + v["context"] + v["compute"]
                self.assertTrue(parts <= v["self"] <= parts + 2, f"{name} {dev}: {v}")

    def test_device_row_padded_to_a_wider_host_row(self):
        # llama.cpp pads the "self" column to its widest figure: with 17435 MiB
        # on the host the GPU's 1445 is printed "( 1445 =" (run2 of the
        # H200 of 2026-11-28, llama.cpp 34af94cd, --n-cpu-moe 48 and -ot)
        cases = {"Qwen3-30B-A3B-Q4_K_M-c4096-faon-f16-ncmoe48.log": (141031, 1445, 760, 384, 300, 679, 17435, 17423),
                 "Qwen3-30B-A3B-Q4_K_M-c4096-faon-f16-ot.log": (132663, 9815, 9130, 384, 300, 677, 17435, 17423),
                 "Qwen3-30B-A3B-Q4_K_M-c4096-faon-f16-ncmoe24.log": (132657, 9815, 9130, 384, 300, 683, 8807, 8795)}
        for name, (free, self_, model, ctx, compute, unacc, host_self, host_model) in cases.items():
            p = convert.parse_memory(read(os.path.join(MEMORY, name)))
            self.assertEqual(p["devices"]["CUDA0 (H200)"], {"total": 143155, "free": free, "self": self_, "model": model,
                                                            "context": ctx, "compute": compute, "unaccounted": unacc}, name)
            self.assertEqual(p["devices"]["Host"], {"self": host_self, "model": host_model, "context": 0, "compute": 12}, name)
            self.assertEqual(convert.not_on_gpu("memory", p), "", name)

    def test_cut_log_is_rejected(self):
        # a run killed at its deadline leaves a log without the table at exit
        text = read(os.path.join(MEMORY, "Llama-3.1-8B-Q4_K_M-c4096-faon-f16.log"))
        cut = text[: text.index("common_perf_print")]
        parsed, err = convert.parse_file("memory", cut)
        self.assertIsNone(parsed)
        self.assertIn("no common_memory_breakdown_print table", err)

    def test_fit(self):
        # issue 27's table: card 8192 default context -> -c 23808 all layers;
        # -c 32768 -> -ngl 28; 12288 F16 -c 8192 -> -ngl 24
        cases = {"Llama-3.1-8B-card8192.txt": (23808, -1), "Llama-3.1-8B-card8192-c32768.txt": (32768, 28),
                 "Llama-3.1-8B-F16-card12288-c8192.txt": (8192, 24), "Llama-3.1-8B-card6144.txt": (7424, -1),
                 "Llama-3.1-8B-card6144-c32768.txt": (32768, 20)}
        for name, (ctx, ngl) in cases.items():
            p = convert.parse_fit(read(os.path.join(FIT, name)))
            self.assertEqual((p["ctx"], p["ngl"], p["rest"]), (ctx, ngl, ""), name)

    def test_bench(self):
        rows = convert.parse_bench(read(os.path.join(SPEED, "Llama-3.1-8B-Q4_K_M.json")))
        pp = next(r for r in rows if r["n_prompt"] == 512)
        tg = next(r for r in rows if r["n_gen"] == 128)
        self.assertAlmostEqual(pp["avg_ts"], 9258.086137)
        self.assertAlmostEqual(tg["avg_ts"], 264.696647)
        self.assertEqual((tg["n_cpu_moe"], tg["tensor_buft_overrides"], tg["gpu_info"]), (0, "none", "NVIDIA H200"))
        depth = convert.parse_bench(read(os.path.join(SPEED, "Llama-3.1-8B-Q4_K_M-depth.json")))
        self.assertEqual([(r["n_depth"], round(r["avg_ts"], 1)) for r in depth], [(4096, 248.3), (32768, 180.3)])

    def test_timing(self):
        p = convert.parse_timing(read(TIMING))
        # h200-vm README: nvidia-smi --query-gpu 30.5-35.8 ms over 5 runs
        self.assertEqual(len(p["nvidia-smi-query"]["runs_us"]), 5)
        self.assertEqual(p["nvidia-smi-query"]["median_ms"], 35.03)
        self.assertEqual(p["ai-hwaccel-noexec"]["median_ms"], 8.8)

    def test_gobench(self):
        p = convert.parse_gobench(read(GOBENCH))
        self.assertEqual([(r["name"], r["procs"], r["n"]) for r in p["runs"]], [("BenchmarkDetectH200NVML", 2, 5)])
        self.assertEqual(p["runs"][0]["ns_per_op"], 1008004)
        self.assertEqual(p["skipped"], [{"name": "BenchmarkDetectLiveNVML",
                                         "reason": "no GPU read through nvml on this machine (1 devices, warnings [])"}])

    def test_cpu_backend_tables(self):
        # the --cpu dry run's llama.cpp: a Host row and a CPU_REPACK row, no GPU
        p = convert.parse_memory(read(CPU_MEMORY))
        self.assertEqual(p["devices"], {"Host": {"self": 1328, "model": 1021, "context": 2, "compute": 304},
                                        "CPU_REPACK": {"self": 559, "model": 559, "context": 0, "compute": 0}})
        self.assertIn("not a GPU run", convert.not_on_gpu("memory", p))
        b = convert.parse_bench(read(CPU_BENCH))
        self.assertEqual({r["tensor_buft_overrides"] for r in b}, {"blk\\.1\\.ffn_(up|down|gate)_exps=CPU"})
        self.assertEqual(convert.not_on_gpu("bench", b), "not a GPU run (backends CPU)")
        h200 = convert.parse_memory(read(os.path.join(MEMORY, "Llama-3.1-8B-Q4_K_M-c4096-faon-f16.log")))
        self.assertEqual(convert.not_on_gpu("memory", h200), "")

    def test_not_a_bench_json(self):
        parsed, err = convert.parse_file("bench", read(os.path.join(FIT, "Llama-3.1-8B-card8192.txt")))
        self.assertIsNone(parsed)
        self.assertTrue(err.startswith("JSONDecodeError"), err)


class Rows(unittest.TestCase):
    """An $OUT laid out as h200-run.sh writes it, from the real captures."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.out = os.path.join(self.tmp.name, "out")
        self.dest = os.path.join(self.tmp.name, "dest")
        os.makedirs(self.out)
        self.files = {
            "memory/Llama-3.1-8B-Q4_K_M-c4096-faon-f16.log": os.path.join(MEMORY, "Llama-3.1-8B-Q4_K_M-c4096-faon-f16.log"),
            "speed/Llama-3.1-8B-Q4_K_M.json": os.path.join(SPEED, "Llama-3.1-8B-Q4_K_M.json"),
            "fit/Llama-3.1-8B-card8192.txt": os.path.join(FIT, "Llama-3.1-8B-card8192.txt"),
            "fit/free.txt": os.path.join(FIT, "free.txt"),
            "detect/nvidia-smi-timing.txt": TIMING,
            "detect/warm-bench.txt": GOBENCH,
        }
        self.files["memory/cpu-ncmoe1.log"] = CPU_MEMORY
        self.files["speed/cpu-ot.json"] = CPU_BENCH
        cut = read(os.path.join(MEMORY, "Llama-3.1-8B-Q8_0-c32768-faon-f16.log"))
        cut = cut[: cut.index("common_perf_print")]
        with tarfile.open(os.path.join(self.out, "raw.tar.gz"), "w:gz") as t:
            for rel, src in self.files.items():
                t.add(src, arcname="raw/" + rel)
            info = tarfile.TarInfo("raw/memory/Llama-3.1-8B-Q8_0-c32768-faon-f16.log")
            info.size = len(cut.encode())
            t.addfile(info, io.BytesIO(cut.encode()))
        with open(os.path.join(self.out, "results.jsonl"), "w") as f:
            for rel, src in self.files.items():
                kind = convert.kind_of(rel) or "text"
                buf = io.StringIO()
                with redirect_stdout(buf):
                    convert.main(["line", "--stage", rel.split("/")[0], "--step", rel, "--kind", kind,
                                  "--status", "ok", "--file", src])
                f.write(buf.getvalue())
            f.write('{"stage": "speed", "step": "cut by the kill')  # the line a killed run leaves

    def tearDown(self):
        self.tmp.cleanup()

    def test_results_lines_carry_the_figures(self):
        results, _ = convert.read_out(self.out)
        self.assertEqual(len(results), len(self.files))  # the cut line is dropped
        mem = next(r for r in results if r["kind"] == "memory")
        self.assertEqual(mem["parsed"]["devices"]["CUDA0 (H200)"]["self"], 5173)

    def test_rows_copy_what_parses_verbatim(self):
        with redirect_stdout(io.StringIO()):
            s = convert.rows(self.out, self.dest)
        for rel, sub in (("memory/Llama-3.1-8B-Q4_K_M-c4096-faon-f16.log", "llamacpp-cuda-h200-memory"),
                         ("speed/Llama-3.1-8B-Q4_K_M.json", "h200-speed"),
                         ("fit/Llama-3.1-8B-card8192.txt", "llamacpp-cuda-h200-fit"),
                         ("fit/free.txt", "llamacpp-cuda-h200-fit")):
            got = read(os.path.join(self.dest, sub, os.path.basename(rel)))
            self.assertEqual(got, read(self.files[rel]), rel)
        self.assertEqual(sorted(s["rejected"]), ["memory/Llama-3.1-8B-Q8_0-c32768-faon-f16.log",
                                                 "memory/cpu-ncmoe1.log", "speed/cpu-ot.json"])
        self.assertFalse(os.path.exists(os.path.join(self.dest, "h200-speed", "cpu-ot.json")))
        self.assertFalse(os.path.exists(os.path.join(self.dest, "llamacpp-cuda-h200-memory",
                                                     "Llama-3.1-8B-Q8_0-c32768-faon-f16.log")))
        md = read(os.path.join(self.dest, "summary.md"))
        self.assertIn("tg128: 264.7 tok/s", md)
        self.assertIn("CUDA0 (H200): self 5173 = 4403 + 512 + 258, unaccounted 608", md)
        self.assertIn("-c 23808 -ngl -1", md)
        self.assertIn("nvidia-smi-query: median 35.03 ms over 5 runs", md)
        self.assertIn("BenchmarkDetectH200NVML: 1.008 ms/op", md)
        self.assertEqual(json.loads(read(os.path.join(self.dest, "summary.json")))["rows"].keys(), s["rows"].keys())

    def test_fit_without_the_gpus_free_memory_is_not_a_gpu_row(self):
        out = os.path.join(self.tmp.name, "out2")
        os.makedirs(out)
        with tarfile.open(os.path.join(out, "raw.tar.gz"), "w:gz") as t:
            t.add(self.files["fit/Llama-3.1-8B-card8192.txt"], arcname="raw/fit/Llama-3.1-8B-card8192.txt")
        with redirect_stdout(io.StringIO()):
            s = convert.rows(out, self.dest)
        self.assertEqual(s["rejected"], {"fit/Llama-3.1-8B-card8192.txt": "not a GPU run (no fit/free.txt)"})

    def test_rows_copy_bytes_that_are_not_utf8(self):
        # the Qwen3-0.6B logs of the H200 (2026-11-28) hold non-UTF-8 bytes
        # in their generated text; rows() must copy them byte for byte, from
        # raw.tar.gz and from an unpacked raw/
        name = "Qwen3-0.6B-F16-c4096-faon-f16.log"
        with open(os.path.join(MEMORY, name), "rb") as f:
            want = f.read()
        with self.assertRaises(UnicodeDecodeError):
            want.decode()
        tgz, plain = os.path.join(self.tmp.name, "tgz"), os.path.join(self.tmp.name, "plain")
        os.makedirs(tgz)
        with tarfile.open(os.path.join(tgz, "raw.tar.gz"), "w:gz") as t:
            t.add(os.path.join(MEMORY, name), arcname="raw/memory/" + name)
        os.makedirs(os.path.join(plain, "raw", "memory"))
        with open(os.path.join(plain, "raw", "memory", name), "wb") as f:
            f.write(want)
        for out in (tgz, plain):
            dest = os.path.join(out, "dest")
            with redirect_stdout(io.StringIO()):
                s = convert.rows(out, dest)
            self.assertEqual(list(s["rows"]), ["memory/" + name], out)
            with open(os.path.join(dest, "llamacpp-cuda-h200-memory", name), "rb") as f:
                self.assertEqual(f.read(), want, out)

    def test_any_backend_keeps_the_dry_run(self):
        with redirect_stdout(io.StringIO()):
            s = convert.rows(self.out, self.dest, any_backend=True)
        self.assertEqual(list(s["rejected"]), ["memory/Llama-3.1-8B-Q8_0-c32768-faon-f16.log"])
        self.assertEqual(read(os.path.join(self.dest, "h200-speed", "cpu-ot.json")), read(CPU_BENCH))


if __name__ == "__main__":
    unittest.main()
