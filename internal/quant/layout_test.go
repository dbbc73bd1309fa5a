package quant

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/model"
)

// TestKimiInt4FollowsItsStoredLayout: Kimi-K2.5's INT4 release stores the
// routed experts in 4 bits with a bf16 scale per 32 weights and every
// other weight in bf16 (its quantization_config, the checkpoint's
// layout), so its int4 weights are exactly those two parts at 4.5 and 16
// bits; the int4 level's rule (every linear layer at 4.125 bits) gave
// 10 % less. Other levels, which no checkpoint of it stores, keep the
// level's rule.
func TestKimiInt4FollowsItsStoredLayout(t *testing.T) {
	m := model.Lookup("Kimi-K2.5")
	require.NotNil(t, m)
	routed := m.RoutedExpertParams() * int64(m.MoELayers())
	require.Equal(t, int64(60*384*3*7168*2048), routed)
	want := routed/2 + routed/32*2 + (m.Params-routed)*2
	assert.InDelta(t, want, WeightsBytes(m, INT4), 1)

	bare := *m
	bare.Checkpoints = nil
	level := WeightsBytes(&bare, INT4)
	assert.InDelta(t, -0.104, float64(level)/float64(want)-1, 0.005, "the int4 level's rule")
	for _, l := range []Level{FP8, INT8, BF16} {
		assert.Equal(t, WeightsBytes(&bare, l), WeightsBytes(m, l), l)
	}
}

// TestLayoutBitsByStrategy: the scales a layout stores beside its
// quantized weights, per strategy; tensors outside its parts, norms
// included, stay 16-bit.
func TestLayoutBitsByStrategy(t *testing.T) {
	routed := tensor{catFFNDown, 1, 1, 2048, partRoutedExperts}
	attn := tensor{catAttnQ, 1, 1, 7168, partAttention}
	norm := tensor{catF32, 1, 1, 0, partNone}
	quantized := func(ps ...part) (q [len(layoutParts)]bool) {
		for _, p := range ps {
			q[p] = true
		}
		return q
	}
	group := layoutKey{bits: 4, strategy: "group", group: 32, scale: 16, quantized: quantized(partRoutedExperts)}
	assert.Equal(t, 4.5, layoutBits(group, routed))
	assert.Equal(t, 16.0, layoutBits(group, attn))
	assert.Equal(t, 16.0, layoutBits(group, norm))
	awq := layoutKey{bits: 4, strategy: "group", group: 128, scale: 16, zero: 4, quantized: quantized(partAttention)}
	assert.Equal(t, 4+20.0/128, layoutBits(awq, attn))
	block := layoutKey{bits: 8, strategy: "block", block: 128, scale: 32, quantized: quantized(partAttention, partRoutedExperts)}
	assert.Equal(t, 8+32.0/(128*128), layoutBits(block, routed))
	channel := layoutKey{bits: 8, strategy: "channel", scale: 16, quantized: quantized(partAttention)}
	assert.Equal(t, 8+16.0/7168, layoutBits(channel, attn))
	tensorWide := layoutKey{bits: 8, strategy: "tensor", scale: 32, quantized: quantized(partAttention)}
	assert.Equal(t, 8.0, layoutBits(tensorWide, attn))
}

// TestStoredLayoutPicksTheLoadedCheckpoint: the layout at a level is the
// checkpoint's that a plan at that level loads (the named one, else the
// first listed at the level), else the config's; none at a level no
// layout stores, nor for a checkpoint that records none.
func TestStoredLayoutPicksTheLoadedCheckpoint(t *testing.T) {
	int4 := model.WeightLayout{Quant: "int4", Bits: 4, Strategy: "group", GroupSize: 32, ScaleBits: 16, Quantized: []string{model.PartRoutedExperts}}
	fp8 := model.WeightLayout{Quant: "fp8", Bits: 8, Strategy: "block", BlockSize: 128, ScaleBits: 32, Quantized: []string{model.PartAttention}}
	m := &model.Model{Checkpoints: []model.Checkpoint{
		{Quant: "int4", Repo: "a/with-layout", Layout: int4},
		{Quant: "int4", Repo: "b/without"},
		{Quant: "q4_k_m", Repo: "c/GGUF", Method: "gguf"},
	}, Layout: fp8}
	got, ok := storedLayout(m, INT4)
	assert.True(t, ok)
	assert.Equal(t, int4, got)
	m.NamedCheckpoint = 1
	_, ok = storedLayout(m, INT4)
	assert.False(t, ok, "the named checkpoint records no layout")
	got, ok = storedLayout(m, FP8)
	assert.True(t, ok, "the config's layout at its own level")
	assert.Equal(t, fp8, got)
	_, ok = storedLayout(m, INT8)
	assert.False(t, ok)
	_, ok = storedLayout(m, "q4_k_m")
	assert.False(t, ok)
	assert.NotEqual(t, keyOf(int4, true), keyOf(fp8, true))
	assert.Equal(t, layoutKey{}, keyOf(int4, false))
}

// TestActiveShareReadsTheLayoutsBytes: a decode step of Kimi-K2.5's INT4
// release reads its bf16 parts whole and 8 of its 384 routed experts at
// 4.5 bits; the input embedding (a lookup) is left out of both sides. A
// level no checkpoint's layout covers keeps the parameter share (false).
func TestActiveShareReadsTheLayoutsBytes(t *testing.T) {
	m := model.Lookup("Kimi-K2.5")
	require.NotNil(t, m)
	routed := float64(m.RoutedExpertParams() * int64(m.MoELayers()))
	embed := float64(m.Vocab) * float64(m.Hidden)
	other := float64(m.Params) - routed - embed
	want := (other*2 + routed*8/384*4.5/8) / (other*2 + routed*4.5/8)
	got, ok := ActiveShare(m, INT4)
	require.True(t, ok)
	assert.InDelta(t, want, got, 1e-9)
	assert.InDelta(t, 0.0557, got, 0.0005, "33.0 GB of 591.9 GB, the 2.3 GB embedding aside")
	_, ok = ActiveShare(m, FP8)
	assert.False(t, ok)
	_, ok = ActiveShare(model.Lookup("Llama-3.1-8B"), INT4)
	assert.False(t, ok)
}
