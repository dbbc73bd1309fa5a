package detect

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/detect/detecttest"
	"github.com/ai-hwaccel/ai-hwaccel/internal/detect/intel"
	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

func TestIntelNPUFixtureMeteorLake(t *testing.T) {
	reg := detectFixtureBackends(t, "intel-core-ultra-laptop", nil, "intel_npu", "intel_gpu")
	npus := devicesOfKind(reg, registry.KindIntelNPU)
	require.Len(t, npus, 1, "the GNA at 8086:7e4c is not an NPU")
	n := npus[0]
	assert.Equal(t, "intel_npu:0", n.ID)
	assert.Equal(t, registry.FamilyNPU, n.Family)
	assert.Equal(t, "Intel Meteor Lake NPU", n.Name)
	assert.Equal(t, "intel", n.Vendor)
	assert.Equal(t, "0000:00:0b.0", n.PCIBusID)
	assert.Equal(t, "8086:7d1d", n.PCIID)
	assert.True(t, n.Available)
	assert.True(t, n.MemoryShared)
	assert.Nil(t, n.NUMANode, "numa_node -1 on a laptop: unknown, not 0")
	assert.Zero(t, n.MemoryBytes, "the NPU has no memory of its own")
	assert.Equal(t, []string{"int8", "fp16"}, n.Quantizations)
	assert.Len(t, devicesOfKind(reg, registry.KindIntelGPU), 1)
	assert.Len(t, reg.Devices, 2, "iGPU and NPU, nothing else")
	assert.Empty(t, warningCodes(reg))
}

// An NPU without its /dev/accel node (a container without the device) is
// listed as unavailable, with a warning that says why.
func TestIntelNPUWithoutDeviceNode(t *testing.T) {
	root := detecttest.CopyFixtureRoot(t, "intel-core-ultra-laptop")
	require.NoError(t, os.Remove(filepath.Join(root, "dev/accel/accel0")))
	m, err := NewMachine(Options{Sysroot: root, NoExec: true})
	require.NoError(t, err)
	f := intel.DetectIntelNPU(t.Context(), m)
	require.Len(t, f.Devices, 1)
	assert.False(t, f.Devices[0].Available)
	require.Len(t, f.Warnings, 1)
	assert.Equal(t, registry.WarnDeviceUnusable, f.Warnings[0].Code)
}
