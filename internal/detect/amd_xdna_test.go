package detect

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/detect/amd"
	"github.com/ai-hwaccel/ai-hwaccel/internal/detect/detecttest"
	"github.com/ai-hwaccel/ai-hwaccel/internal/detect/machine"
	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// The ThinkPad P16s (Krackan) shows its NPU as 1022:17f0 beside the dummy
// function 1022:1116 (canonical/inference-snaps-cli's lspci of the machine,
// testdata/machines/thinkpad-p16s-krackan). The capture does not say whether
// amdxdna is bound (lspci -vmmnD prints no driver), so the fixture leaves it
// unbound: the NPU is seen, named, and said to be unusable, with the reason.
func TestXDNAFixtureThinkPadP16sKrackan(t *testing.T) {
	reg := detectFixtureBackends(t, "thinkpad-p16s-krackan", nil, "amd_xdna")
	npus := devicesOfKind(reg, registry.KindAMDXDNA)
	require.Len(t, npus, 1, "the Krackan dummy function 1022:1116 is not an NPU")
	n := npus[0]
	assert.Equal(t, "amd_xdna_npu:0", n.ID)
	assert.Equal(t, registry.FamilyNPU, n.Family)
	assert.Equal(t, "AMD XDNA 2 NPU (Strix/Krackan/Strix Halo)", n.Name, "pci.ids names 17f0 for all three")
	assert.Equal(t, "amd", n.Vendor)
	assert.Equal(t, "0000:c5:00.1", n.PCIBusID)
	assert.Equal(t, "1022:17f0", n.PCIID)
	assert.False(t, n.Available, "no amdxdna binding was captured")
	assert.True(t, n.MemoryShared)
	assert.Nil(t, n.NUMANode)
	assert.Zero(t, n.MemoryBytes, "no memory of its own")
	assert.Equal(t, []string{"int8", "bf16"}, n.Quantizations)
	assert.Len(t, reg.Devices, 1)
	require.Len(t, reg.Warnings, 1)
	assert.Equal(t, registry.WarnDeviceUnusable, reg.Warnings[0].Code)
	assert.Contains(t, reg.Warnings[0].Message, "driver amdxdna not bound")
	// The registry says why beside the device, as for an unbound GPU, so
	// that a table's Unavailable section and a scheduler need not match
	// warnings to devices.
	assert.Equal(t, "driver amdxdna not bound", n.UnavailableReason)
}

// The same NPU bound to amdxdna with its /dev/accel node (what Linux 6.14+,
// which carries drivers/accel/amdxdna, gives): available, no warning; bound
// without the node it is still unusable.
func TestXDNADriverBound(t *testing.T) {
	root := detecttest.CopyFixtureRoot(t, "thinkpad-p16s-krackan")
	fn := filepath.Join(root, "sys/devices/pci0000:00/0000:00:08.2/0000:c5:00.1")
	require.NoError(t, os.MkdirAll(filepath.Join(root, "sys/bus/pci/drivers/amdxdna"), 0o755))
	require.NoError(t, os.Symlink("../../../../bus/pci/drivers/amdxdna", filepath.Join(fn, "driver")))
	require.NoError(t, os.MkdirAll(filepath.Join(fn, "accel/accel0"), 0o755))
	require.NoError(t, os.Symlink("../../../0000:c5:00.1", filepath.Join(fn, "accel/accel0/device")))
	require.NoError(t, os.MkdirAll(filepath.Join(root, "sys/class/accel"), 0o755))
	require.NoError(t, os.Symlink("../../devices/pci0000:00/0000:00:08.2/0000:c5:00.1/accel/accel0", filepath.Join(root, "sys/class/accel/accel0")))

	detectNPU := func() machine.Findings {
		m, err := NewMachine(Options{Sysroot: root, NoExec: true})
		require.NoError(t, err)
		return amd.DetectAMDXDNA(t.Context(), m)
	}
	f := detectNPU()
	require.Len(t, f.Devices, 1)
	assert.False(t, f.Devices[0].Available)
	require.Len(t, f.Warnings, 1)
	assert.Contains(t, f.Warnings[0].Message, "no /dev/accel node")
	assert.Equal(t, "no /dev/accel node", f.Devices[0].UnavailableReason)

	require.NoError(t, os.MkdirAll(filepath.Join(root, "dev/accel"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(root, "dev/accel/accel0"), nil, 0o644))
	f = detectNPU()
	require.Len(t, f.Devices, 1)
	assert.True(t, f.Devices[0].Available)
	assert.Empty(t, f.Warnings)
}
