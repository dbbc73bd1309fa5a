package detect

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/detect/detecttest"
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
	assert.Empty(t, backendWarnings(reg, google.BackendTPU))
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
	assert.Empty(t, backendWarnings(reg, google.BackendTPU))
}

func TestTPUMissingNodeIsUnusable(t *testing.T) {
	dir := copyFixtureMachine(t, "tpu-v5e")
	require.NoError(t, os.Remove(filepath.Join(dir, "root", "dev", "vfio", "0")))
	reg := detectDir(t, dir, nil)
	devs := devicesOfKind(reg, registry.KindTPU)
	require.Len(t, devs, 1, "a chip without its node is still listed")
	assert.False(t, devs[0].Available)
	assert.Equal(t, []string{registry.WarnDeviceUnusable}, backendWarnings(reg, google.BackendTPU))
}

// tpu7xTree is a sysroot with chips TPU7x chips as tpu-info models them
// (tpu_info device.py get_chips): two PCI functions per chip, .0 and .1,
// both 1ae0:0076, each in an IOMMU group of its own (groups 0..2*chips-1)
// with its /dev/vfio node. No sysfs capture of a TPU7x machine is public:
// the layout is the documented one (tpu-info; Ray PR 65105: "tpu7x ...
// exposes two vfio devices per chip") in the v6e fixture's sysfs form
// (testdata/machines/tpu-v6e-4-vfio-iommu-groups). skipNode leaves out one
// /dev/vfio node ("" none).
func tpu7xTree(t *testing.T, chips int, skipNode string) string {
	files, links := map[string]string{}, map[string]string{}
	group := 0
	for c := 0; c < chips; c++ {
		for fn := 0; fn < 2; fn++ {
			bdf := fmt.Sprintf("0000:00:%02x.%d", 4+c, fn)
			dev := "sys/devices/pci0000:00/" + bdf
			files[dev+"/vendor"] = "0x1ae0\n"
			files[dev+"/device"] = "0x0076\n"
			links["sys/bus/pci/devices/"+bdf] = "../../../devices/pci0000:00/" + bdf
			links[dev+"/iommu_group"] = fmt.Sprintf("../../../kernel/iommu_groups/%d", group)
			links[fmt.Sprintf("sys/kernel/iommu_groups/%d/devices/%s", group, bdf)] = "../../../../devices/pci0000:00/" + bdf
			if node := fmt.Sprint(group); node != skipNode {
				files["dev/vfio/"+node] = ""
			}
			group++
		}
	}
	files["dev/vfio/vfio"] = ""
	return detecttest.WriteTree(t, files, links)
}

func detectTPURoot(t *testing.T, root string) *registry.Registry {
	t.Helper()
	reg, err := Detect(context.Background(), Options{Sysroot: root, Path: filepath.Join(root, "no-bin"),
		Timeout: 5 * time.Second, Env: map[string]string{}, LookupEnv: func(string) (string, bool) { return "", false },
		Backends: []string{google.BackendTPU}})
	require.NoError(t, err)
	return reg
}

// A TPU7x chip's two VFIO functions are one chip: four chips, not eight,
// each with the chip's 192 GiB once.
func TestTPU7xTwoFunctionsPerChipCountOnce(t *testing.T) {
	reg := detectTPURoot(t, tpu7xTree(t, 4, ""))
	devs := devicesOfKind(reg, registry.KindTPU)
	require.Len(t, devs, 4)
	for i, d := range devs {
		assert.Equal(t, "TPU7x", d.Name)
		assert.Equal(t, "7x", d.Architecture)
		assert.Equal(t, fmt.Sprintf("0000:00:%02x.0", 4+i), d.PCIBusID, "the chip is its function .0, as tpu-info shows it")
		assert.Equal(t, int64(192)<<30, d.MemoryBytes)
		assert.True(t, d.Available)
		assert.Equal(t, fmt.Sprintf("/dev/vfio/%d /dev/vfio/%d", 2*i, 2*i+1), d.Sources["available"])
	}
	ici := tpuICI(reg)
	require.Len(t, ici, 1)
	assert.Equal(t, []string{"tpu:0", "tpu:1", "tpu:2", "tpu:3"}, ici[0].Devices)
	assert.Empty(t, backendWarnings(reg, google.BackendTPU))
}

// A chip one of whose two cores has no /dev/vfio node cannot be opened.
func TestTPU7xChipWithAMissingCoreNodeIsUnusable(t *testing.T) {
	reg := detectTPURoot(t, tpu7xTree(t, 2, "3"))
	devs := devicesOfKind(reg, registry.KindTPU)
	require.Len(t, devs, 2)
	assert.True(t, devs[0].Available)
	assert.False(t, devs[1].Available, "core .1 of chip 1 is group 3")
	assert.Equal(t, []string{registry.WarnDeviceUnusable}, backendWarnings(reg, google.BackendTPU))
	assert.Contains(t, reg.Warnings[0].Message, "/dev/vfio/3 is missing")
}
