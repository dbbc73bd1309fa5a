package engine

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/goccy/go-json"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/model"
	"github.com/ai-hwaccel/ai-hwaccel/internal/quant"
	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// The planner's refusals named vLLM's start-up charge in words of its own
// (plan.vllmChargeLine wrote "vLLM %s's start-up charge"); vLLM now names
// it (StartupChargeNamer), in the words the answers had: the figures of
// testdata/golden/h200-vm.json's refusal of Llama-3.1-405B (a 3.4 GiB
// profile peak, 0.2 GiB outside torch, 0.8 GiB of CUDA graphs), a Gaudi
// worker's graph reserve, and tpu-inference's charge of nothing.
func TestVLLMNamesItsStartupCharge(t *testing.T) {
	var n StartupChargeNamer = vllm{}
	gpu := VLLMStartup{Version: Version{0, 21, 0}, ActivationBytes: gibOf(3.4), NonTorchBytes: gibOf(0.2), CUDAGraphBytes: gibOf(0.8)}
	assert.Equal(t, "vLLM 0.21.0's start-up charge 4.4 GiB (peak activation 3.4 GiB, non-torch memory 0.2 GiB, CUDA graphs 0.8 GiB)",
		n.StartupChargeLine(gpu, VLLMBackendGPU, gpu.Bytes(), gpu.CUDAGraphBytes))
	gaudi := VLLMStartup{Version: Version{0, 21, 0}, ActivationBytes: gibOf(1.3), OfFree: true}
	assert.Equal(t, "vLLM 0.21.0's start-up charge 1.3 GiB (peak activation 1.3 GiB, non-torch memory 0.0 GiB, HPU graph reserve 0.0 GiB)",
		n.StartupChargeLine(gaudi, VLLMBackendGaudi, gaudi.Bytes(), 0))
	assert.Equal(t, "vLLM 0.21.0's TPU backend charges nothing beside the weights and the KV cache",
		n.StartupChargeLine(VLLMStartup{Version: Version{0, 21, 0}}, VLLMBackendTPU, 0, 0))
	// A part under 0.05 GiB reads as the planner writes sizes.
	small := VLLMStartup{Version: Version{0, 21, 0}, ActivationBytes: gibOf(0.5), NonTorchBytes: 1 << 20}
	assert.Equal(t, "vLLM 0.21.0's start-up charge 0.5 GiB (peak activation 0.5 GiB, non-torch memory <0.1 GiB, CUDA graphs 0.0 GiB)",
		n.StartupChargeLine(small, VLLMBackendGPU, small.Bytes(), 0))
}

// A streamed plan's sentences name the flag that sets the offload and the
// share its KV pool is sized within by asking the engine (OffloadNamer):
// each is the flag the engine's own command writes for it.
func TestOffloadNamersNameTheFlagsTheirCommandsWrite(t *testing.T) {
	m := model.Lookup("Llama-3.1-70B")
	require.NotNil(t, m)
	for _, e := range []Engine{vllm{}, sglang{}} {
		n, ok := e.(OffloadNamer)
		require.True(t, ok, e.Name())
		require.True(t, e.Parallelism().StreamsOffloadedWeights, e.Name())
		p := &Placement{Model: m, Level: quant.BF16, Kind: registry.KindCUDA, Memory: Memory{Fraction: 0.9}, Context: 4096, Batch: 1,
			TP: 1, Stages: []Stage{{Start: 0, End: 40}, {Start: 40, End: 80}}, Offloaded: true, OffloadedWeightBytes: 60 << 30}
		args, _, ok := e.Args(p)
		require.True(t, ok, e.Name())
		assert.True(t, slices.Contains(args, n.OffloadSetting()), "%s: %v has no %s", e.Name(), args, n.OffloadSetting())
		assert.True(t, slices.Contains(args, n.PoolSetting()), "%s: %v has no %s", e.Name(), args, n.PoolSetting())
	}
}

// llama.cpp names a host placement (HostOffloadNamer) by the flags its own
// command writes for it: --n-cpu-moe and -ot for the first layers' experts,
// -ngl K --cpu-moe for every expert (gpt-oss-120b, 36 layers, on one GPU
// and the host).
func TestLlamaCPPNamesItsHostOffloadByItsFlags(t *testing.T) {
	m := model.Lookup("gpt-oss-120b")
	require.NotNil(t, m)
	gpu := PlacedDevice{ID: "cuda:0", Dev: &registry.Device{Kind: registry.KindCUDA}}
	cpu := PlacedDevice{ID: "cpu:0", Dev: &registry.Device{Kind: registry.KindCPU}}
	var n HostOffloadNamer = llamaCPP{}
	for _, c := range []struct {
		p *Placement
		o HostOffload
	}{
		{&Placement{CPUMoE: 24, CPUMoEPart: 2, Stages: []Stage{{Start: 0, End: 36, Devices: []PlacedDevice{gpu}}, {Start: 0, End: 25, Devices: []PlacedDevice{cpu}}}},
			HostOffload{ExpertLayers: 24, PartLayer: 24, PartTensors: 2}},
		{&Placement{AllExpertsOnHost: true, Stages: []Stage{{Start: 0, End: 6, Devices: []PlacedDevice{cpu}}, {Start: 6, End: 36, Devices: []PlacedDevice{gpu}}}},
			HostOffload{AllExperts: true, GPULayers: 30}},
	} {
		c.p.Model, c.p.Level, c.p.Kind, c.p.Layers, c.p.Context, c.p.Batch, c.p.Offloaded = m, "q4_k_m", registry.KindCUDA, 36, 4096, 1, true
		args, _, ok := llamaCPP{}.Args(c.p)
		require.True(t, ok)
		line := " " + strings.Join(args, " ") + " "
		assert.Contains(t, line, " "+n.HostOffloadSettings(c.o)+" ", "%v", c.o)
	}
	assert.Equal(t, "-ngl", n.HostOffloadSettings(HostOffload{WholeLayers: true}))
	assert.Equal(t, `builds without --cpu-moe take -ot "exps=CPU"`, n.HostOffloadAside(HostOffload{AllExperts: true, GPULayers: 30}))
	assert.Empty(t, n.HostOffloadAside(HostOffload{ExpertLayers: 3}))
}

// vLLM's refusal to start, which engine_expect warns of, in the words the
// planner wrote it in before vLLM named it (plan/expect.go's format; no
// golden holds one: a fitting plan leaves a sequence's room by the same
// accounting), and SGLang, whose start-up check the planner does not
// model, warns of none.
func TestShortPoolWarningIsTheEngines(t *testing.T) {
	var v StartupReportNamer = vllm{}
	assert.Equal(t, "by vLLM 0.21.0's own start-up accounting one sequence of 8192 tokens does not fit the KV cache it leaves (4096 tokens): vLLM refuses to start (\"To serve at least one request with the model's max seq len ...\"); ask context_length 4096 or less, a larger memory_fraction or more devices",
		v.ShortPoolWarning("0.21.0", 8192, 4096))
	var s StartupReportNamer = sglang{}
	assert.Empty(t, s.ShortPoolWarning("", 8192, 4096))
	assert.Equal(t, expectSourceOutside, s.ReportSource(ReportPaged, VLLMBackendGPU))
	assert.Empty(t, vllm{}.ReleaseWarning(VLLMOldestVersion))
}

// llama.cpp names its speed rows (SpeedRowsNamer) by flags its own command
// writes for those placements (the first layers' experts and part of one
// more layer's on the CPU; whole layers on the CPU) and that the rows of
// internal/calibration/data/offload_decode.json ran, each quoting its
// source's placement verbatim: every row names the experts' or the
// layers' flag, and the rows that name the part-of-layer flag keep every
// expert tensor of their layers on the CPU (whole layers' experts, no
// part of one).
func TestLlamaCPPNamesItsSpeedRowsByItsFlags(t *testing.T) {
	rows, ok := SpeedRowsOf(llamaCPP{})
	require.True(t, ok)
	assert.Equal(t, "llama.cpp", SpeedRowsEngine().Title())
	m := model.Lookup("gpt-oss-120b")
	require.NotNil(t, m)
	gpu := PlacedDevice{ID: "cuda:0", Dev: &registry.Device{Kind: registry.KindCUDA}}
	cpu := PlacedDevice{ID: "cpu:0", Dev: &registry.Device{Kind: registry.KindCPU}}
	for _, c := range []struct {
		p     *Placement
		flags []string
	}{
		{&Placement{CPUMoE: 24, CPUMoEPart: 2, Stages: []Stage{{Start: 0, End: 36, Devices: []PlacedDevice{gpu}}, {Start: 0, End: 25, Devices: []PlacedDevice{cpu}}}},
			[]string{rows.ExpertsOnHost, rows.PartOfLayerExperts}},
		{&Placement{Stages: []Stage{{Start: 0, End: 10, Devices: []PlacedDevice{cpu}}, {Start: 10, End: 36, Devices: []PlacedDevice{gpu}}}},
			[]string{rows.LayersOnHost}},
	} {
		c.p.Model, c.p.Level, c.p.Kind, c.p.Layers, c.p.Context, c.p.Batch, c.p.Offloaded = m, "q4_k_m", registry.KindCUDA, 36, 4096, 1, true
		args, _, ok := llamaCPP{}.Args(c.p)
		require.True(t, ok)
		for _, f := range c.flags {
			assert.Contains(t, args, f, "%v", args)
		}
	}

	raw, err := os.ReadFile("../calibration/data/offload_decode.json")
	require.NoError(t, err)
	var data struct {
		Rows []struct {
			Placement string `json:"placement"`
		} `json:"rows"`
	}
	require.NoError(t, json.Unmarshal(raw, &data))
	require.NotEmpty(t, data.Rows)
	flagged := func(placement, flag string) bool { return slices.Contains(strings.Fields(placement), flag) }
	for _, r := range data.Rows {
		assert.True(t, flagged(r.Placement, rows.ExpertsOnHost) || flagged(r.Placement, rows.LayersOnHost) || flagged(r.Placement, "--n-gpu-layers"), r.Placement)
		if flagged(r.Placement, rows.PartOfLayerExperts) {
			assert.Contains(t, r.Placement, "ffn_(up|down|gate)_exps=CPU", "a row moving part of a layer's experts: the words 'no row moves part of a layer's experts' are wrong")
		}
	}
}

// argValue is the argument after flag in args, "" when absent.
func argValue(args []string, flag string) string {
	if i := slices.Index(args, flag); i >= 0 && i+1 < len(args) {
		return args[i+1]
	}
	return ""
}

// The CLI read a command's context by a table of the engines' flags of its
// own (contextFlags) and llama.cpp's -np by name; each engine now names
// them (CommandContextNamer), and they are the flags its own command
// writes: the plan's context, times the sequences where the engine's
// context is shared by them (llama.cpp: -c 8192 for 2 sequences of 4096).
func TestCommandContextNamersNameTheFlagsTheirCommandsWrite(t *testing.T) {
	m := model.Lookup("Llama-3.1-8B")
	require.NotNil(t, m)
	want := map[string][2]string{"llama.cpp": {"-c", "-np"}, "vllm": {"--max-model-len", ""}, "sglang": {"--context-length", ""}}
	for _, name := range []string{"llama.cpp", "vllm", "sglang"} {
		e, ok := Lookup(name)
		require.True(t, ok, name)
		n, ok := e.(CommandContextNamer)
		require.True(t, ok, name)
		assert.Equal(t, want[name], [2]string{n.ContextSetting(), n.SequencesSetting()}, name)
		level := quant.BF16
		if name == "llama.cpp" {
			level = "q4_k_m"
		}
		p := &Placement{Model: m, Level: level, Kind: registry.KindCUDA, Memory: e.Memory(0), Context: 4096, Batch: 2,
			TP: 1, Layers: m.Layers, Stages: []Stage{{Start: 0, End: m.Layers,
				Devices: []PlacedDevice{{ID: "cuda:0", Dev: &registry.Device{Kind: registry.KindCUDA, MemoryBytes: 80 << 30}}}}}}
		args, _, ok := e.Args(p)
		require.True(t, ok, name)
		ctx := "4096"
		if n.SequencesSetting() != "" {
			ctx = "8192"
			assert.Equal(t, "2", argValue(args, n.SequencesSetting()), "%s: %v", name, args)
		}
		assert.Equal(t, ctx, argValue(args, n.ContextSetting()), "%s: %v", name, args)
	}
}
