package plan

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// shardDevices is the devices of an answer's shards, in order.
func shardDevices(a *ShardingAnswer) []string {
	var out []string
	for _, s := range a.Shards {
		out = append(out, s.DeviceID)
	}
	return out
}

// llamaFlag is the value of a flag of the answer's llama.cpp command.
func llamaFlag(a *ShardingAnswer, name string) string {
	args := a.EngineArgs["llama.cpp"]
	for i := range args[:max(len(args)-1, 0)] {
		if args[i] == name {
			return args[i+1]
		}
	}
	return ""
}

func placementLineOf(a *ShardingAnswer) string {
	for _, l := range a.Explanation {
		if strings.HasPrefix(l, "placement:") {
			return l
		}
	}
	return ""
}

func rtx3060s(t *testing.T, n int) *registry.Registry {
	var devs []registry.Device
	for i := 0; i < n; i++ {
		d := gpu(registry.KindCUDA, i, "NVIDIA GeForce RTX 3060", 12<<30, "8.6")
		d.Vendor = "nvidia"
		devs = append(devs, d)
	}
	return reg(t, devs)
}

// Llama-3.1-8B q8_0 on 12 GiB GPUs: one holds it at a short context, two
// at more but not at the model's 131072 tokens, three at all of it. The
// plan takes the fewest that hold the model's context (three of four), and
// where even all of them cannot, all of them at the most context they hold,
// as llama.cpp's --fit cuts the context over the GPUs it is shown.
func TestLlamaCPPFewestDevicesForTheModelsContext(t *testing.T) {
	const body = `{"model":{"name":"llama-3.1-8b"},"engine":"llama.cpp","quant":"q8_0"`
	one := shard(t, request(t, body+`}`, rtx3060s(t, 1)))
	require.True(t, one.Fits.Yes(), one.Explanation)
	require.Less(t, one.MaxContextLength, 131072)

	four := shard(t, request(t, body+`}`, rtx3060s(t, 4)))
	require.True(t, four.Fits.Yes(), four.Explanation)
	assert.Equal(t, []string{"cuda:0", "cuda:1", "cuda:2"}, shardDevices(four))
	assert.Equal(t, "131072", llamaFlag(four, "-c"))
	assert.Equal(t, "layer", llamaFlag(four, "--split-mode"))
	assert.Equal(t, "0,1,2", four.EngineEnv["llama.cpp"]["CUDA_VISIBLE_DEVICES"])
	assert.Equal(t, []string{"cuda:3"}, four.IdleDevices)
	assert.Contains(t, placementLineOf(four), "3 devices of the 4 identical ones hold the model's 131072-token context per sequence")

	two := shard(t, request(t, body+`}`, rtx3060s(t, 2)))
	require.True(t, two.Fits.Yes(), two.Explanation)
	assert.Equal(t, []string{"cuda:0", "cuda:1"}, shardDevices(two))
	ctx := two.MaxContextLength
	assert.Greater(t, ctx, one.MaxContextLength, "two GPUs hold more context than one")
	assert.Less(t, ctx, 131072)
	assert.Equal(t, itoa(ctx-ctx%contextStep), llamaFlag(two, "-c"))
	line := placementLineOf(two)
	assert.Contains(t, line, "all 2 identical devices, which hold the most context, less than the model's 131072 tokens")
	assert.Contains(t, line, "1 device holds "+itoa(one.MaxContextLength-one.MaxContextLength%contextStep)+" tokens")

	fewest := shard(t, request(t, body+`,"placement":"fewest"}`, rtx3060s(t, 4)))
	assert.Equal(t, []string{"cuda:0"}, shardDevices(fewest))
	assert.Equal(t, llamaFlag(one, "-c"), llamaFlag(fewest, "-c"))
	assert.Empty(t, placementLineOf(fewest))
}

// A busy GPU (less free memory than the others of its kind) joins a
// llama.cpp split last: the idle ones hold the model's context.
func TestLlamaCPPBusyGPUJoinsLast(t *testing.T) {
	devs := []registry.Device{h100(0), h100(1), h100(2)}
	free := int64(30 << 30)
	devs[0].MemoryFreeBytes = &free
	r := reg(t, devs, link(registry.LinkNVSwitch, 900, ids("cuda", 3)...))
	a := shard(t, request(t, `{"model":{"name":"Llama-3.3-70B-Instruct"},"engine":"llama.cpp","quant":"q8_0"}`, r))
	require.True(t, a.Fits.Yes(), a.Explanation)
	assert.Equal(t, []string{"cuda:1", "cuda:2"}, shardDevices(a))
	assert.Equal(t, "131072", llamaFlag(a, "-c"))
	assert.Equal(t, "1,2", a.EngineEnv["llama.cpp"]["CUDA_VISIBLE_DEVICES"])
}

// GPUs of another kind do not join: an A100 beside an H100 that holds the
// model at a shorter context stays idle (its layers would run at its own
// bandwidth; devices or context_length ask for it).
func TestLlamaCPPDifferentGPUsDoNotJoin(t *testing.T) {
	a100 := gpu(registry.KindCUDA, 1, "NVIDIA A100-SXM4-80GB", 81920<<20, "8.0")
	a100.Vendor = "nvidia"
	r := reg(t, []registry.Device{h100(0), a100})
	a := shard(t, request(t, `{"model":{"name":"Llama-3.3-70B-Instruct"},"engine":"llama.cpp","quant":"q8_0"}`, r))
	require.True(t, a.Fits.Yes(), a.Explanation)
	assert.Equal(t, []string{"cuda:0"}, shardDevices(a))
	assert.Less(t, a.MaxContextLength, 131072)
	assert.Empty(t, placementLineOf(a))
}

// The rule is llama.cpp's, not CUDA's: two ROCm GPUs with a UUID (which
// ROCR_VISIBLE_DEVICES names) are treated alike. Without one the command
// cannot make exactly the plan's GPUs visible, and --tensor-split numbers
// the GPUs llama.cpp sees from 0, so the plan stays on the fewest.
func TestLlamaCPPROCmSplitsForTheContext(t *testing.T) {
	radeons := func(uuid bool) *registry.Registry {
		var devs []registry.Device
		for i := 0; i < 2; i++ {
			d := gpu(registry.KindROCm, i, "AMD Radeon RX 7900 XTX", 24<<30, "")
			d.Vendor = "amd"
			if uuid {
				d.UUID = fmt.Sprintf("0x%016x", 0x5a1e0000+i)
			}
			devs = append(devs, d)
		}
		return reg(t, devs)
	}
	const body = `{"model":{"name":"llama-3.1-8b"},"engine":"llama.cpp","quant":"bf16"`
	a := shard(t, request(t, body+`}`, radeons(true)))
	require.True(t, a.Fits.Yes(), a.Explanation)
	assert.Equal(t, []string{"rocm:0", "rocm:1"}, shardDevices(a))
	assert.Equal(t, "131072", llamaFlag(a, "-c"))
	assert.Equal(t, "GPU-000000005a1e0000,GPU-000000005a1e0001", a.EngineEnv["llama.cpp"]["ROCR_VISIBLE_DEVICES"])
	f := shard(t, request(t, body+`,"placement":"fewest"}`, radeons(true)))
	assert.Equal(t, []string{"rocm:0"}, shardDevices(f))
	assert.Less(t, f.MaxContextLength, 131072)

	n := shard(t, request(t, body+`}`, radeons(false)))
	assert.Equal(t, []string{"rocm:0"}, shardDevices(n))
	assert.Equal(t, llamaFlag(f, "-c"), llamaFlag(n, "-c"))
	assert.Empty(t, placementLineOf(n))
}

// A layer split reads the same weights and KV cache as one device, one
// stage after the other: the speed model charges the two-GPU split of
// Llama-3.3-70B q8_0 the one-GPU step plus one hand-off of the hidden
// state between the stages (hidden x 2 bytes over the inter-stage link),
// and nothing more. The link is made slow here so that the hand-off shows
// above the rounding of the figures.
func TestLlamaCPPLayerSplitChargesOneHandOff(t *testing.T) {
	req := planningOf(t, request(t, `{"model":{"name":"Llama-3.3-70B-Instruct"},"engine":"llama.cpp","quant":"q8_0","context_length":4096}`, eightH100(t, false)))
	ch, err := choose(req)
	require.NoError(t, err)
	one := ch.Plan
	require.Equal(t, StrategyNone, one.Strategy)
	stages, ok := layerSplit(groupOf(&one)[:2], one.Costs)
	require.True(t, ok)
	two := one
	two.Strategy, two.Stages = StrategyPipeline, stages
	const inter = 0.01 // GB/s
	t1 := estimateThroughput(&one, req, inter)
	t2 := estimateThroughput(&two, req, inter)
	require.Positive(t, t1.DecodeTokensPerS)
	require.Positive(t, t2.DecodeTokensPerS)
	hop := float64(req.Model.Hidden) * 2 / (inter * 1e9)
	step1, step2 := 1/t1.DecodeTokensPerS, 1/t2.DecodeTokensPerS
	assert.InDelta(t, step1+hop, step2, step2*1e-3, "one step plus one hand-off: %g s against %g s + %g s", step2, step1, hop)
}

// With -np 4 llama.cpp shares the trained context among the sequences
// (131072 tokens, 32768 each): the placement and context lines say so
// rather than call 32768 the model's context, and what the fewest devices
// hold is per sequence too. Before, a Llama-3.1-70B plan at batch 4 on a
// DGX H100 said "hold the model's 32768-token context per sequence" and
// "the model's trained context (32768 per sequence)".
func TestLlamaCPPSharedTrainedContextIsNamedWhole(t *testing.T) {
	const body = `{"model":{"name":"llama-3.1-8b"},"engine":"llama.cpp","quant":"q8_0","batch_size":4}`
	four := shard(t, request(t, body, rtx3060s(t, 4)))
	require.True(t, four.Fits.Yes(), four.Explanation)
	require.Equal(t, "131072", llamaFlag(four, "-c"))
	require.Equal(t, "4", llamaFlag(four, "-np"))
	line := placementLineOf(four)
	assert.Contains(t, line, "hold the model's trained context (131072 tokens, shared by 4 sequences: 32768 per sequence), the fewest that do")
	assert.NotContains(t, line, "model's 32768-token context")
	assert.Regexp(t, `1 device holds \d+ tokens per sequence \(`, line)
	assert.Contains(t, strings.Join(four.Explanation, "\n"),
		"context: 32768 tokens per sequence, chosen as llama.cpp's --fit chooses with no -c: the model's trained context (131072 tokens, shared by 4 sequences: 32768 per sequence), it fits whole")

	two := shard(t, request(t, body, rtx3060s(t, 2)))
	require.True(t, two.Fits.Yes(), two.Explanation)
	assert.Contains(t, placementLineOf(two), "less than the model's trained context (131072 tokens, shared by 4 sequences: 32768 per sequence)")
}
