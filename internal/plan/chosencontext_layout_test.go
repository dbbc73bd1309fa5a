package plan

import (
	"fmt"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// A context the plan chooses (no context_length) is the longest the chosen
// layout holds, up to the model's trained context. The planner chose it on
// the layout of its first pass, at 4096 tokens, then planned again at that
// context, where another layout may win: gpt-oss-120b under SGLang for 16
// sequences on 8 NVSwitch H100s was sized on one GPU a replica (8
// replicas, 124698 tokens of pool each), then served by 2 replicas of TP4,
// whose pools hold 44 sequences of the trained 131072; the command said
// --context-length 124672 and the context line that it is the longest
// one sequence of which fits SGLang's pool, beside max_context_length
// 131072.
func TestChosenContextIsTheChosenLayouts(t *testing.T) {
	var devs []registry.Device
	var ids []string
	for i := range 8 {
		d := h100(i) // as the dgx-h100 fixture's nvidia-smi reads them
		free := int64(85045805056)
		d.MemoryBytes, d.MemoryFreeBytes, d.MemoryBandwidthGBs = 85520809984, &free, 3350
		devs = append(devs, d)
		ids = append(ids, d.ID)
	}
	r := reg(t, devs, registry.Interconnect{Kind: registry.LinkNVSwitch, BandwidthGBs: 900, Devices: ids})
	flags := map[string]string{"vllm": "--max-model-len", "sglang": "--context-length"}
	for _, eng := range []string{"sglang", "vllm"} {
		for _, batch := range []int{1, 8, 16, 64} {
			name := fmt.Sprintf("%s batch %d", eng, batch)
			a := shard(t, request(t, fmt.Sprintf(`{"model":{"name":"gpt-oss-120b"},"engine":%q,"batch_size":%d}`, eng, batch), r))
			require.True(t, a.Fits.Yes(), name)
			ctx, err := strconv.Atoi(argValue(a.EngineArgs[eng], flags[eng]))
			require.NoError(t, err, "%s: %v", name, a.EngineArgs[eng])
			want := min(131072, a.MaxContextLength-a.MaxContextLength%contextStep)
			assert.Equal(t, want, ctx, "%s: the command's context is the longest the plan's layout holds (max_context_length %d), up to the trained 131072; %v", name, a.MaxContextLength, a.EngineArgs[eng])
			assert.Contains(t, dump(t, a.Explanation), "the plan was made at 4096, then again at this context", "%s: the line names the first pass's context", name)
		}
	}
}
