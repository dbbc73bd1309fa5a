package amd

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/detect/machine"
	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// cpxMemBank is the mem_banks/0/properties of a CPX partition, verbatim
// from ROCm issue 4750 (testdata/machines/mi300x-8-cpx/captures).
const cpxMemBank = "heap_type 1\nsize_in_bytes 25767706624\nflags 0\nwidth 8192\nmem_clk_max 1300"

// dpxMachine is one MI300X in DPX mode: a PCI function with a DRM card and
// two KFD nodes at functions .0 and .1 (amdsmi issue 132 lists them at
// 0000:05:00.0 and 0000:05:00.1), node properties in the form of the
// k8s-device-plugin topo-mi300-cpx capture. mode is current_compute_partition
// ("" leaves the file out); banks writes a mem_banks file per node.
func dpxMachine(t *testing.T, mode string, numXCC int, banks bool) *machine.Machine {
	t.Helper()
	root := t.TempDir()
	dev := "sys/devices/pci0000:00/0000:05:00.0"
	writeFile(t, root, dev+"/vendor", "0x1002")
	writeFile(t, root, dev+"/device", "0x74a1")
	writeFile(t, root, dev+"/class", "0x120000")
	writeFile(t, root, dev+"/mem_info_vram_total", "206141652992")
	writeFile(t, root, dev+"/product_name", "AMD Instinct MI300X OAM")
	writeFile(t, root, dev+"/current_memory_partition", "NPS1")
	if mode != "" {
		writeFile(t, root, dev+"/current_compute_partition", mode)
	}
	require.NoError(t, os.MkdirAll(filepath.Join(root, dev, "drm/card1"), 0o755))
	require.NoError(t, os.MkdirAll(filepath.Join(root, "sys/bus/pci/drivers/amdgpu"), 0o755))
	require.NoError(t, os.Symlink("../../../bus/pci/drivers/amdgpu", filepath.Join(root, dev, "driver")))
	require.NoError(t, os.Symlink("../../../0000:05:00.0", filepath.Join(root, dev, "drm/card1/device")))
	for _, l := range [][2]string{{"sys/bus/pci/devices/0000:05:00.0", "../../../devices/pci0000:00/0000:05:00.0"},
		{"sys/class/drm/card1", "../../devices/pci0000:00/0000:05:00.0/drm/card1"}} {
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(root, l[0])), 0o755))
		require.NoError(t, os.Symlink(l[1], filepath.Join(root, l[0])))
	}
	for n := 0; n < 2; n++ {
		props := fmt.Sprintf("simd_count %d\ngfx_target_version 90402\ndevice_id 29857\nlocation_id %d\ndomain 0\nunique_id 16404946649897475633\nnum_xcc %d",
			608, 1280+n, numXCC)
		node := fmt.Sprintf("sys/class/kfd/kfd/topology/nodes/%d", n+1)
		writeFile(t, root, node+"/properties", props)
		if banks {
			writeFile(t, root, node+"/mem_banks/0/properties", cpxMemBank)
		}
	}
	writeFile(t, root, "sys/class/kfd/kfd/topology/nodes/0/properties", "simd_count 0\nlocation_id 0")
	m, err := machine.New(machine.Config{Sysroot: root, NoExec: true})
	require.NoError(t, err)
	return m
}

func TestPartitionsOfADPXGPU(t *testing.T) {
	tests := []struct {
		name, mode string
		numXCC     int
		banks      bool
		wantMode   string
		wantMem    int64
		wantSource string
	}{
		{"sysfs mode, memory split", "DPX", 4, false, "DPX", 206141652992 / 2, "sysfs VRAM total / 2 partitions"},
		{"mode from the node count", "", 4, false, "DPX", 206141652992 / 2, "sysfs VRAM total / 2 partitions"},
		{"SPX file contradicted by two nodes", "SPX", 4, false, "DPX", 206141652992 / 2, "sysfs VRAM total / 2 partitions"},
		{"one XCC per node is CPX", "", 1, false, "CPX", 206141652992 / 8, "sysfs VRAM total / 8 partitions"},
		{"KFD memory banks win", "DPX", 4, true, "DPX", 25767706624, "kfd mem_banks"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := detectROCm(context.Background(), dpxMachine(t, tt.mode, tt.numXCC, tt.banks))
			require.Len(t, f.Devices, 3)
			gpu, p0, p1 := f.Devices[0], f.Devices[1], f.Devices[2]
			assert.False(t, gpu.Available)
			require.NotNil(t, gpu.Partition)
			assert.Equal(t, tt.wantMode, gpu.Partition.Compute)
			assert.Equal(t, "NPS1", gpu.Partition.Memory)
			assert.Equal(t, []string{p0.ID, p1.ID}, gpu.Partition.Children)
			for i, p := range []registry.Device{p0, p1} {
				assert.True(t, p.Available)
				assert.Equal(t, tt.wantMem, p.MemoryBytes)
				assert.Equal(t, tt.wantSource, p.Sources["memory_bytes"])
				assert.Equal(t, i, *p.Partition.Index)
				assert.Equal(t, gpu.ID, p.Partition.Parent)
				assert.Empty(t, p.PCIBusID)
			}
			if tt.wantMode == "CPX" {
				// CPX on an MI300X is 8 partitions; 2 KFD nodes leave 6 unusable.
				require.Len(t, f.Warnings, 1)
				assert.True(t, strings.Contains(f.Warnings[0].Message, "partitions 2-7 have no KFD node"), f.Warnings[0].Message)
			} else {
				assert.Empty(t, f.Warnings)
			}
		})
	}
}

// A GPU whose KFD nodes are not numbered 0..n-1 with one unique_id is not
// split: nothing is guessed.
func TestPartitionNodesNeedAContiguousSet(t *testing.T) {
	node := func(loc int64, uid uint64) kfdNode {
		return kfdNode{props: map[string]int64{"location_id": loc}, ids: map[string]uint64{"unique_id": uid}}
	}
	kfd := map[string]kfdNode{"0000:05:00.0": node(0x500, 1), "0000:05:00.2": node(0x502, 1)}
	assert.Nil(t, partitionNodes("0000:05:00.0", kfd), "gap at .1")
	kfd = map[string]kfdNode{"0000:05:00.0": node(0x500, 1), "0000:05:00.1": node(0x501, 2)}
	assert.Nil(t, partitionNodes("0000:05:00.0", kfd), "two GPUs' unique ids")
	kfd = map[string]kfdNode{"0000:05:00.0": node(0x500, 1)}
	assert.Nil(t, partitionNodes("0000:05:00.0", kfd), "one node: not partitioned")
	kfd["0000:05:00.1"] = node(0x501, 1)
	assert.Len(t, partitionNodes("0000:05:00.0", kfd), 2)
}

// unique_id and hive_id are unsigned 64-bit (the MI308X capture's
// 11803749423592941193): read apart, since ParseKFDProperties drops them.
func TestKFDIDsAreUnsigned(t *testing.T) {
	ids := kfdIDs("unique_id 11803749423592941193\nhive_id 2095653680343411291\nlocation_id 32768\n")
	assert.Equal(t, map[string]uint64{"unique_id": 11803749423592941193, "hive_id": 2095653680343411291}, ids)
}
