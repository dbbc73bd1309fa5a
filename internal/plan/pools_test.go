package plan

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// buildPools groups available devices by kind and vendor, drops devices
// that are unavailable or not wanted, and finds the high-bandwidth domains
// (NVLink figures are both directions: a device's link is half).
func TestBuildPoolsGroupsDevicesAndDomains(t *testing.T) {
	devs := []registry.Device{host(512 * gibBytes)}
	for i := 0; i < 6; i++ {
		devs = append(devs, h100(i))
	}
	devs = append(devs, mi300x(0))
	devs[6].Available = false // cuda:5
	r := reg(t, devs,
		link(registry.LinkNVLink, 900, "cuda:0", "cuda:1", "cuda:2"),
		link(registry.LinkNVLink, 600, "cuda:3", "cuda:4"),
		link("infiniband", 400, "cuda:0", "cuda:3"))

	pools := buildPools(r, 0, "", "", nil)
	require.Len(t, pools, 3)
	assert.Equal(t, registry.KindCPU, pools[0].Kind, "registry order")
	nv := pools[1]
	assert.Equal(t, "cuda_gpu (nvidia)", nv.label())
	var ids []string
	for _, d := range nv.Devices {
		ids = append(ids, d.ID)
	}
	assert.Equal(t, []string{"cuda:0", "cuda:1", "cuda:2", "cuda:3", "cuda:4"}, ids, "cuda:5 is unavailable")
	require.Len(t, nv.Domains, 2, "InfiniBand joins no domain")
	assert.Len(t, nv.Domains[0], 3)
	assert.Equal(t, 450.0, nv.Domains[0][0].LinkGBs)
	assert.Equal(t, 300.0, nv.Domains[1][0].LinkGBs)
	assert.Equal(t, 1, nv.Devices[3].Domain)
	assert.Equal(t, "rocm_gpu (amd)", pools[2].label())

	wanted := buildPools(r, 0, "node1/", "", map[string]bool{"node1/cuda:1": true, "node1/cuda:2": true})
	require.Len(t, wanted, 1)
	assert.Len(t, wanted[0].Devices, 2)
	assert.Equal(t, "node1/cuda:1", wanted[0].Devices[0].ID)
	require.Len(t, wanted[0].Domains, 1, "the wanted part of a domain is still a domain")

	orderPools(pools)
	assert.Equal(t, []registry.Kind{registry.KindCUDA, registry.KindROCm, registry.KindCPU},
		[]registry.Kind{pools[0].Kind, pools[1].Kind, pools[2].Kind},
		"accelerators first, the most usable memory first (5 H100s over one MI300X), the CPU last")
}
