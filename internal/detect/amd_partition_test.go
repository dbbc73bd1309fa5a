package detect

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// mi300xCPXBus are the GPUs of the mi300x-8-cpx fixture (KFD location_ids
// of the ROCm/k8s-device-plugin topo-mi300-cpx capture).
var mi300xCPXBus = []string{"0000:05:00.0", "0000:27:00.0", "0000:47:00.0", "0000:65:00.0",
	"0000:85:00.0", "0000:a7:00.0", "0000:c7:00.0", "0000:e5:00.0"}

// A CPX MI300X box is 63 usable partitions (the capture's eighth GPU lists
// 7), each with an eighth of its GPU's memory, under 8 unavailable GPUs.
func TestROCmFixtureMI300XCPXPartitionsAreDevices(t *testing.T) {
	reg := detectFixtureBackends(t, "mi300x-8-cpx", nil, "rocm")
	gpus := devicesOfKind(reg, registry.KindROCm)
	require.Len(t, gpus, 8+63)
	parents, parts := gpus[:8], gpus[8:]
	assert.Equal(t, mi300xCPXBus, amdTestBusIDs(parents))
	next := 8
	for i, g := range parents {
		assert.Equal(t, "AMD Instinct MI300X OAM", g.Name)
		assert.False(t, g.Available, g.ID)
		assert.Equal(t, mi300xVRAM, g.MemoryBytes, "the physical GPU keeps its whole VRAM")
		require.NotNil(t, g.Partition, g.ID)
		assert.Equal(t, "CPX", g.Partition.Compute)
		assert.Equal(t, "NPS1", g.Partition.Memory)
		assert.Equal(t, 8, g.Partition.Count)
		assert.Nil(t, g.Partition.Index)
		want := 8
		if i == 7 {
			want = 7
		}
		assert.Equal(t, fmt.Sprintf("compute partition mode CPX: work runs on its %d partitions, listed as devices", want), g.UnavailableReason)
		var children []string
		for k := 0; k < want; k++ {
			children = append(children, registry.DeviceID(registry.KindROCm, next+k))
		}
		assert.Equal(t, children, g.Partition.Children, g.ID)
		next += want
	}
	for i, p := range parts {
		assert.True(t, p.Available, p.ID)
		assert.Empty(t, p.PCIBusID, "a partition is no PCI function of its own")
		assert.Equal(t, int64(25767706624), p.MemoryBytes, "206141652992 / 8, the KFD figure of ROCm issue 4750")
		assert.Equal(t, "sysfs VRAM total / 8 partitions", p.Sources["memory_bytes"])
		assert.Nil(t, p.MemoryFreeBytes)
		assert.Equal(t, "gfx942", p.Architecture)
		assert.Contains(t, p.Quantizations, "fp8")
		require.NotNil(t, p.Partition)
		require.NotNil(t, p.Partition.Index)
		gpu, idx := i/8, i%8
		assert.Equal(t, registry.DeviceID(registry.KindROCm, gpu), p.Partition.Parent)
		assert.Equal(t, idx, *p.Partition.Index)
		assert.Equal(t, fmt.Sprintf("AMD Instinct MI300X OAM (CPX partition %d)", idx), p.Name)
		assert.Equal(t, "CPX", p.Partition.Compute)
		assert.Zero(t, p.Partition.Count)
	}
	assert.Equal(t, []string{"rocm/device_unusable"}, warningCodes(reg))
	assert.Contains(t, reg.Warnings[0].Message, "0000:e5:00.0 is in CPX mode (8 partitions) but KFD lists 7: partition 7 has no KFD node")
	require.Len(t, reg.SystemIO.Interconnects, 1)
	assert.Equal(t, amdTestIDs(parents), reg.SystemIO.Interconnects[0].Devices)
}

// HIP_VISIBLE_DEVICES counts partitions, as the ROCm runtime enumerates
// them: index 9 is partition 1 of the second GPU, listed first as the list
// names it first; each partition's GPU is listed with it.
func TestROCmFixtureMI300XCPXVisibilityCountsPartitions(t *testing.T) {
	reg := detectFixtureBackends(t, "mi300x-8-cpx", map[string]string{"HIP_VISIBLE_DEVICES": "9,0"}, "rocm")
	gpus := devicesOfKind(reg, registry.KindROCm)
	require.Len(t, gpus, 4)
	assert.Equal(t, []string{"0000:05:00.0", "0000:27:00.0", "", ""}, amdTestBusIDs(gpus))
	assert.Equal(t, "AMD Instinct MI300X OAM (CPX partition 1)", gpus[2].Name)
	assert.Equal(t, "rocm:1", gpus[2].Partition.Parent)
	assert.Equal(t, []string{"rocm:2"}, gpus[1].Partition.Children)
	assert.Equal(t, "AMD Instinct MI300X OAM (CPX partition 0)", gpus[3].Name)
	assert.Equal(t, "rocm:0", gpus[3].Partition.Parent)
	assert.Equal(t, []string{"rocm:3"}, gpus[0].Partition.Children)
	assert.Equal(t, []string{"rocm/device_unusable", "rocm/hidden_by_env"}, warningCodes(reg))
}

// The MI308X capture has KFD memory banks: each of the 32 CPX partitions
// gets its own bank's size, and the GPUs' hive comes from KFD hive_id
// (above 2^63) when sysfs has none.
func TestROCmFixtureMI308XCPXPartitionMemoryFromKFD(t *testing.T) {
	reg := detectFixtureBackends(t, "mi308x-8-cpx", nil, "rocm")
	gpus := devicesOfKind(reg, registry.KindROCm)
	require.Len(t, gpus, 8+32)
	assert.Equal(t, []string{"0000:0a:00.0", "0000:80:00.0", "0000:a4:00.0", "0000:c8:00.0",
		"0001:0b:00.0", "0001:81:00.0", "0001:a5:00.0", "0001:c9:00.0"}, amdTestBusIDs(gpus[:8]))
	for _, g := range gpus[:8] {
		assert.False(t, g.Available)
		assert.Equal(t, "compute partition mode CPX: work runs on its 4 partitions, listed as devices", g.UnavailableReason)
		require.NotNil(t, g.Partition)
		assert.Equal(t, "CPX", g.Partition.Compute)
		assert.Empty(t, g.Partition.Memory, "not captured")
		assert.Equal(t, 4, g.Partition.Count)
		assert.Equal(t, "kfd", g.Sources["partition"])
		assert.Zero(t, g.MemoryBytes)
		assert.Equal(t, "AMD Instinct MI308X", g.Name, "pci.ids 1002:74a2, from the part table")
	}
	for i, p := range gpus[8:] {
		want := int64(51539607552)
		if i%4 == 3 {
			want = 51522830336
		}
		assert.Equal(t, want, p.MemoryBytes, p.ID)
		assert.Equal(t, "kfd mem_banks", p.Sources["memory_bytes"])
		assert.Equal(t, fmt.Sprintf("AMD Instinct MI308X (CPX partition %d)", i%4), p.Name)
		assert.Equal(t, registry.DeviceID(registry.KindROCm, i/4), p.Partition.Parent)
		assert.True(t, p.Available)
	}
	assert.Empty(t, warningCodes(reg))
	require.Len(t, reg.SystemIO.Interconnects, 1)
	assert.Equal(t, "xgmi hive 2095653680343411291", reg.SystemIO.Interconnects[0].Name)
	assert.Equal(t, amdTestIDs(gpus[:8]), reg.SystemIO.Interconnects[0].Devices)
}
