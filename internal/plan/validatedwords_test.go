package plan

import (
	"go/ast"
	"go/parser"
	"go/token"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/calibration"
	"github.com/ai-hwaccel/ai-hwaccel/internal/engine"
	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// speedRowsCase is a plan whose validated_on speaks of the speed rows of
// internal/calibration/data: body names the engine as %s.
type speedRowsCase struct {
	body string
	devs func() []registry.Device
	// llamaCPP is the plan's validated_on under llama.cpp.
	llamaCPP string
	// neutral is, where not "", the plan's validated_on under an engine
	// with llama.cpp's rules that does not name the rows (kernelHostServer).
	neutral string
}

// secondRTX3090 is rtx3090 as cuda:1.
func secondRTX3090() registry.Device {
	d := rtx3090()
	d.ID, d.Index = registry.DeviceID(registry.KindCUDA, 1), 1
	return d
}

// speedRowsCases cover every sentence of validatedOn that names the speed
// rows of a SpeedKernels engine: a MoE offload (whole layers' experts and
// part of one, on one GPU and split over two), every routed expert on the
// CPU, whole layers on the CPU, today's CUDA build's cells (validated
// k-quants, 16-bit, Q8_0, a split over two GPUs), an HBM cell, the HBM Q8_0
// cell and a CPU cell. The llama.cpp sentences were captured from the
// code before the engine named its rows (validated.go spelled them); the
// goldens hold some of them too.
var speedRowsCases = []speedRowsCase{
	{`{"model":{"name":"gpt-oss-120b"},"engine":"%s","cpu_offload":true,"context_length":4096}`,
		func() []registry.Device { return []registry.Device{rtx3090(), host(128 << 30)} },
		"not validated: the experts run from host memory; the --n-cpu-moe rows (internal/calibration/data/offload_decode.json: two published machines and a recorded H200 VM) replay within 25%, not the 12% a validated figure meets; no row moves part of a layer's experts (-ot)",
		"not validated: the experts run from host memory; the rows of routed experts on the CPU (internal/calibration/data/offload_decode.json: two published machines and a recorded H200 VM) replay within 25%, not the 12% a validated figure meets; no row moves part of a layer's experts"},
	{`{"model":{"name":"gpt-oss-120b"},"engine":"%s","cpu_offload":true,"context_length":4096}`,
		func() []registry.Device { return []registry.Device{rtx3090(), secondRTX3090(), host(128 << 30)} },
		"not validated: the experts run from host memory; the --n-cpu-moe rows (internal/calibration/data/offload_decode.json: two published machines and a recorded H200 VM) replay within 25%, not the 12% a validated figure meets; those rows are one GPU each, and no measurement checks this split over 2 GPUs; no row moves part of a layer's experts (-ot)", ""},
	{`{"model":{"name":"DeepSeek-V3"},"engine":"%s","cpu_offload":true,"quant":"q4_k_m","context_length":4096}`,
		func() []registry.Device { return []registry.Device{rtx3090(), secondRTX3090(), host(512 << 30)} },
		"not validated: the experts run from host memory; the --n-cpu-moe rows (internal/calibration/data/offload_decode.json: two published machines and a recorded H200 VM) replay within 25%, not the 12% a validated figure meets; those rows are one GPU each, and no measurement checks this split over 2 GPUs", ""},
	{`{"model":{"name":"DeepSeek-V3"},"engine":"%s","cpu_offload":true,"quant":"q2_k","context_length":4096}`,
		func() []registry.Device { return []registry.Device{rtx3090(), host(512 << 30)} },
		"not validated: the first layers and every routed expert run from host memory (llama.cpp -ngl 60 --cpu-moe); the published -ngl and --n-cpu-moe rows (internal/calibration/data/offload_decode.json) replay within 25%, not the 12% a validated figure meets, and no row keeps only the dense weights of some layers on the GPU",
		"not validated: the first layers and every routed expert run from host memory (HostServe); the published rows of layers and of routed experts on the CPU (internal/calibration/data/offload_decode.json) replay within 25%, not the 12% a validated figure meets, and no row keeps only the dense weights of some layers on the GPU"},
	{`{"model":{"name":"Llama-3.1-70B"},"engine":"%s","cpu_offload":true,"quant":"q8_0","context_length":4096}`,
		func() []registry.Device { return []registry.Device{rtx3090(), host(128 << 30)} },
		"not validated: part of the model runs from host memory; the published -ngl rows (internal/calibration/data/offload_decode.json, one machine) replay within 25%, not the 12% a validated figure meets",
		"not validated: part of the model runs from host memory; the published rows of layers on the CPU (internal/calibration/data/offload_decode.json, one machine) replay within 25%, not the 12% a validated figure meets"},
	{`{"model":{"name":"Llama-3.1-8B"},"engine":"%s","quant":"q4_k_m"}`,
		func() []registry.Device { return []registry.Device{rtx3090()} },
		"llama.cpp CUDA scoreboard rows of internal/calibration/data/prefill_today.json (docs/accuracy.md): NVIDIA Ampere GA10x GPUs (RTX 3060/3090/3090 Ti, RTX A5000/A6000, A40), kquant weights",
		"CUDA scoreboard rows of internal/calibration/data/prefill_today.json (docs/accuracy.md): NVIDIA Ampere GA10x GPUs (RTX 3060/3090/3090 Ti, RTX A5000/A6000, A40), kquant weights"},
	{`{"model":{"name":"Llama-3.1-8B"},"engine":"%s","quant":"fp16","context_length":4096}`,
		func() []registry.Device { return []registry.Device{rtx3090()} },
		"not validated: 16-bit weights on today's llama.cpp CUDA build on GDDR NVIDIA GPUs (internal/calibration/data/decode_today_microbatch.json: 4 16-bit rows (3 BF16, 1 F16), one GPU per architecture (RTX 3090, RTX 4090, RTX 5090), replay 7-19% too slow, median 11% under the May 2024 builds' 16-bit fraction), past the 12% a validated figure meets",
		"not validated: 16-bit weights on today's CUDA build on GDDR NVIDIA GPUs (internal/calibration/data/decode_today_microbatch.json: 4 16-bit rows (3 BF16, 1 F16), one GPU per architecture (RTX 3090, RTX 4090, RTX 5090), replay 7-19% too slow, median 11% under the May 2024 builds' 16-bit fraction), past the 12% a validated figure meets"},
	{`{"model":{"name":"Llama-3.1-8B"},"engine":"%s","quant":"q8_0"}`,
		func() []registry.Device { return []registry.Device{rtx3090()} },
		"not validated: no measurement of Q8_0 weights on today's llama.cpp CUDA build on this GPU architecture (the scoreboard rows are Q4_0, whose fraction Q8_0 takes); not validated until measured", ""},
	{`{"model":{"name":"Llama-3.1-70B"},"engine":"%s","quant":"q4_k_m","context_length":4096}`,
		func() []registry.Device { return []registry.Device{rtx3090(), secondRTX3090()} },
		"not validated: the scoreboard rows of today's llama.cpp CUDA build are one GPU each; none splits the layers over several GPUs",
		"not validated: the scoreboard rows of today's CUDA build are one GPU each; none splits the layers over several GPUs"},
	{`{"model":{"name":"Llama-3.1-8B"},"engine":"%s","quant":"q4_k_m"}`,
		func() []registry.Device { return []registry.Device{h100(0)} },
		"llama.cpp rows of internal/calibration/data (docs/accuracy.md): NVIDIA HBM GPUs (A100, H100 PCIe, H200), kquant weights",
		"rows of internal/calibration/data (docs/accuracy.md): NVIDIA HBM GPUs (A100, H100 PCIe, H200), kquant weights"},
	{`{"model":{"name":"Llama-3.1-8B"},"engine":"%s","quant":"q8_0"}`,
		func() []registry.Device { return []registry.Device{h200VM(0)} },
		"not validated: Q8_0 weights on HBM GPUs: the fitted H200 record (Llama-3.1-8B) replays within 12%, but the 2 held-out H200 Q8_0 records of llama.cpp 34af94cd (Llama-3.2-1B +7%, Phi-3-mini-4k-instruct +26%) replay with a median error of 17% (internal/calibration/data/h200-speed-34af94cd), past the 15% a held-out check meets",
		"not validated: Q8_0 weights on HBM GPUs: the fitted H200 record (Llama-3.1-8B) replays within 12%, but the 2 held-out H200 Q8_0 records (Llama-3.2-1B +7%, Phi-3-mini-4k-instruct +26%) replay with a median error of 17% (internal/calibration/data/h200-speed-34af94cd), past the 15% a held-out check meets"},
	{`{"model":{"name":"Llama-3.1-8B"},"engine":"%s","quant":"q4_k_m"}`,
		func() []registry.Device { return []registry.Device{host(64 << 30)} },
		"llama.cpp rows of internal/calibration/data (docs/accuracy.md): x86 CPUs (i9-13900K, i5-4278U; AMD EPYC Zen 5 vCPU, one thread per core measured (host_harness.json)), kquant weights", ""},
}

// speedRowsAnswer plans c under the engine named.
func speedRowsAnswer(t *testing.T, c speedRowsCase, name string) *ShardingAnswer {
	t.Helper()
	a := shard(t, request(t, strings.Replace(c.body, "%s", name, 1), reg(t, c.devs())))
	require.NotNil(t, a.Throughput, "%s: %s", name, dump(t, a))
	return a
}

// llamaCPPWords are words of llama.cpp's that only its own plans may speak:
// its name and the flags its speed rows ran with.
var llamaCPPWords = []string{"llama.cpp", "-ngl", "--n-cpu-moe", "--cpu-moe", "-ot", "exps=CPU"}

// validated_on spelled llama.cpp's rows and flags whatever the engine
// ("llama.cpp rows of internal/calibration/data", "the --n-cpu-moe rows",
// "(-ot)", "today's llama.cpp CUDA build", "records of llama.cpp
// 34af94cd"): an engine with llama.cpp's rules and speed model that does not
// name the rows as its own (engine.SpeedRowsNamer) now reads words naming
// them by what they measured and where they are, none of another engine's;
// whether it is validated does not change.
func TestValidatedOnOfAKernelsEngineNamesNoOtherEnginesRows(t *testing.T) {
	l, ok := engine.Lookup("llama.cpp")
	require.True(t, ok)
	e := kernelHostServer{hostServer{l}}
	require.Equal(t, engine.SpeedKernels, engine.SpeedModelOf(e))
	engine.Register(e)
	t.Cleanup(func() { engine.Unregister(e.Name()) })
	for _, c := range speedRowsCases {
		own, made := speedRowsAnswer(t, c, "llama.cpp"), speedRowsAnswer(t, c, e.Name())
		v := made.Throughput.ValidatedOn
		for _, w := range append(llamaCPPWords, "vLLM", "SGLang") {
			assert.NotContains(t, v, w, c.body)
		}
		assert.Equal(t, strings.HasPrefix(own.Throughput.ValidatedOn, NotValidated), strings.HasPrefix(v, NotValidated), "%s\n%s", own.Throughput.ValidatedOn, v)
		if c.neutral != "" {
			assert.Equal(t, c.neutral, v, c.body)
		}
	}
}

// Asking the engine for the words of its rows moved no answer of
// llama.cpp's: its validated_on sentences are those validated.go wrote when
// it spelled them itself.
func TestValidatedOnUnchangedForLlamaCPP(t *testing.T) {
	for _, c := range speedRowsCases {
		assert.Equal(t, c.llamaCPP, speedRowsAnswer(t, c, "llama.cpp").Throughput.ValidatedOn, c.body)
	}
}

// A plan of an engine whose runs no speed row measured says the figure it
// borrows is fitted on another engine's runs, and names that engine as
// the engine whose runs the rows are names itself (engine.SpeedRowsEngine:
// llama.cpp), not as the planner spells it; it names none of that
// engine's flags. A serving engine naming no calibration set (ownServer)
// and one with no speed model (streamServer) both.
func TestValidatedOnOfAnUnmeasuredEngineNamesTheRowsEngine(t *testing.T) {
	rows := engine.SpeedRowsEngine()
	require.NotNil(t, rows)
	require.Equal(t, "llama.cpp", rows.Title())
	for _, c := range []struct {
		e    engine.Engine
		want string
	}{
		{ownServer{speed: engine.SpeedServing, fit: calibration.ServingFit("")}, NotValidated + ": OwnServe names no calibration set fitted on its own runs that the planner holds constants for (engine.ServingFitted), so its plans pay no serving engine's fitted constants: the speed is the generic per-layer estimate, fitted on llama.cpp, which no OwnServe measurement checks"},
		{streamServer{}, NotValidated + ": the speed model is fitted on llama.cpp; no streamserve measurement checks it"},
	} {
		engine.Register(c.e)
		a := shard(t, request(t, `{"model":{"name":"Qwen3-8B"},"engine":"`+c.e.Name()+`","quant":"bf16"}`, reg(t, []registry.Device{h100(0)})))
		engine.Unregister(c.e.Name())
		require.NotNil(t, a.Throughput, dump(t, a))
		assert.Equal(t, c.want, a.Throughput.ValidatedOn, c.e.Name())
		for _, w := range llamaCPPWords[1:] {
			assert.NotContains(t, a.Throughput.ValidatedOn, w, c.e.Name())
		}
	}
}

// enginePhrases lists, as "file:line: phrase", every string literal of the
// Go source src that spells one of phrases.
func enginePhrases(t *testing.T, file string, src []byte, phrases []string) []string {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, file, src, 0)
	require.NoError(t, err, file)
	var out []string
	ast.Inspect(f, func(n ast.Node) bool {
		if x, ok := n.(*ast.BasicLit); ok && x.Kind == token.STRING {
			s, err := strconv.Unquote(x.Value)
			require.NoError(t, err)
			for _, p := range phrases {
				if strings.Contains(s, p) {
					out = append(out, file+":"+strconv.Itoa(fset.Position(x.Pos()).Line)+": "+p)
				}
			}
		}
		return true
	})
	return out
}

// prefillRowsCases cover every sentence of prefillValidatedOn that names
// the prompt rows of a SpeedKernels engine: today's CUDA scoreboard rows
// (an RTX 5090), the held-out H200 records (an H100), a cell without a
// held-out row (an A100), Apple GPUs validated and without a held-out row
// of q8 weights, an x86 CPU, and a GPU of no architecture today's build
// measured (an MI300X). The llama.cpp sentences were captured from the code
// before the engine's title qualified them (prefillvalidated.go spelled
// them); the goldens hold some of them too.
func prefillRowsCases() []speedRowsCase {
	rtx5090 := func() []registry.Device {
		d := gpu(registry.KindCUDA, 0, "NVIDIA GeForce RTX 5090", 32607<<20, "12.0")
		d.Vendor = "nvidia"
		return []registry.Device{d}
	}
	a100 := func() []registry.Device {
		d := gpu(registry.KindCUDA, 0, "NVIDIA A100-SXM4-80GB", 80<<30, "8.0")
		d.Vendor = "nvidia"
		return []registry.Device{d}
	}
	m2Ultra := func() []registry.Device {
		return []registry.Device{{ID: "metal:0", Kind: registry.KindMetal, Family: registry.KindMetal.Family(), Name: "Apple M2 Ultra",
			Vendor: "apple", Available: true, MemoryBytes: 192 << 30, MemoryUsableBytes: 144 << 30, MemoryShared: true, Cores: 76}}
	}
	epyc := func() []registry.Device {
		return []registry.Device{{ID: "cpu:0", Kind: registry.KindCPU, Family: registry.FamilyCPU, Name: "AMD EPYC 9654 96-Core Processor",
			Vendor: "amd", Available: true, MemoryBytes: 256 * gibBytes, Cores: 16}}
	}
	const q4 = `{"model":{"name":"Llama-3.1-8B"},"engine":"%s","quant":"q4_k_m"}`
	return []speedRowsCase{
		{q4, rtx5090,
			`llama.cpp CUDA scoreboard pp512 rows of internal/calibration/data/prefill_today.json (docs/accuracy.md, "Prefill by architecture"): NVIDIA GeForce Blackwell GPUs (12.0), kquant weights; 3 held-out rows, median |error| 7.7% (within 20%)`,
			`CUDA scoreboard pp512 rows of internal/calibration/data/prefill_today.json (docs/accuracy.md, "Prefill by architecture"): NVIDIA GeForce Blackwell GPUs (12.0), kquant weights; 3 held-out rows, median |error| 7.7% (within 20%)`},
		{q4, func() []registry.Device { return []registry.Device{h100(0)} },
			`llama.cpp 34af94cd pp512 records of an NVIDIA H200 in internal/calibration/data/h200-speed-34af94cd (docs/accuracy.md, "Fit set and held-out set"): NVIDIA Hopper GPUs (9.x), kquant weights; 2 held-out rows, median |error| 7.1% (within 20%)`,
			`pp512 records of an NVIDIA H200 in internal/calibration/data/h200-speed-34af94cd (docs/accuracy.md, "Fit set and held-out set"): NVIDIA Hopper GPUs (9.x), kquant weights; 2 held-out rows, median |error| 7.1% (within 20%)`},
		{q4, a100,
			"not validated: no held-out prompt row of kquant weights on NVIDIA GA100 GPUs (8.0: A100, A30) under llama.cpp CUDA, today's build: the GA100 fraction is fitted on one A30 row and no A100 row of today's build checks it",
			"not validated: no held-out prompt row of kquant weights on NVIDIA GA100 GPUs (8.0: A100, A30) under CUDA, today's build: the GA100 fraction is fitted on one A30 row and no A100 row of today's build checks it"},
		{q4, m2Ultra,
			`llama.cpp Metal pp512 rows of today's builds in internal/calibration/data/apple_today.json (docs/accuracy.md, "Prefill on Apple GPUs"): Apple GPUs, kquant weights; 6 held-out rows, median |error| 18.7% (within 20%)`,
			`Metal pp512 rows of today's builds in internal/calibration/data/apple_today.json (docs/accuracy.md, "Prefill on Apple GPUs"): Apple GPUs, kquant weights; 6 held-out rows, median |error| 18.7% (within 20%)`},
		{`{"model":{"name":"Llama-3.1-8B"},"engine":"%s","quant":"q8_0"}`, m2Ultra,
			"not validated: no held-out prompt row of q8 weights on Apple GPUs under llama.cpp Metal",
			"not validated: no held-out prompt row of q8 weights on Apple GPUs under Metal"},
		{`{"model":{"name":"Llama-3.2-1B"},"engine":"%s","quant":"q4_k_m"}`, epyc,
			"llama.cpp CPU harness rows of internal/calibration/data/host_harness.json (docs/accuracy.md, CPU prefill): x86 CPUs (the rows: one AMD EPYC Zen 5 vCPU, one thread), kquant weights; 2 held-out rows, median |error| 7.3% (within 20%)",
			"CPU harness rows of internal/calibration/data/host_harness.json (docs/accuracy.md, CPU prefill): x86 CPUs (the rows: one AMD EPYC Zen 5 vCPU, one thread), kquant weights; 2 held-out rows, median |error| 7.3% (within 20%)"},
		{q4, func() []registry.Device { return []registry.Device{mi300x(0)} },
			"not validated: no prompt row of today's llama.cpp build measures this GPU's architecture; the May 2024 build's constants, fitted on NVIDIA rows, are applied",
			"not validated: no prompt row of today's build measures this GPU's architecture; the May 2024 build's constants, fitted on NVIDIA rows, are applied"},
	}
}

// prefill_validated_on spelled llama.cpp's rows whatever the engine, as
// validated_on did: a SpeedKernels engine that does not name the rows as
// its runs (kernelHostServer) now reads them named by their backend and
// file, llama.cpp's words unchanged.
func TestPrefillValidatedOnOfAKernelsEngineNamesNoOtherEnginesRows(t *testing.T) {
	l, ok := engine.Lookup("llama.cpp")
	require.True(t, ok)
	e := kernelHostServer{hostServer{l}}
	engine.Register(e)
	t.Cleanup(func() { engine.Unregister(e.Name()) })
	for _, c := range prefillRowsCases() {
		assert.Equal(t, c.llamaCPP, speedRowsAnswer(t, c, "llama.cpp").Throughput.PrefillValidatedOn, c.body)
		v := speedRowsAnswer(t, c, e.Name()).Throughput.PrefillValidatedOn
		assert.Equal(t, c.neutral, v, c.body)
		for _, w := range append(llamaCPPWords, "vLLM", "SGLang") {
			assert.NotContains(t, v, w, c.body)
		}
	}
}
