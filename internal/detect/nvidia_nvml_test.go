//go:build linux && cgo

package detect

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/detect/nvidia"
	"github.com/ai-hwaccel/ai-hwaccel/internal/detect/nvidia/nvml/nvmltest"
	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// nvmlOptions detects the h200-vm fixture with NVML at lib; withTool keeps
// its nvidia-smi on the path.
func nvmlOptions(t testing.TB, lib string, withTool bool) Options {
	opts := fixtureOptions(t, "h200-vm", nil)
	opts.Backends = hostBackends
	opts.NVMLLibrary = lib
	if !withTool {
		opts.Path = t.TempDir()
	}
	return opts
}

// With NVML (the fake library answering the real H200's nvml.json), the GPU
// comes from one in-process read, nvidia-smi not needed: the same identity
// and memory as nvidia-smi gives, plus the driver's reserved memory, the
// processes holding memory (none) and the GPU's health.
func TestDetectThroughNVML(t *testing.T) {
	reg, err := Detect(context.Background(), nvmlOptions(t, nvmltest.Build(t), false))
	require.NoError(t, err)
	require.Empty(t, reg.Warnings)
	g := onlyGPU(t, reg)
	assert.True(t, g.Available)
	assert.Equal(t, "NVIDIA H200", g.Name)
	assert.Equal(t, "0000:00:06.0", g.PCIBusID)
	assert.Equal(t, "10de:2335", g.PCIID)
	assert.Equal(t, "9.0", g.ComputeCapability)
	assert.Equal(t, "580.159.04", g.DriverVersion)
	assert.Equal(t, int64(150754820096), g.MemoryBytes, "143771 MiB, as nvidia-smi")
	require.NotNil(t, g.MemoryFreeBytes)
	assert.Equal(t, int64(150109880320), *g.MemoryFreeBytes, "NVML's bytes; nvidia-smi rounds them to 143156 MiB")
	assert.Equal(t, int64(644939776), g.MemoryReservedBytes, "615 MiB kept by the driver")
	assert.NotNil(t, g.Processes)
	assert.Empty(t, g.Processes)
	require.NotNil(t, g.Health)
	assert.Equal(t, true, *g.Health.ECCEnabled)
	assert.Equal(t, int64(0), *g.Health.ECCUncorrectedVolatile)
	assert.Equal(t, &registry.RemappedRows{}, g.Health.RemappedRows)
	assert.Equal(t, []string{"gpu_idle"}, g.Health.ClocksEventReasons)
	assert.Equal(t, 1980, g.Health.MaxClockSMMHz)
	assert.Equal(t, 3201, g.Health.MaxClockMemoryMHz)
	assert.Nil(t, g.Health.NVLinksActive, "the H200 VM's driver said NotSupported")
	require.NotNil(t, g.Telemetry)
	assert.InDelta(t, 76.25, *g.Telemetry.PowerDrawWatts, 1e-9)
	assert.InDelta(t, 700, *g.Telemetry.PowerLimitWatts, 1e-9)
	for _, field := range []string{"name", "memory_bytes", "memory_free_bytes", "memory_reserved_bytes", "processes", "health", "telemetry", "compute_capability"} {
		assert.Equal(t, nvidia.SourceNVML, g.Sources[field], field)
	}
	require.NoError(t, reg.Validate())
}

// The same machine answers the same through NVML and through nvidia-smi,
// but for what only NVML says.
func TestNVMLAgreesWithNvidiaSMI(t *testing.T) {
	viaNVML, err := Detect(context.Background(), nvmlOptions(t, nvmltest.Build(t), false))
	require.NoError(t, err)
	viaSMI, err := Detect(context.Background(), nvmlOptions(t, NVMLOff, true))
	require.NoError(t, err)
	a, b := onlyGPU(t, viaNVML), onlyGPU(t, viaSMI)
	assert.Equal(t, b.Name, a.Name)
	assert.Equal(t, b.MemoryBytes, a.MemoryBytes)
	assert.InDelta(t, *b.MemoryFreeBytes, *a.MemoryFreeBytes, 1<<20, "nvidia-smi rounds to MiB")
	assert.Equal(t, b.ComputeCapability, a.ComputeCapability)
	assert.Equal(t, b.Quantizations, a.Quantizations)
	assert.Equal(t, b.PCIe, a.PCIe)
	assert.Equal(t, b.MemoryBandwidthGBs, a.MemoryBandwidthGBs)
	assert.Equal(t, "nvidia-smi", b.Sources["memory_bytes"])
	assert.Nil(t, b.Health)
}

// A library whose nvmlInit fails (driver/library version mismatch; no
// driver) is not used: a fallback warning says why and nvidia-smi answers.
func TestNVMLInitFailureFallsBackToNvidiaSMI(t *testing.T) {
	for code, want := range map[string]string{"18": "Driver/library version mismatch", "9": "Driver Not Loaded"} {
		reg, err := Detect(context.Background(), nvmlOptions(t, nvmltest.Build(t, "-DFAKE_INIT_RETURN="+code), true))
		require.NoError(t, err)
		g := onlyGPU(t, reg)
		assert.True(t, g.Available)
		assert.Equal(t, "nvidia-smi", g.Sources["memory_bytes"])
		require.Len(t, reg.Warnings, 1)
		assert.Equal(t, registry.WarnFallback, reg.Warnings[0].Code)
		assert.Contains(t, reg.Warnings[0].Message, want)
		assert.Contains(t, reg.Warnings[0].Message, "asking nvidia-smi")
	}
}

// No library at the path: a warning, and nvidia-smi answers.
func TestNVMLAbsentFallsBackToNvidiaSMI(t *testing.T) {
	reg, err := Detect(context.Background(), nvmlOptions(t, t.TempDir()+"/libnvidia-ml.so.1", true))
	require.NoError(t, err)
	assert.Equal(t, "nvidia-smi", onlyGPU(t, reg).Sources["memory_bytes"])
	require.Len(t, reg.Warnings, 1)
	assert.Contains(t, reg.Warnings[0].Message, "dlopen")
}

// A driver that hangs inside NVML costs one detection its deadline, no
// more; later detections in the process skip NVML at once and ask
// nvidia-smi.
func TestNVMLHangIsBoundedByTheDetectionTimeout(t *testing.T) {
	reg := detectPastHungLibrary(t, nvmlOptions(t, nvmltest.Build(t, "-DFAKE_HANG"), true))
	assert.Equal(t, "nvidia-smi", onlyGPU(t, reg).Sources["memory_bytes"])
	require.Len(t, reg.Warnings, 1)
}
