package detect

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/detect/google"
	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

func tpuICI(reg *registry.Registry) []registry.Interconnect {
	var out []registry.Interconnect
	for _, ic := range reg.SystemIO.Interconnects {
		if ic.Kind == registry.LinkICI {
			out = append(out, ic)
		}
	}
	return out
}

// Four v4 chips as tpu-info showed them (testdata/machines/tpu-v4/README.md;
// the PCI addresses there are placeholders, not asserted).
func TestTPUFixtureV4(t *testing.T) {
	reg := detectFixture(t, "tpu-v4", nil)
	devs := devicesOfKind(reg, registry.KindTPU)
	require.Len(t, devs, 4)
	var ids []string
	for i, d := range devs {
		assert.Equal(t, registry.DeviceID(registry.KindTPU, i), d.ID)
		assert.Equal(t, registry.FamilyTPU, d.Family)
		assert.Equal(t, "google", d.Vendor)
		assert.Equal(t, "TPU v4", d.Name)
		assert.Equal(t, "v4", d.Architecture)
		assert.Equal(t, "1ae0:005e", d.PCIID)
		assert.Equal(t, int64(32)<<30, d.MemoryBytes)
		assert.InDelta(t, 1200, d.MemoryBandwidthGBs, 0.001)
		assert.Equal(t, []string{"fp32", "bf16", "int8"}, d.Quantizations)
		assert.Nil(t, d.NUMANode)
		assert.True(t, d.Available)
		assert.Equal(t, fmt.Sprintf("/dev/accel%d", i), d.Sources["available"])
		ids = append(ids, d.ID)
	}
	ici := tpuICI(reg)
	require.Len(t, ici, 1)
	assert.Equal(t, ids, ici[0].Devices)
	assert.Zero(t, ici[0].BandwidthGBs, "no v4 ICI figure is sourced")
	assert.Empty(t, backendWarnings(reg, google.TpuBackend))
}

// A single-chip v5litepod-1 VM (testdata/machines/tpu-v5e/README.md): the
// chip through vfio-pci, the gVNIC of Google's vendor id not a TPU.
func TestTPUFixtureV5e(t *testing.T) {
	reg := detectFixture(t, "tpu-v5e", nil)
	devs := devicesOfKind(reg, registry.KindTPU)
	require.Len(t, devs, 1, "the gVNIC 1ae0:0042 is not a TPU")
	d := devs[0]
	assert.Equal(t, "TPU v5e", d.Name)
	assert.Equal(t, "v5e", d.Architecture)
	assert.Equal(t, "0000:00:05.0", d.PCIBusID)
	assert.Equal(t, "1ae0:0063", d.PCIID)
	assert.Equal(t, int64(16)<<30, d.MemoryBytes)
	assert.InDelta(t, 819, d.MemoryBandwidthGBs, 0.001)
	assert.Nil(t, d.NUMANode)
	assert.True(t, d.Available)
	assert.Equal(t, "/dev/vfio/0", d.Sources["available"])
	assert.Empty(t, tpuICI(reg), "one chip: no ICI")
	assert.Empty(t, backendWarnings(reg, google.TpuBackend))
}

func TestTPUMissingNodeIsUnusable(t *testing.T) {
	dir := copyFixtureMachine(t, "tpu-v5e")
	require.NoError(t, os.Remove(filepath.Join(dir, "root", "dev", "vfio", "0")))
	reg := detectDir(t, dir, nil)
	devs := devicesOfKind(reg, registry.KindTPU)
	require.Len(t, devs, 1, "a chip without its node is still listed")
	assert.False(t, devs[0].Available)
	assert.Equal(t, []string{registry.WarnDeviceUnusable}, backendWarnings(reg, google.TpuBackend))
}
