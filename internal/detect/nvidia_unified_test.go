package detect

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// onlyGPU returns the one cuda_gpu of a fixture.
func onlyGPU(t *testing.T, reg *registry.Registry) registry.Device {
	t.Helper()
	gpus := devicesOfKind(reg, registry.KindCUDA)
	require.Len(t, gpus, 1)
	return gpus[0]
}

// warningMentioning returns the first warning of backend whose message
// contains every part.
func warningMentioning(reg *registry.Registry, backend string, parts ...string) (registry.Warning, bool) {
	for _, w := range reg.Warnings {
		if w.Backend != backend {
			continue
		}
		all := true
		for _, p := range parts {
			all = all && strings.Contains(w.Message, p)
		}
		if all {
			return w, true
		}
	}
	return registry.Warning{}, false
}

// DGX Spark: nvidia-smi prints [N/A] memory for the GB10; its memory is the
// unified LPDDR5X, MemTotal 125489508 kB (testdata/machines/dgx-spark-gb10).
func TestFixtureDGXSparkUnifiedMemory(t *testing.T) {
	reg := detectHost(t, "dgx-spark-gb10", nil)
	g := onlyGPU(t, reg)
	assert.Equal(t, "NVIDIA GB10", g.Name)
	assert.True(t, g.Available)
	assert.True(t, g.MemoryShared)
	assert.Equal(t, int64(125489508)*1024, g.MemoryBytes)
	assert.Equal(t, int64(125489508)*1024, g.MemoryUsableBytes)
	assert.Equal(t, "/proc/meminfo", g.Sources["memory_bytes"])
	assert.Equal(t, "/proc/meminfo", g.Sources["memory_usable_bytes"])
	w, ok := warningMentioning(reg, "cuda", "unified", "MemTotal")
	require.True(t, ok, "a warning says the memory is assumed from MemTotal: %v", reg.Warnings)
	assert.Equal(t, registry.WarnFallback, w.Code)
}

// Jetson AGX Orin: no memory from nvidia-smi and no /proc/meminfo captured:
// memory unknown but shared, with a warning (testdata/machines/jetson-agx-orin).
func TestFixtureJetsonUnifiedMemoryUnknown(t *testing.T) {
	reg := detectHost(t, "jetson-agx-orin", nil)
	g := onlyGPU(t, reg)
	assert.Equal(t, "Orin (nvgpu)", g.Name)
	assert.True(t, g.MemoryShared)
	assert.Zero(t, g.MemoryBytes)
	assert.Zero(t, g.MemoryUsableBytes)
	_, ok := warningMentioning(reg, "cuda", "unified", "unknown")
	assert.True(t, ok, "a warning says the memory is unknown: %v", reg.Warnings)
}

// GH200: nvidia-smi's 97871 MiB is the HBM only; the GPU also reads the Grace
// memory coherently over NVLink-C2C, which a warning notes
// (testdata/machines/gh200-480gb).
func TestFixtureGH200HBMAndCoherentGrace(t *testing.T) {
	reg := detectHost(t, "gh200-480gb", nil)
	g := onlyGPU(t, reg)
	assert.Equal(t, int64(97871)<<20, g.MemoryBytes)
	assert.Equal(t, "nvidia-smi", g.Sources["memory_bytes"])
	assert.False(t, g.MemoryShared, "the HBM is the GPU's own")
	_, ok := warningMentioning(reg, "cuda", "NVLink-C2C", "HBM")
	assert.True(t, ok, "a warning notes the coherent Grace memory: %v", reg.Warnings)
}
