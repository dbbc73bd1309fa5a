package detect

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/detect/detecttest"
	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// The real H200 VM of testdata/machines/h200-vm (every file captured on the
// machine): nvidia-smi's 143771 MiB total and 143156 MiB free (615 MiB
// reserved by the driver, captures/query-gpu-more.csv), compute capability
// 9.0, the PCIe 5.0 x16 link from sysfs, one NUMA node, no warning.
func TestFixtureH200VM(t *testing.T) {
	reg := detectFixture(t, "h200-vm", nil)
	g := onlyGPU(t, reg)
	assert.Equal(t, "NVIDIA H200", g.Name)
	assert.True(t, g.Available)
	assert.Equal(t, int64(143771)<<20, g.MemoryBytes)
	require.NotNil(t, g.MemoryFreeBytes)
	assert.Equal(t, int64(143156)<<20, *g.MemoryFreeBytes)
	assert.Equal(t, "9.0", g.ComputeCapability)
	assert.Equal(t, "580.159.04", g.DriverVersion)
	assert.Equal(t, "GPU-b5ac4600-c672-7b7d-ffee-32e53491ee58", g.UUID)
	assert.Equal(t, "0000:00:06.0", g.PCIBusID)
	assert.Equal(t, "10de:2335", g.PCIID)
	require.NotNil(t, g.PCIe)
	assert.Equal(t, 16, g.PCIe.MaxWidth)
	assert.InDelta(t, 32.0, g.PCIe.MaxSpeedGTs, 0.01)
	require.NotNil(t, g.Telemetry)
	assert.InDelta(t, 77.37, *g.Telemetry.PowerDrawWatts, 0.001)
	assert.Len(t, reg.SystemIO.NUMANodes, 1)
	assert.Empty(t, reg.Warnings)
	cpu := devicesOfKind(reg, registry.KindCPU)
	require.Len(t, cpu, 1)
	assert.Equal(t, int64(131981020)*1024, cpu[0].MemoryBytes, "MemTotal of captures/meminfo.txt")
}

// The project's own snapshot of the same machine (captures/snapshot.tgz,
// made by `ai-hwaccel snapshot` there) gives the same GPU as the fixture
// built from the captured files.
func TestFixtureH200VMAgreesWithItsSnapshot(t *testing.T) {
	dir := detecttest.MachineDir(t, "h200-vm")
	reg, err := Detect(context.Background(), Options{Snapshot: filepath.Join(dir, "captures", "snapshot.tgz"),
		Timeout: 5 * time.Second, Backends: hostBackends, LookupEnv: func(string) (string, bool) { return "", false }})
	require.NoError(t, err)
	fromSnap := onlyGPU(t, reg)
	fromFiles := onlyGPU(t, detectHost(t, "h200-vm", nil))
	assert.Equal(t, fromFiles.Name, fromSnap.Name)
	assert.Equal(t, fromFiles.MemoryBytes, fromSnap.MemoryBytes)
	assert.Equal(t, fromFiles.MemoryFreeBytes, fromSnap.MemoryFreeBytes)
	assert.Equal(t, fromFiles.PCIBusID, fromSnap.PCIBusID)
	assert.Equal(t, fromFiles.PCIe, fromSnap.PCIe)
}

// The same machine with no nvidia-smi (a container without the tool, the
// driver loaded): the GPU is read from sysfs and the part table by its PCI id
// 10de:2335, whose compute capability 9.0 (nvidia-smi's compute_cap in
// captures/query-gpu-header.csv) gives Hopper's precisions, so a plan can
// choose bf16, fp8 or a GGUF type there as it does with the tool.
func TestFixtureH200VMWithoutTool(t *testing.T) {
	opts := fixtureOptions(t, "h200-vm", nil)
	opts.Path = ""
	opts.Backends = hostBackends
	reg, err := Detect(context.Background(), opts)
	require.NoError(t, err)
	g := onlyGPU(t, reg)
	assert.Equal(t, "10de:2335", g.PCIID)
	assert.Equal(t, "9.0", g.ComputeCapability)
	assert.Equal(t, []string{"fp32", "fp16", "bf16", "fp8", "int8", "int4"}, g.Quantizations)
}
