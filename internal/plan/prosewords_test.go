package plan

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/engine"
	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// enginePhrasesOfAll are the words a planner literal may not spell: every
// registered engine's name and title, the settings the speed rows ran with
// (engine.SpeedRowsNamer), and Aphrodite, the engine of the one published
// run of a copying weight offload (docs/accuracy.md).
func enginePhrasesOfAll(t *testing.T) []string {
	t.Helper()
	phrases := []string{"Aphrodite"}
	for _, e := range engine.All() {
		if e.Name() != engine.NameNone {
			phrases = append(phrases, e.Name(), e.Title())
		}
		if r, ok := engine.SpeedRowsOf(e); ok {
			phrases = append(phrases, r.ExpertsOnHost, r.LayersOnHost, r.PartOfLayerExperts)
		}
	}
	slices.Sort(phrases)
	return slices.Compact(phrases)
}

// The planner's sentences spelled engines in its own literals: "fitted on
// llama.cpp measurements" (decode, CPU prefill, MoE offload), llama.cpp's
// kernels and builds (prefill), "vLLM batch-1 decode" and SGLang's notes,
// the streamed offload's "vLLM weight offload" and "Aphrodite's port",
// "mainline llama.cpp's mix" of a published file. No string literal of
// internal/plan now names a registered engine, nor a setting its speed
// rows ran with: the engine (internal/engine), the calibration set
// (calibration.ServingFit) or the evidence (internal/calibration) says
// them; validated.go and prefillvalidated.go among them.
func TestPlannerProseSpellsNoEngine(t *testing.T) {
	phrases := enginePhrasesOfAll(t)
	require.Contains(t, phrases, "llama.cpp")
	files, err := filepath.Glob("*.go")
	require.NoError(t, err)
	var uses []string
	for _, file := range files {
		if strings.HasSuffix(file, "_test.go") {
			continue
		}
		src, err := os.ReadFile(file)
		require.NoError(t, err)
		uses = append(uses, enginePhrases(t, file, src, phrases)...)
	}
	assert.Empty(t, uses)
	// validated.go and prefillvalidated.go, which write validated_on and
	// prefill_validated_on, are among the files (they spelled llama.cpp's
	// rows and flags and vLLM's and SGLang's rows), and the check finds a
	// phrase, a flag included.
	assert.Contains(t, files, "validated.go")
	assert.Contains(t, files, "prefillvalidated.go")
	require.Contains(t, phrases, "--n-cpu-moe")
	assert.Equal(t, []string{"f.go:2: vLLM"}, enginePhrases(t, "f.go", []byte("package plan\nconst x = \"vLLM's rows\"\n"), phrases))
}

// assumptionsOf plans c under the engine named and joins its assumptions.
func assumptionsOf(t *testing.T, c speedRowsCase, name string) string {
	t.Helper()
	return strings.Join(speedRowsAnswer(t, c, name).Throughput.Assumptions, "\n")
}

// The speed assumptions said "fitted on llama.cpp measurements", "today's
// llama.cpp CUDA build", "llama.cpp's quantized MMQ kernels" whatever the
// engine. An engine with llama.cpp's rules and speed model that does not
// name the rows as its runs (kernelHostServer, engine.SpeedRowsNamer) now
// reads them named by what they measured, no other engine's name nor a
// flag, as
// its validated_on does (TestValidatedOnOfAKernelsEngineNamesNoOtherEnginesRows);
// llama.cpp's read as before (the sentences captured from the code before
// the change; the goldens hold more). Every case of validated_on's and
// prefill_validated_on's: offloads, today's CUDA build, HBM, Metal, CPUs.
func TestAssumptionsOfAKernelsEngineNameNoEngine(t *testing.T) {
	l, ok := engine.Lookup("llama.cpp")
	require.True(t, ok)
	e := kernelHostServer{hostServer{l}}
	engine.Register(e)
	t.Cleanup(func() { engine.Unregister(e.Name()) })
	phrases := enginePhrasesOfAll(t)
	var all strings.Builder
	for _, c := range append(append([]speedRowsCase{}, speedRowsCases...), prefillRowsCases()...) {
		text := assumptionsOf(t, c, e.Name())
		for _, p := range phrases {
			if p != e.Title() && p != e.Name() { // its own name it may say
				assert.NotContains(t, text, p, c.body)
			}
		}
		all.WriteString(text + "\n")
		own := assumptionsOf(t, c, "llama.cpp")
		assert.Contains(t, own, "fitted on llama.cpp ", c.body)
	}
	// The neutral words of each kind of sentence.
	for _, want := range []string{
		"(GPU backend, today's CUDA build, measured on NVIDIA Ampere GA10x GPUs; fitted on measurements)",
		"(HostServe): a token reads 3.1% of them",
		"each offloaded layer hands the hidden state to the CPU and back (305 us, fitted on offload measurements)",
		"the step hands the hidden state between the GPU and the CPU 59 times (305 us each, fitted on offload measurements)",
		"(the quantized MMQ kernels on int8 tensor cores); each pass of up to 512 prompt tokens re-reads the weights and costs 390 us per layer (fitted on prompt processing: today's build: the MMQ fraction measured on an NVIDIA Ampere GA102 GPU (A40), the time per layer on an NVIDIA H200)",
		"(fitted on prompt processing: the May 2024 build's constants, the newest measured on this device class)",
		"(the Metal kernels; Apple GPUs state no tensor figure); each pass of up to 512 prompt tokens re-reads the weights and costs 149 us per layer (the fraction fitted on Metal prompt processing of May 2024, the time per layer Metal's decode time)",
		"by its share of the weights (fitted on CPU runs, internal/calibration/data/host_harness.json)",
	} {
		assert.Contains(t, all.String(), want)
	}
}

// llama.cpp's assumptions, asked of the engine now, are the sentences the
// planner wrote when it spelled them (captured before the change).
func TestAssumptionsUnchangedForLlamaCPP(t *testing.T) {
	var all strings.Builder
	for _, c := range append(append([]speedRowsCase{}, speedRowsCases...), prefillRowsCases()...) {
		all.WriteString(assumptionsOf(t, c, "llama.cpp") + "\n")
	}
	for _, want := range []string{
		"plus 39 us per layer per step (GPU backend, today's llama.cpp CUDA build, measured on NVIDIA Ampere GA10x GPUs; fitted on llama.cpp measurements)",
		"the routed experts of the first 24 layers and the down and gate expert tensors of layer 24 run on the CPU (llama.cpp --n-cpu-moe 24 -ot blk\\.24\\.ffn_(gate|down)_exps=CPU): a token reads 3.1% of them (experts per token / experts), 1.30 GB, from host memory (307 GB/s) at 68%, or their matrix-vector work bounds them; attention, shared weights, the KV cache and the other experts stream from the GPUs, one after another; each offloaded layer hands the hidden state to the CPU and back (305 us, fitted on llama.cpp offload measurements)",
		"(305 us each, fitted on llama.cpp offload measurements)",
		"prefill matmuls run at 25% of the dense int8 peak (llama.cpp's quantized MMQ kernels on int8 tensor cores); each pass of up to 512 prompt tokens re-reads the weights and costs 390 us per layer (fitted on llama.cpp prompt processing: today's llama.cpp build: the MMQ fraction measured on an NVIDIA Ampere GA102 GPU (A40), the time per layer on an NVIDIA H200)",
		"(fitted on llama.cpp prompt processing: today's llama.cpp build, measured on an NVIDIA H200)",
		"(fitted on llama.cpp prompt processing: the May 2024 llama.cpp build's constants, the newest measured on this device class)",
		"prefill matmuls run at 60% of the GPU's FP32 peak (llama.cpp's Metal kernels; Apple GPUs state no tensor figure); each pass of up to 512 prompt tokens re-reads the weights and costs 149 us per layer (the fraction fitted on llama.cpp Metal prompt processing of May 2024, the time per layer Metal's decode time)",
		"by its share of the weights (fitted on llama.cpp CPU runs, internal/calibration/data/host_harness.json)",
	} {
		assert.Contains(t, all.String(), want)
	}
}

// An engine whose runs no speed row measured (streamServer) borrows the
// figures fitted on the rows: its assumptions say so by the title of the
// engine whose runs they are, as that engine names itself
// (engine.SpeedRowsEngine), and name no other engine nor that engine's
// flags.
func TestAssumptionsOfAnUnmeasuredEngineNameTheRowsEngine(t *testing.T) {
	engine.Register(streamServer{})
	t.Cleanup(func() { engine.Unregister(streamServer{}.Name()) })
	a := shard(t, request(t, `{"model":{"name":"Qwen3-8B"},"engine":"streamserve","quant":"bf16"}`, reg(t, []registry.Device{h100(0)})))
	require.NotNil(t, a.Throughput, dump(t, a))
	text := strings.Join(a.Throughput.Assumptions, "\n")
	rows := engine.SpeedRowsEngine().Title()
	assert.Contains(t, text, "; fitted on "+rows+" measurements)")
	for _, p := range enginePhrasesOfAll(t) {
		if p != rows {
			assert.NotContains(t, text, p)
		}
	}
}
