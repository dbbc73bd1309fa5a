package detect

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/detect/amd"
	"github.com/ai-hwaccel/ai-hwaccel/internal/detect/detecttest"
	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// amdgpu sysfs readings (https://docs.kernel.org/gpu/amdgpu/thermal.html):
// gpu_busy_percent in percent, hwmon power1_average and power1_cap in
// microwatts, temp1_input (edge) in millidegrees Celsius. The values are the
// captured RX 7900 XT's (testdata/machines/rx7900xt-amdgpu-sysfs).
func TestFixtureAMDTelemetryFromSysfs(t *testing.T) {
	reg := detectFixture(t, "rx7900xt-amdgpu-sysfs", nil)
	gpus := devicesOfKind(reg, registry.KindROCm)
	require.Len(t, gpus, 1, "%+v", reg.Warnings)
	g := gpus[0]
	assert.Equal(t, "0000:03:00.0", g.PCIBusID)
	assert.Equal(t, &registry.Telemetry{UtilizationPercent: f64(3), PowerDrawWatts: f64(68),
		PowerLimitWatts: f64(290), TemperatureC: f64(53)}, g.Telemetry)
	assert.Equal(t, "sysfs", g.Sources["telemetry"])
	assert.Zero(t, g.MemoryBytes, "VRAM size not captured: unknown")

	// The MI300X fixtures capture no readings: no telemetry.
	for _, host := range []string{"mi300x-8", "mi300x-4-sysfs"} {
		for _, d := range devicesOfKind(detectFixture(t, host, nil), registry.KindROCm) {
			assert.Nil(t, d.Telemetry, "%s %s", host, d.ID)
		}
	}
}

// A reading outside its bounds (a busy share of 250 %, a sensor error code)
// is absurd_value and left out alone; power1_input stands in for a missing
// power1_average (newer SMUs give only the instantaneous power).
func TestAMDTelemetryAbsurdAndInstantPower(t *testing.T) {
	root := detecttest.CopyFixtureRoot(t, "rx7900xt-amdgpu-sysfs")
	dev := filepath.Join(root, "sys/devices/pci0000:00/0000:03:00.0")
	require.NoError(t, os.WriteFile(filepath.Join(dev, "gpu_busy_percent"), []byte("250\n"), 0o644))
	require.NoError(t, os.Rename(filepath.Join(dev, "hwmon/hwmon8/power1_average"), filepath.Join(dev, "hwmon/hwmon8/power1_input")))
	reg, err := Detect(context.Background(), Options{Sysroot: root, Path: t.TempDir(), Backends: []string{amd.BackendROCm},
		LookupEnv: func(string) (string, bool) { return "", false }})
	require.NoError(t, err)
	gpus := devicesOfKind(reg, registry.KindROCm)
	require.Len(t, gpus, 1)
	assert.Equal(t, &registry.Telemetry{PowerDrawWatts: f64(68), PowerLimitWatts: f64(290), TemperatureC: f64(53)}, gpus[0].Telemetry)
	assert.Equal(t, []string{"rocm/absurd_value"}, warningCodes(reg))
	assert.Equal(t, "/sys/class/drm/card0/device/gpu_busy_percent", reg.Warnings[0].Path)
}
