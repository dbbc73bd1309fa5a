package plan

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// Two MIG compute instances of one GPU instance share its memory (the
// h200-mig-shared-gi fixture: 1c.3g.71gb and 2c.3g.71gb of one 3g.71gb GPU
// instance, driver 590.48.01). A plan on one of them fills that memory, yet
// the other was listed idle with "replicas (data parallel) would serve more
// sequences on them": no replica fits in memory the plan already holds.
// A sibling sharing a used device's memory is not idle; an independent
// slice still is.
func TestIdleLeavesOutMIGSiblingsSharingMemory(t *testing.T) {
	mig := func(i int, profile, instance string, mem int64, shares ...string) registry.Device {
		d := gpu(registry.KindCUDA, i, "NVIDIA H200 MIG "+profile, mem, "9.0")
		d.Vendor = "nvidia"
		d.MIG = &registry.MIG{Mode: "enabled", Instance: instance, Profile: profile, Parent: "cuda:0", SharesMemoryWith: shares}
		return d
	}
	r := reg(t, []registry.Device{
		mig(1, "1c.3g.71gb", "MIG-a", 74893492224, "MIG-b"),
		mig(2, "2c.3g.71gb", "MIG-b", 74893492224, "MIG-a"),
		mig(3, "1g.18gb", "MIG-c", 17179869184),
	})
	a := shard(t, request(t, `{"model":{"name":"Qwen3-32B"},"quant":"fp8","context_length":4096}`, r))
	require.True(t, a.Fits.Yes(), dump(t, a.Explanation))
	require.Len(t, a.Shards, 1)
	used := a.Shards[0].DeviceID
	sibling := map[string]string{"cuda:1": "cuda:2", "cuda:2": "cuda:1"}[used]
	require.NotEmpty(t, sibling, "the plan is on one of the two 3g.71gb compute instances: %s", used)
	assert.NotContains(t, a.IdleDevices, sibling, "its sibling shares the memory the plan holds")
	assert.Contains(t, a.IdleDevices, "cuda:3", "an independent slice is idle")
	// A CUDA process sees one MIG instance, and slices have no NVLink
	// between them: the idle line offers replicas, never a larger
	// tensor-parallel size (the a100-80gb-pcie-mig-2x3g fixture's answer
	// offered tensor_parallel_size 2 over its two 3g.40gb slices).
	for _, l := range a.Explanation {
		if strings.HasPrefix(l, "idle: ") {
			assert.NotContains(t, l, "tensor_parallel_size", l)
		}
	}
	two := reg(t, []registry.Device{mig(1, "3g.40gb", "MIG-d", 40000000000), mig(2, "3g.40gb", "MIG-e", 40000000000)})
	a = shard(t, request(t, `{"model":{"name":"Llama-3.1-8B"},"context_length":4096}`, two))
	require.True(t, a.Fits.Yes())
	require.Equal(t, []string{"cuda:2"}, a.IdleDevices)
	for _, l := range a.Explanation {
		if strings.HasPrefix(l, "idle: ") {
			assert.NotContains(t, l, "tensor_parallel_size", l)
		}
	}
}
