package amd

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/detect/detecttest"
	"github.com/ai-hwaccel/ai-hwaccel/internal/detect/machine"
)

// rx7900xt detects the rx7900xt-amdgpu-sysfs fixture, with vramTotal written
// as its mem_info_vram_total when not "" (the capture has none).
func rx7900xt(t *testing.T, vramTotal string) machine.Findings {
	t.Helper()
	root := t.TempDir()
	detecttest.CopyTree(t, filepath.Join(detecttest.MachineDir(t, "rx7900xt-amdgpu-sysfs"), "root"), root)
	if vramTotal != "" {
		writeFile(t, root, "sys/devices/pci0000:00/0000:03:00.0/mem_info_vram_total", vramTotal)
	}
	m, err := machine.New(machine.Config{Sysroot: root, NoExec: true})
	require.NoError(t, err)
	return detectROCm(context.Background(), m)
}

// 1002:744c is shared by the RX 7900 XT, XTX and GRE (pci.ids): without a
// VRAM figure (the fixture as captured) the GPU is named as pci.ids names the
// id, with its gfx target and no memory or bandwidth; with the 20 GiB an RX
// 7900 XT's amdgpu reports, it is the RX 7900 XT, with its bandwidth.
func TestRX7900BoardByVRAM(t *testing.T) {
	f := rx7900xt(t, "")
	require.Len(t, f.Devices, 1)
	d := f.Devices[0]
	assert.Equal(t, "AMD Navi 31 [Radeon RX 7900 XT/7900 XTX/7900 GRE/7900M]", d.Name)
	assert.Equal(t, "gfx1100", d.Architecture)
	assert.Zero(t, d.MemoryBytes)
	assert.Zero(t, d.MemoryBandwidthGBs)

	f = rx7900xt(t, "21458059264") // just under 20 GiB
	require.Len(t, f.Devices, 1)
	d = f.Devices[0]
	assert.Equal(t, "AMD Radeon RX 7900 XT", d.Name)
	assert.Equal(t, int64(21458059264), d.MemoryBytes)
	assert.Equal(t, 800.0, d.MemoryBandwidthGBs)

	f = rx7900xt(t, "25753026560") // just under 24 GiB: the XTX
	require.Len(t, f.Devices, 1)
	assert.Equal(t, "AMD Radeon RX 7900 XTX", f.Devices[0].Name)
	assert.Equal(t, 960.0, f.Devices[0].MemoryBandwidthGBs)
}
