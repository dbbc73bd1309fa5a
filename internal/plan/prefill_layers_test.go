package plan

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/model"
)

// TestPromptAttentionByLayerKind: a prompt token's attention is costed
// layer by layer from the catalog model's layer kinds (model.LayerCounts),
// 2 FLOPs per key attended per unit of the heads' query-key plus value
// widths. Averaged over a prompt of P tokens, a full layer attends to P/2
// keys; a sliding-window layer of w to min(position, w) keys, w − w²/(2P)
// on average once P > w; a chunked layer of c to its position within its
// chunk, (⌊P/c⌋·c² + (P mod c)²) / (2P) on average; a recurrent layer
// attends to nothing and updates its state (4 FLOPs per SSM state
// element: recurrentTokenFLOPs), as does the mixer beside a parallel
// hybrid's attention; a feed-forward block does neither.
// Layer counts, windows, heads and head widths are those of each model's
// config.json as the catalog holds it (the source URL of each entry in
// internal/model/catalog.json).
func TestPromptAttentionByLayerKind(t *testing.T) {
	const P = 4096
	full := float64(P) / 2
	cases := []struct {
		name   string
		prompt int
		want   float64
	}{
		// gpt-oss-120b: 36 layers alternating a 128-token window and full
		// attention (layer_types), 64 heads of 64: widths 64 × 128.
		{"gpt-oss-120b", P, 2*18*full*64*128 + 2*18*(128-128.0*128/(2*P))*64*128},
		// gemma-3-27b-it: 62 layers, every 6th global (sliding_window_pattern
		// 6: 10 global, 52 local of sliding_window 1024), 32 heads of 128.
		{"gemma-3-27b-it", P, 2*10*full*32*256 + 2*52*(1024-1024.0*1024/(2*P))*32*256},
		// Shorter than the window: every layer attends as a full one.
		{"gemma-3-27b-it", 512, 2 * 62 * 256.0 * 32 * 256},
		// Llama-4-Scout: 48 layers, every 4th global (no_rope_layers), the
		// others chunked at attention_chunk_size 8192; 40 heads of 128. A
		// prompt of 4.5 chunks: four whole chunks and half of one.
		{"Llama-4-Scout-17B-16E-Instruct", 36864, 2*12*18432.0*40*256 + 2*36*(4*8192.0*8192+4096.0*4096)/(2*36864)*40*256},
		// Within one chunk: every layer attends as a full one.
		{"Llama-4-Scout-17B-16E-Instruct", P, 2 * 48 * full * 40 * 256},
		// Qwen3-Next-80B-A3B: 48 layers, every 4th full attention
		// (full_attention_interval 4: 12) of 16 heads of 256; 36 gated
		// DeltaNet layers of 32 value heads, key and value heads of 128:
		// a 128 × 128 state per value head.
		{"Qwen3-Next-80B-A3B-Instruct", P, 2*12*full*16*512 + 36*4*(32*128*128.0)},
		// Nemotron-H-56B: hybrid_override_pattern of 118 blocks, 10
		// attention ("*", 64 heads of 128), 54 Mamba2 ("M": mamba_num_heads
		// 256 × mamba_head_dim 64 × ssm_state_size 256) and 54 MLP ("-").
		{"Nemotron-H-56B-Base-8K", P, 2*10*full*64*256 + 54*4*(256*64*256.0)},
		// Falcon-H1-0.5B: 36 parallel hybrid layers, each attention (8
		// heads of 64) beside a Mamba2 mixer (mamba_n_heads 24 ×
		// mamba_d_head 64 × mamba_d_state 128): both counted.
		{"Falcon-H1-0.5B-Instruct", P, 2*36*full*8*128 + 36*4*(24*64*128.0)},
	}
	for _, c := range cases {
		m := model.Lookup(c.name)
		require.NotNil(t, m, c.name)
		assert.InDelta(t, c.want, promptAttentionFLOPs(m, false, 0, m.Layers, c.prompt), c.want*1e-12, "%s, prompt %d", c.name, c.prompt)
	}
}

// TestPromptAttentionDenseUnchanged: a model of full-attention layers only
// keeps the formula of before, 2 × layers × prompt/2 × the heads' widths,
// to the bit, and a pipeline stage's share is its layers'.
func TestPromptAttentionDenseUnchanged(t *testing.T) {
	for _, name := range []string{"Llama-3.1-8B", "Llama-3.1-70B", "Qwen2.5-0.5B"} {
		m := model.Lookup(name)
		require.NotNil(t, m, name)
		for _, prompt := range []int{128, 512, 4096, 32768} {
			w := attentionHeadWidths(m, false)
			assert.Equal(t, 2*float64(m.Layers)*float64(prompt)/2*w, promptAttentionFLOPs(m, false, 0, m.Layers, prompt), name)
			assert.Equal(t, 2*float64(10)*float64(prompt)/2*w, promptAttentionFLOPs(m, false, 5, 15, prompt), name)
		}
	}
}

// TestPromptAttentionStageLayers: a pipeline stage counts the kinds of its
// own layers. gpt-oss-120b's layer 0 is a window layer and layer 1 a full
// one (layer_types of its config.json).
func TestPromptAttentionStageLayers(t *testing.T) {
	m := model.Lookup("gpt-oss-120b")
	require.NotNil(t, m)
	const P = 4096
	widths := 64 * 128.0
	assert.InDelta(t, 2*(128-128.0*128/(2*P))*widths, promptAttentionFLOPs(m, false, 0, 1, P), 1e-3)
	assert.InDelta(t, 2*P/2*widths, promptAttentionFLOPs(m, false, 1, 2, P), 1e-3)
	whole := promptAttentionFLOPs(m, false, 0, m.Layers, P)
	assert.InDelta(t, whole, promptAttentionFLOPs(m, false, 0, 17, P)+promptAttentionFLOPs(m, false, 17, m.Layers, P), whole*1e-12)
}

// TestPromptAttentionLayerWidths: a layer with head widths of its own
// (Gemma 4's global layers: global_head_dim 512, attention_k_eq_v) is
// costed at them: its 32 query heads score over 512 and sum 512; the
// 1024-token window layers use the model's head_dim 256.
func TestPromptAttentionLayerWidths(t *testing.T) {
	m := model.Lookup("gemma-4-31B")
	require.NotNil(t, m)
	const P = 4096
	want := 2*10*(P/2.0)*32*1024 + 2*50*(1024-1024.0*1024/(2*P))*32*512
	assert.InDelta(t, want, promptAttentionFLOPs(m, false, 0, m.Layers, P), want*1e-12)
}

// TestWindowedKeys checks the average keys per prompt token of one layer:
// the integral of min(x, w) over a prompt of P, divided by P.
func TestWindowedKeys(t *testing.T) {
	assert.Equal(t, 2048.0, layerKeysPerToken(model.Layer{Kind: model.FullAttention}, 4096))
	assert.Equal(t, 2048.0, layerKeysPerToken(model.Layer{Kind: model.SlidingWindow, Window: 4096}, 4096))
	assert.Equal(t, 126.0, layerKeysPerToken(model.Layer{Kind: model.SlidingWindow, Window: 128}, 4096))
	assert.Equal(t, 4096.0, layerKeysPerToken(model.Layer{Kind: model.ChunkedAttention, Window: 8192}, 16384))
	assert.Equal(t, 2048.0, layerKeysPerToken(model.Layer{Kind: model.ChunkedAttention, Window: 8192}, 4096))
	assert.Zero(t, layerKeysPerToken(model.Layer{Kind: model.Recurrent}, 4096))
	assert.Zero(t, layerKeysPerToken(model.Layer{Kind: model.FeedForward}, 4096))
}
