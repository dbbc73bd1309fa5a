package detect

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/detect/amd"
	"github.com/ai-hwaccel/ai-hwaccel/internal/detect/detecttest"
	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

func TestXDNAFixtureRyzenAI(t *testing.T) {
	reg := detectFixtureBackends(t, "ryzen-ai-laptop", nil, "amd_xdna")
	npus := devicesOfKind(reg, registry.KindAMDXDNA)
	require.Len(t, npus, 1, "the dummy function 1022:14ec is not an NPU")
	n := npus[0]
	assert.Equal(t, "amd_xdna_npu:0", n.ID)
	assert.Equal(t, registry.FamilyNPU, n.Family)
	assert.Equal(t, "AMD XDNA NPU (Phoenix/Hawk Point)", n.Name)
	assert.Equal(t, "amd", n.Vendor)
	assert.Equal(t, "0000:c3:00.1", n.PCIBusID)
	assert.Equal(t, "1022:1502", n.PCIID)
	assert.True(t, n.Available)
	assert.True(t, n.MemoryShared)
	assert.Nil(t, n.NUMANode)
	assert.Zero(t, n.MemoryBytes, "no memory of its own")
	assert.Equal(t, []string{"int8"}, n.Quantizations)
	assert.Len(t, reg.Devices, 1)
	assert.Empty(t, warningCodes(reg))
}

// An XDNA function whose driver is not bound is seen but not usable.
func TestXDNADriverNotBound(t *testing.T) {
	root := detecttest.CopyFixtureRoot(t, "ryzen-ai-laptop")
	require.NoError(t, os.Remove(filepath.Join(root, "sys/devices/pci0000:00/0000:c3:00.1/driver")))
	m, err := NewMachine(Options{Sysroot: root, NoExec: true})
	require.NoError(t, err)
	f := amd.DetectAMDXDNA(t.Context(), m)
	require.Len(t, f.Devices, 1)
	assert.False(t, f.Devices[0].Available)
	require.Len(t, f.Warnings, 1)
	assert.Equal(t, registry.WarnDeviceUnusable, f.Warnings[0].Code)
	assert.Contains(t, f.Warnings[0].Message, "amdxdna")
}
