package amd

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/detect/machine"
)

// writeFile writes one sysfs attribute under root.
func writeFile(t *testing.T, root, name, text string) {
	t.Helper()
	p := filepath.Join(root, name)
	require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
	require.NoError(t, os.WriteFile(p, []byte(text+"\n"), 0o644))
}

// AMD GPU functions with no driver bound (an MI300X, class 0x12, and a Strix
// Halo iGPU, class 0x03) are listed unavailable, with the reason, named from
// the part table, instead of vanishing; an HDMI audio function (0x04) is no
// GPU. The sysfs layout is the strix-halo-128gb fixture's, without drivers.
func TestUnboundAMDGPUIsListedUnavailable(t *testing.T) {
	root := t.TempDir()
	dev := "sys/devices/pci0000:00/0000:00:01.1/0000:c1:00.0"
	writeFile(t, root, dev+"/vendor", "0x1002")
	writeFile(t, root, dev+"/device", "0x74a1")
	writeFile(t, root, dev+"/class", "0x120000")
	writeFile(t, root, dev+"/../0000:c2:00.0/vendor", "0x1002")
	writeFile(t, root, dev+"/../0000:c2:00.0/device", "0x1586")
	writeFile(t, root, dev+"/../0000:c2:00.0/class", "0x030000")
	writeFile(t, root, dev+"/../0000:c2:00.1/vendor", "0x1002")
	writeFile(t, root, dev+"/../0000:c2:00.1/device", "0x1640")
	writeFile(t, root, dev+"/../0000:c2:00.1/class", "0x040300")
	require.NoError(t, os.MkdirAll(filepath.Join(root, "sys/bus/pci/devices"), 0o755))
	for _, a := range []string{"0000:c1:00.0", "0000:c2:00.0", "0000:c2:00.1"} {
		require.NoError(t, os.Symlink("../../../devices/pci0000:00/0000:00:01.1/"+a, filepath.Join(root, "sys/bus/pci/devices", a)))
	}
	m, err := machine.New(machine.Config{Sysroot: root, NoExec: true})
	require.NoError(t, err)
	f := detectROCm(context.Background(), m)
	require.Len(t, f.Devices, 2)
	mi := f.Devices[0]
	assert.Equal(t, "0000:c1:00.0", mi.PCIBusID)
	assert.False(t, mi.Available)
	assert.Equal(t, "no kernel driver bound", mi.UnavailableReason)
	assert.Equal(t, "gfx942", mi.Architecture)
	assert.Contains(t, mi.Quantizations, "fp8")
	d := f.Devices[1]
	assert.Equal(t, "0000:c2:00.0", d.PCIBusID)
	assert.False(t, d.Available)
	assert.Equal(t, "no kernel driver bound", d.UnavailableReason)
	assert.Equal(t, "AMD Strix Halo [Radeon Graphics / Radeon 8050S Graphics / Radeon 8060S Graphics]", d.Name) // as pci.ids names 1002:1586
	assert.True(t, d.MemoryShared)
	assert.NotEmpty(t, d.Quantizations)
}
