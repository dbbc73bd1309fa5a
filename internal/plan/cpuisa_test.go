package plan

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/ai-hwaccel/ai-hwaccel/internal/ggml"
	"github.com/ai-hwaccel/ai-hwaccel/internal/quant"
	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// TestHostCoreRateByISA checks that HostCoreFactorNoAVX512 scales the
// per-core rate of an x86 CPU below AVX-512 only: read from the CPU's
// cpu_features, else from its family's record (the L5640 of
// testdata/machines/cpu-only: SSE4.2), and left alone on an AVX-512 CPU,
// an Arm CPU and a CPU whose extensions are unknown.
func TestHostCoreRateByISA(t *testing.T) {
	e := efficiency{HostWeightsPerCore: map[ggml.Type]float64{ggml.Q4_K: 30e9, ggml.Q8_0: 14e9}, HostCoreFactorNoAVX512: 0.7}
	q4k, q8 := hostMix{[]quant.TypeWeights{{Type: ggml.Q4_K, Weights: 1}}}, hostMix{[]quant.TypeWeights{{Type: ggml.Q8_0, Weights: 1}}}
	cpu := func(name string, fs ...registry.CPUFeature) registry.Device {
		return registry.Device{Kind: registry.KindCPU, Name: name, Cores: 2, CPUFeatures: fs}
	}
	for _, tc := range []struct {
		name string
		dev  registry.Device
		want float64
	}{
		{"AVX2 flags", cpu("Intel(R) Core(TM) i3-1315U", registry.CPUFeatureAVX, registry.CPUFeatureAVX2), 0.7 * 30e9},
		{"AVX-512 flags", cpu("AMD EPYC", registry.CPUFeatureAVX2, registry.CPUFeatureAVX512F), 30e9},
		{"Arm flags", cpu("", registry.CPUFeatureASIMD, registry.CPUFeatureSVE2), 30e9},
		{"SSE4.2 family record, no flags", cpu("Intel(R) Xeon(R) CPU L5640 @ 2.27GHz"), 0.7 * 30e9},
		{"unknown", cpu("Some CPU"), 30e9},
	} {
		assert.InDelta(t, tc.want, e.hostCoreRate(q4k, tc.dev), 1, tc.name)
	}
	assert.InDelta(t, 0.7*14e9, e.hostCoreRate(q8, cpu("", registry.CPUFeatureAVX2)), 1, "every type")
	e.HostCoreFactorNoAVX512 = 0
	assert.InDelta(t, 30e9, e.hostCoreRate(q4k, cpu("", registry.CPUFeatureAVX2)), 1, "0: not kept, the rates unchanged")
}
