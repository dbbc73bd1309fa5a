package detect

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// Each DGX H100 GPU has one NIC behind its own PCIe switch (PIX in the
// captured topo -m) and the other NICs of its NUMA node (NODE); NICs of the
// other socket (SYS) are not near it. mlx5_8 and mlx5_9 sit on socket 1.
func TestDGXH100GPUToNICAffinity(t *testing.T) {
	reg := detectFixture(t, "dgx-h100", nil)
	gpus := devicesOfKind(reg, registry.KindCUDA)
	require.Len(t, gpus, 8)
	for i, g := range gpus {
		require.NotEmpty(t, g.NICs, g.ID)
		assert.Equal(t, registry.NICAffinity{Name: fmt.Sprintf("mlx5_%d", i), Path: "PIX"}, g.NICs[0], g.ID)
		assert.Equal(t, "nvidia-smi topo -m", g.Sources["nics"])
		want := 4
		if i >= 4 {
			want = 6
		}
		require.Len(t, g.NICs, want, g.ID)
		for _, n := range g.NICs[1:] {
			assert.Equal(t, "NODE", n.Path, g.ID)
		}
	}
	assert.Equal(t, registry.NICAffinity{Name: "mlx5_8", Path: "NODE"}, gpus[4].NICs[4])
}

// Without any tool, the NIC under the same PCIe switch as a GPU is found from
// the sysfs tree (the hgx-h100-nccl-topo-no-tools capture: GPU d9 and
// mlx5_5 below switch d7, where nvidia-smi would print PIX); GPU b8 has no
// NIC in the captured part of the machine.
func TestGPUToNICAffinityFromSysfs(t *testing.T) {
	reg := detectFixture(t, "hgx-h100-nccl-topo-no-tools", nil)
	gpus := devicesOfKind(reg, registry.KindCUDA)
	require.Len(t, gpus, 2)
	assert.Equal(t, "0000:b8:00.0", gpus[0].PCIBusID)
	assert.Empty(t, gpus[0].NICs)
	assert.Equal(t, []registry.NICAffinity{{Name: "mlx5_5", Path: "PIX"}}, gpus[1].NICs)
	assert.Equal(t, "sysfs (PCIe path)", gpus[1].Sources["nics"])
}
