package precision

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// The expected lists below are what internal/detect answers today for the
// same inputs (nvidia_parse.go nvQuantizations, amd.go amdQuantizations,
// intel_gpu.go intelGPUQuantizations, apple.go metalQuantizations and
// neuralEngineQuantizations, cpu.go cpuQuantizations, tpu.go tpuQuants*,
// gaudi.go gaudi*.Quants, neuron.go neuron*.Quants, asics.go Groq Quants,
// intel_npu.go and amd_xdna.go quant): detection can switch to this table
// without changing an answer. Order matters: it is the registry's order.

func TestCUDA(t *testing.T) {
	cases := map[string][]string{
		"":     {"fp32", "fp16"},
		"junk": {"fp32", "fp16"},
		"5.2":  {"fp32", "fp16"},
		"6.0":  {"fp32", "fp16"},
		"6.1":  {"fp32", "fp16", "int8"},
		"7.0":  {"fp32", "fp16", "int8"},
		"7.5":  {"fp32", "fp16", "int8", "int4"},
		"8.0":  {"fp32", "fp16", "bf16", "int8", "int4"},
		"8.6":  {"fp32", "fp16", "bf16", "int8", "int4"},
		"8.9":  {"fp32", "fp16", "bf16", "fp8", "int8", "int4"},
		"9.0":  {"fp32", "fp16", "bf16", "fp8", "int8", "int4"},
		"10.0": {"fp32", "fp16", "bf16", "fp8", "int8", "int4"},
		"12.1": {"fp32", "fp16", "bf16", "fp8", "int8", "int4"},
	}
	for cc, want := range cases {
		assert.Equal(t, want, CUDA(cc), cc)
	}
}

func TestAMDGPU(t *testing.T) {
	cases := map[string][]string{
		"gfx942":  {"fp32", "fp16", "bf16", "fp8", "int8", "int4"},
		"gfx90a":  {"fp32", "fp16", "bf16", "int8", "int4"},
		"gfx1100": {"fp32", "fp16", "bf16", "int8", "int4"},
		"gfx1103": {"fp32", "fp16", "bf16", "int8", "int4"},
		"gfx1030": nil,
		"gfx908":  nil,
		"":        nil,
	}
	for arch, want := range cases {
		assert.Equal(t, want, AMDGPU(arch), arch)
	}
}

func TestIntelGPU(t *testing.T) {
	assert.Equal(t, []string{"fp32", "fp16", "bf16", "int8"}, IntelGPU(0x0bda, 0x030000))
	assert.Equal(t, []string{"fp32", "fp16", "bf16", "int8"}, IntelGPU(0x0bd5, 0x038000))
	assert.Equal(t, []string{"fp32", "fp16"}, IntelGPU(0x56a0, 0x030000)) // Arc A770
	assert.Equal(t, []string{"fp32", "fp16"}, IntelGPU(0xe223, 0x030000))
}

func TestFixedFamilies(t *testing.T) {
	assert.Equal(t, []string{"fp32", "fp16", "int8", "int4"}, Metal())
	assert.Equal(t, []string{"fp16", "int8"}, AppleNeuralEngine())
	assert.Equal(t, []string{"fp32", "fp16", "bf16", "int8", "int4"}, CPU())
	assert.Equal(t, []string{"fp16", "int8"}, Groq())
	assert.Equal(t, []string{"int8", "fp16"}, IntelNPU())
	assert.Equal(t, []string{"int8"}, AMDXDNA(0x1502))
	assert.Equal(t, []string{"int8", "bf16"}, AMDXDNA(0x17f0))
}

func TestGenerations(t *testing.T) {
	v2 := []string{"fp32", "bf16"}
	v4 := []string{"fp32", "bf16", "int8"}
	for arch, want := range map[string][]string{"v2": v2, "v3": v2, "7x": v2, "v4": v4, "v5e": v4, "v5p": v4, "v6e": v4, "v9": nil} {
		assert.Equal(t, want, TPU(arch), arch)
	}
	g := []string{"fp32", "bf16", "fp16", "fp8"}
	for arch, want := range map[string][]string{"gaudi2": g, "gaudi3": g, "gaudi": {"fp32", "bf16"}, "gaudi9": nil} {
		assert.Equal(t, want, Gaudi(arch), arch)
	}
	for arch, want := range map[string][]string{
		"inferentia":  {"fp32", "bf16", "fp16", "int8"},
		"inferentia2": {"fp32", "bf16", "fp16", "fp8", "int8"},
		"trainium":    {"fp32", "bf16", "fp16", "fp8", "int8"},
		"trainium2":   {"fp32", "bf16", "fp16", "fp8"},
		"trainium9":   nil,
	} {
		assert.Equal(t, want, Neuron(arch), arch)
	}
}

// TestFreshCopies: a caller that edits its list does not edit the table.
func TestFreshCopies(t *testing.T) {
	a := CPU()
	a[0] = "changed"
	assert.Equal(t, "fp32", CPU()[0])
}

// TestOf: the planner's answer for a device without a registry list is the
// per-architecture answer when the architecture is named, the family default
// otherwise.
func TestOf(t *testing.T) {
	cases := []struct {
		d    registry.Device
		want []string
	}{
		// Compute capability 6.0 (Tesla P100): no dp4a, no int4 Tensor Cores.
		{registry.Device{Kind: registry.KindCUDA, ComputeCapability: "6.0"}, []string{"fp32", "fp16"}},
		{registry.Device{Kind: registry.KindCUDA, ComputeCapability: "7.0"}, []string{"fp32", "fp16", "int8"}},
		{registry.Device{Kind: registry.KindCUDA, ComputeCapability: "9.0"}, []string{"fp32", "fp16", "bf16", "fp8", "int8", "int4"}},
		{registry.Device{Kind: registry.KindCUDA}, []string{"fp32", "fp16", "int8", "int4"}},
		{registry.Device{Kind: registry.KindROCm, Architecture: "gfx942"}, []string{"fp32", "fp16", "bf16", "fp8", "int8", "int4"}},
		// gfx targets the per-target table lacks: the family's list
		// (amdFamily): RDNA2 and its APUs without bf16, CDNA1, CDNA4,
		// RDNA4, Vega APUs; an unknown target the ROCm default.
		{registry.Device{Kind: registry.KindROCm, Architecture: "gfx1030"}, []string{"fp32", "fp16", "int8", "int4"}},
		{registry.Device{Kind: registry.KindROCm, Architecture: "gfx1036"}, []string{"fp32", "fp16", "int8", "int4"}},
		{registry.Device{Kind: registry.KindROCm, Architecture: "gfx1035"}, []string{"fp32", "fp16", "int8", "int4"}},
		{registry.Device{Kind: registry.KindROCm, Architecture: "gfx908"}, []string{"fp32", "fp16", "bf16", "int8", "int4"}},
		{registry.Device{Kind: registry.KindROCm, Architecture: "gfx950"}, []string{"fp32", "fp16", "bf16", "fp8", "int8", "int4"}},
		{registry.Device{Kind: registry.KindROCm, Architecture: "gfx1201"}, []string{"fp32", "fp16", "bf16", "fp8", "int8", "int4"}},
		{registry.Device{Kind: registry.KindROCm, Architecture: "gfx90c"}, []string{"fp32", "fp16", "int8", "int4"}},
		{registry.Device{Kind: registry.KindROCm, Architecture: "gfx1151"}, []string{"fp32", "fp16", "bf16", "int8", "int4"}},
		{registry.Device{Kind: registry.KindROCm, Architecture: "gfx9999"}, []string{"fp32", "fp16", "bf16", "int8", "int4"}},
		{registry.Device{Kind: registry.KindROCm, Name: "AMD Instinct MI325X"}, []string{"fp32", "fp16", "bf16", "int8", "int4", "fp8"}},
		{registry.Device{Kind: registry.KindTPU, Architecture: "v2"}, []string{"fp32", "bf16"}},
		{registry.Device{Kind: registry.KindTPU}, []string{"fp32", "bf16", "int8"}},
		{registry.Device{Kind: registry.KindGaudi, Architecture: "gaudi2"}, []string{"fp32", "bf16", "fp16", "fp8"}},
		{registry.Device{Kind: registry.KindGaudi}, []string{"fp32", "bf16", "fp16", "fp8", "int8"}},
		{registry.Device{Kind: registry.KindAMDXDNA, PCIID: "1022:1502"}, []string{"int8"}},
		{registry.Device{Kind: registry.KindAMDXDNA}, []string{"int8", "int4"}},
		{registry.Device{Kind: registry.KindAppleNPU}, []string{"fp16", "int8"}},
		{registry.Device{Kind: registry.KindVulkan}, []string{"fp32", "fp16", "int8", "int4"}},
		{registry.Device{Kind: registry.KindGraphcore}, []string{"fp32", "fp16", "int8"}},
		{registry.Device{Kind: "unknown_kind"}, nil},
	}
	for _, c := range cases {
		assert.Equal(t, c.want, Of(&c.d), "%s %s %s", c.d.Kind, c.d.ComputeCapability, c.d.Architecture)
	}
}

// TestOfWithoutArchitecture: every device kind of the contract gets an
// answer. Compared with the planner's answers before this table (the
// inferredQuants the planner kept before it), a device that names no
// architecture keeps its family's old answer, except the kinds whose
// precisions do not depend on an architecture and which detection already
// listed differently: the Apple Neural Engine (int8/int4 before), the Intel
// NPU (int8/int4) and Groq (fp16/int8/int4).
func TestOfWithoutArchitecture(t *testing.T) {
	before := map[registry.Kind][]string{
		registry.KindCPU:           {"fp32", "bf16", "fp16", "int8", "int4"},
		registry.KindCUDA:          {"fp32", "fp16", "int8", "int4"},
		registry.KindROCm:          {"fp32", "fp16", "bf16", "int8", "int4"},
		registry.KindMetal:         {"fp32", "fp16", "int8", "int4"},
		registry.KindVulkan:        {"fp32", "fp16", "int8", "int4"},
		registry.KindIntelGPU:      {"fp32", "fp16", "bf16", "int8", "int4"},
		registry.KindTPU:           {"fp32", "bf16", "int8"},
		registry.KindAMDXDNA:       {"int8", "int4"},
		registry.KindSamsungNPU:    {"int8", "int4"},
		registry.KindMediaTekAPU:   {"int8", "int4"},
		registry.KindGaudi:         {"fp32", "bf16", "fp16", "fp8", "int8"},
		registry.KindNeuron:        {"fp32", "bf16", "fp16", "int8"},
		registry.KindCerebras:      {"fp32", "bf16", "fp16", "int8"},
		registry.KindQualcommAI100: {"fp16", "int8", "int4"},
		registry.KindGraphcore:     {"fp32", "fp16", "int8"},
	}
	changed := map[registry.Kind][]string{
		registry.KindAppleNPU: {"fp16", "int8"},
		registry.KindIntelNPU: {"int8", "fp16"},
		registry.KindGroq:     {"fp16", "int8"},
	}
	for kind, want := range before {
		assert.ElementsMatch(t, want, Of(&registry.Device{Kind: kind}), kind)
	}
	for kind, want := range changed {
		assert.Equal(t, want, Of(&registry.Device{Kind: kind}), kind)
	}
	assert.Len(t, before, 15)
}
