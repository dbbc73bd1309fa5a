package detect

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// A broken driver stack (NVML/driver mismatch) leaves the GPU present but
// unusable; its name comes from the PCI id (testdata/machines/gt640-nvml-mismatch).
func TestFixtureGT640NVMLMismatch(t *testing.T) {
	g := onlyGPU(t, detectHost(t, "gt640-nvml-mismatch", nil))
	assert.Equal(t, "0000:03:00.0", g.PCIBusID)
	assert.Equal(t, "NVIDIA GeForce GT 640", g.Name)
	assert.Equal(t, "pci-id-table", g.Sources["name"])
	assert.Zero(t, g.MemoryBytes, "GT 640 boards with this id have 1 or 2 GB: the table does not know")
	assert.False(t, g.Available)
	assert.Contains(t, g.UnavailableReason, "NVML/driver version mismatch")
}

// procfs "Model: Unknown" is not a name; nvidia-smi cannot get a device
// handle, so the GPU is unusable (testdata/machines/kata-gt1030-vm).
func TestFixtureKataGT1030(t *testing.T) {
	g := onlyGPU(t, detectHost(t, "kata-gt1030-vm", nil))
	assert.Equal(t, "0000:00:08.0", g.PCIBusID)
	assert.Equal(t, "NVIDIA GeForce GT 1030", g.Name)
	assert.Equal(t, "pci-id-table", g.Sources["name"])
	assert.Equal(t, int64(2e9), g.MemoryBytes)
	assert.Contains(t, g.Sources["memory_bytes"], "pci-id-table")
	assert.Nil(t, g.MemoryFreeBytes)
	assert.False(t, g.Available)
	assert.Contains(t, g.UnavailableReason, "Unable to determine the device handle")
}

// A GPU with no driver bound is listed unavailable, named from its PCI id
// (testdata/machines/gce-a100-sxm4-no-driver).
func TestFixtureA100NoDriverListed(t *testing.T) {
	g := onlyGPU(t, detectHost(t, "gce-a100-sxm4-no-driver", nil))
	assert.Equal(t, "0000:00:04.0", g.PCIBusID)
	assert.Equal(t, "10de:20b0", g.PCIID)
	assert.Equal(t, "NVIDIA A100-SXM4-40GB", g.Name)
	assert.Equal(t, int64(40e9), g.MemoryBytes)
	assert.Equal(t, float64(1555), g.MemoryBandwidthGBs)
	assert.False(t, g.Available)
	assert.Equal(t, "no driver bound", g.UnavailableReason)
}

// Three V100s without the NVIDIA driver: all listed, none available; the
// third's device id is not captured, so it stays nameless
// (testdata/machines/v100-pcie-nouveau-era-no-driver).
func TestFixtureV100NoDriver(t *testing.T) {
	reg := detectHost(t, "v100-pcie-nouveau-era-no-driver", nil)
	gpus := devicesOfKind(reg, registry.KindCUDA)
	require.Len(t, gpus, 3)
	assert.Equal(t, []string{"0000:5a:00.0", "0000:5e:00.0", "0000:62:00.0"}, busIDs(gpus))
	for _, g := range gpus {
		assert.False(t, g.Available, g.PCIBusID)
		assert.NotEmpty(t, g.UnavailableReason, g.PCIBusID)
	}
	for _, g := range gpus[:2] {
		assert.Equal(t, "Tesla V100-PCIE-32GB", g.Name)
		assert.Equal(t, int64(32e9), g.MemoryBytes)
		assert.Equal(t, float64(900), g.MemoryBandwidthGBs)
	}
	assert.Empty(t, gpus[2].Name)
	assert.Zero(t, gpus[2].MemoryBytes)
}

// The H20 of an HGX whose tools were not run is named from 10de:2329
// (testdata/machines/hgx-h20-lspci-tree-no-tools).
func TestFixtureH20FromPCIID(t *testing.T) {
	g := onlyGPU(t, detectHost(t, "hgx-h20-lspci-tree-no-tools", nil))
	assert.Equal(t, "NVIDIA H20", g.Name)
	assert.Equal(t, "9.0", g.ComputeCapability)
	assert.Equal(t, int64(96e9), g.MemoryBytes)
	// 4,000 GB/s from a secondary page (the table's source says so).
	assert.Equal(t, float64(4000), g.MemoryBandwidthGBs)
	assert.Contains(t, g.Quantizations, "fp8")
}
