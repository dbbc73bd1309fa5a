package plan

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// Each MIG slice is a pool of its own (pools.go), so slices of one profile
// refuse a level for the same reason: a levels row says it once, not once
// per slice (the h200-mig-shared-gi answers said "doesn't fit: bf16 needs
// 133.8 GiB ..." twice in one row, for its two 71 GB slices).
func TestLevelRowSaysAReasonOnce(t *testing.T) {
	var devs []registry.Device
	for i := range 3 {
		d := gpu(registry.KindCUDA, i, "NVIDIA H200 MIG 1g.18gb", 16<<30, "9.0")
		d.Vendor = "nvidia"
		d.MIG = &registry.MIG{Instance: "MIG-" + string(rune('a'+i)), Profile: "1g.18gb"}
		devs = append(devs, d)
	}
	a := shard(t, request(t, `{"model":{"name":"Llama-3.1-70B"},"quant":"bf16","engine":"vllm"}`, reg(t, devs)))
	require.False(t, a.Fits.Yes())
	require.Len(t, a.Levels, 1)
	reason := a.Levels[0].Reason
	assert.Equal(t, 1, strings.Count(reason, LevelMisfitPrefix), reason)
	assert.Contains(t, reason, "bf16 needs")
}
