package detect

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// The H200 of testdata/machines/h200-mig-shared-gi (utkuozdemir/
// nvidia_gpu_exporter capture, driver 590.48.01): GPU instance 2 (3g.71gb)
// is split into compute instances 1c.3g.71gb and 2c.3g.71gb, which -q lists
// with the same 71424 MiB. Both are devices, both say so, and the memory
// of the GPU instance is counted once: 71424 + 33280 + 2x16384 MiB, not
// the 209 GiB of five separate slices on a 140 GiB GPU.
func TestFixtureMIGComputeInstancesShareGPUInstance(t *testing.T) {
	reg := detectHost(t, "h200-mig-shared-gi", nil)
	gpus := devicesOfKind(reg, registry.KindCUDA)
	require.Len(t, gpus, 6)
	assert.False(t, gpus[0].Available)
	ci0, ci1 := gpus[1], gpus[2]
	assert.Equal(t, "1c.3g.71gb", ci0.MIG.Profile)
	assert.Equal(t, "2c.3g.71gb", ci1.MIG.Profile)
	for i, d := range []registry.Device{ci0, ci1} {
		assert.Equal(t, int64(71424)<<20, d.MemoryBytes)
		require.NotNil(t, d.MIG.GPUInstance)
		require.NotNil(t, d.MIG.ComputeInstance)
		assert.Equal(t, 2, *d.MIG.GPUInstance)
		assert.Equal(t, i, *d.MIG.ComputeInstance)
	}
	assert.Equal(t, []string{ci1.UUID}, ci0.MIG.SharesMemoryWith)
	assert.Equal(t, []string{ci0.UUID}, ci1.MIG.SharesMemoryWith)
	for _, d := range gpus[3:] {
		assert.Empty(t, d.MIG.SharesMemoryWith, "%s has a GPU instance of its own", d.MIG.Profile)
		require.NotNil(t, d.MIG.GPUInstance)
	}
	assert.Equal(t, []int{3, 9, 10}, []int{*gpus[3].MIG.GPUInstance, *gpus[4].MIG.GPUInstance, *gpus[5].MIG.GPUInstance})

	var counted int64
	for i, d := range reg.Devices {
		if d.Available && d.Kind == registry.KindCUDA && !registry.MemoryCountedBefore(reg.Devices, i) {
			counted += d.MemoryBytes
		}
	}
	assert.Equal(t, int64(71424+33280+2*16384)<<20, counted)
	assert.Less(t, counted, gpus[0].MemoryBytes, "the instances cannot hold more than their GPU")
	assert.Empty(t, reg.Warnings)
}
