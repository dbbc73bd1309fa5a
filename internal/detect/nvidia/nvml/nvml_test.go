//go:build linux && cgo

package nvml_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/detect/nvidia/nvml"
	"github.com/ai-hwaccel/ai-hwaccel/internal/detect/nvidia/nvml/nvmltest"
)

func ctxFor(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// The fake library answers what NVML answered on the real H200 VM
// (captures/nvml.json): read through the same path as the driver's library.
func TestReadH200Capture(t *testing.T) {
	lib, err := nvml.Open(ctxFor(t, 5*time.Second), nvmltest.Build(t))
	require.NoError(t, err)
	assert.Equal(t, "nvmlInit_v2", lib.Symbol("init"))
	assert.Equal(t, "nvmlDeviceGetMemoryInfo_v2", lib.Symbol("memoryV2"))
	s, err := lib.Read(ctxFor(t, 5*time.Second))
	require.NoError(t, err)
	assert.Equal(t, "580.159.04", s.DriverVersion)
	assert.Equal(t, "13.580.159.04", s.NVMLVersion)
	assert.Equal(t, 13000, s.CUDADriverVersion)
	require.Len(t, s.Devices, 1)
	d := s.Devices[0]
	assert.Equal(t, "NVIDIA H200", d.Name)
	assert.Equal(t, "GPU-00000000-0000-0000-0000-000000000000", d.UUID)
	assert.Equal(t, "00000000:00:06.0", d.PCI.BusID)
	assert.Equal(t, uint32(0x233510DE), d.PCI.DeviceID)
	require.NotNil(t, d.Memory)
	assert.Equal(t, nvml.Memory{Total: 150754820096, Reserved: 644939776, Free: 150109880320, Used: 0, HasReserved: true}, *d.Memory)
	assert.Equal(t, [2]int{9, 0}, [2]int{d.CCMajor, d.CCMinor})
	assert.Equal(t, &nvml.MIGMode{}, d.MIG)
	assert.Equal(t, uint32(76250), *d.PowerMilliwatts)
	assert.Equal(t, uint32(700000), *d.PowerLimitMilliwatts)
	assert.Equal(t, uint32(33), *d.TemperatureC)
	assert.Equal(t, uint32(0), *d.UtilizationPercent)
	assert.True(t, d.ProcessesKnown)
	assert.Empty(t, d.Processes)
	assert.True(t, *d.ECCEnabled)
	assert.Equal(t, uint64(0), *d.ECCUncorrectedVolatile)
	assert.Equal(t, nvml.RemappedRows{}, *d.RemappedRows)
	assert.Equal(t, uint64(1), *d.ClocksEventReasons, "GPU idle")
	assert.Equal(t, uint32(1980), d.MaxClockSMMHz)
	assert.Equal(t, uint32(3201), d.MaxClockMemoryMHz)
	assert.Equal(t, [4]uint32{5, 5, 16, 16}, [4]uint32{d.PCIeGen, d.PCIeGenMax, d.PCIeWidth, d.PCIeWidthMax})
	assert.Nil(t, d.NUMANode, "the driver said NotSupported")
	assert.Empty(t, d.NVLinkActive, "the driver said NotSupported")
	assert.Empty(t, s.Refused, "NotSupported is not a refusal")
}

// A library with only the first entry points (an older driver branch): the
// versioned names are missing and the old ones answer; memory then has no
// reserved share and the v1 process list is read.
func TestReadOldEntryPoints(t *testing.T) {
	lib, err := nvml.Open(ctxFor(t, 5*time.Second), nvmltest.Build(t, "-DFAKE_OLD", "-DFAKE_PROC_PID=4242", "-DFAKE_PROC_BYTES=651165696ULL"))
	require.NoError(t, err)
	assert.Equal(t, "nvmlInit", lib.Symbol("init"))
	assert.Equal(t, "nvmlDeviceGetPciInfo_v2", lib.Symbol("pci"))
	assert.Empty(t, lib.Symbol("memoryV2"))
	s, err := lib.Read(ctxFor(t, 5*time.Second))
	require.NoError(t, err)
	require.Len(t, s.Devices, 1)
	d := s.Devices[0]
	assert.Equal(t, nvml.Memory{Total: 150754820096, Free: 150109880320, Used: 644939776}, *d.Memory)
	assert.Equal(t, []nvml.Process{{PID: 4242, UsedBytes: 651165696}}, d.Processes)
	assert.Nil(t, d.ECCEnabled, "no entry point, no value")
	assert.Equal(t, 0, s.CUDADriverVersion)
}

// The processes holding memory come back with their pid and bytes (621 MiB:
// a process holding only a CUDA context on that H200, captures/cuda-context.txt).
func TestReadProcesses(t *testing.T) {
	lib, err := nvml.Open(ctxFor(t, 5*time.Second), nvmltest.Build(t, "-DFAKE_PROC_PID=31337", "-DFAKE_PROC_BYTES=651165696ULL"))
	require.NoError(t, err)
	s, err := lib.Read(ctxFor(t, 5*time.Second))
	require.NoError(t, err)
	assert.Equal(t, []nvml.Process{{PID: 31337, UsedBytes: 621 << 20}}, s.Devices[0].Processes)
}

// nvmlInit failing (no driver loaded; driver/library version mismatch) is
// an error naming the cause, remembered for the process.
func TestInitFailures(t *testing.T) {
	for code, want := range map[string]nvml.Return{"9": nvml.ErrorDriverNotLoaded, "18": nvml.ErrorLibRMVersionMismatch} {
		path := nvmltest.Build(t, "-DFAKE_INIT_RETURN="+code)
		_, err := nvml.Open(ctxFor(t, 5*time.Second), path)
		var ce *nvml.CallError
		require.True(t, errors.As(err, &ce), "%v", err)
		assert.Equal(t, want, ce.Code)
		assert.Equal(t, "nvmlInit_v2", ce.Call)
		_, again := nvml.Open(ctxFor(t, 5*time.Second), path)
		assert.Equal(t, err, again, "the failure is remembered")
	}
}

// No library at the path, and a library lacking an entry point the package
// needs (not NVML at all), are errors, not crashes.
func TestOpenMissingOrForeign(t *testing.T) {
	_, err := nvml.Open(ctxFor(t, 5*time.Second), filepath.Join(t.TempDir(), "libnvidia-ml.so.1"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "dlopen")
	_, err = nvml.Open(ctxFor(t, 5*time.Second), "libc.so.6")
	assert.ErrorIs(t, err, nvml.ErrUnsupported)
}

// A driver that hangs in an NVML call costs the caller its deadline, not
// more, and NVML is not asked again in this process.
func TestHangingCallIsBounded(t *testing.T) {
	lib, err := nvml.Open(ctxFor(t, 5*time.Second), nvmltest.Build(t, "-DFAKE_HANG"))
	require.NoError(t, err)
	start := time.Now()
	_, err = lib.Read(ctxFor(t, 200*time.Millisecond))
	assert.ErrorIs(t, err, nvml.ErrHung)
	assert.Less(t, time.Since(start), 2*time.Second)
	start = time.Now()
	_, err = lib.Read(ctxFor(t, 5*time.Second))
	assert.ErrorIs(t, err, nvml.ErrHung)
	assert.Less(t, time.Since(start), 100*time.Millisecond, "a hung library fails at once")
}
