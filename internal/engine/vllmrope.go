package engine

import (
	"math"

	"github.com/ai-hwaccel/ai-hwaccel/internal/model"
)

// vLLM's rotary tables, read from vllm-project/vllm:
//
//   - get_rope (vllm/model_executor/layers/rotary_embedding/__init__.py at
//     07b12f1b16d5568eeb29a52fd8c9296a51f478ed) keeps one rotary embedding
//     per distinct (head size, rotary dim, max_position, neox style, rope
//     parameters, dtype) in a process-wide dict, so the layers of a model
//     share one table per distinct configuration; rotary_dim is
//     int(head_size × partial_rotary_factor); the YaRN and DeepSeek-YaRN
//     classes are given original_max_position_embeddings in place of
//     max_position, LongRoPE both.
//   - RotaryEmbeddingBase (base.py at
//     072d10a084c2b89e63323c781eacd7d7e218ba2b) registers cos_sin_cache, one
//     row of rotary_dim values (the cos and sin halves) per position, cast
//     to the dtype it is given (the model's, torch's default while the
//     model is built, unless the model passes another), as a buffer of
//     the module: it lies on the device with the weights, so "Model
//     loading took" counts it, on every worker (each tensor-parallel rank
//     and each pipeline stage builds its layers' embeddings).
//   - The positions each class tabulates: the default, Llama 3 and
//     Llama 4 kinds max_position (llama3_rope.py at
//     045d7575500e01e0f4a7ff84e039a9f7f7dc3bd0 changes only the
//     frequencies); linear max_position × factor
//     (linear_scaling_rope.py at 0f17ee061e413bf8ab7927f926f69cdff24dc63e),
//     dynamic NTK the same (dynamic_ntk_scaling_rope.py at
//     3cfbaf333d800badc12fad1f138ab01178d35ab8); YaRN ⌈original × factor⌉
//     (yarn_scaling_rope.py at 0cd5784803d83f81fac0794b82cb592d4317d4bf),
//     DeepSeek's YaRN original × factor (deepseek_scaling_rope.py at
//     00d678e109f09c2d1845e7a6626ba9fd5980e4f0); LongRoPE a short table
//     of original and a long one of max_position
//     (phi3_long_rope_scaled_rope.py at
//     17d618b0f944610b73e79e6726983fbe7679f613); MRoPE four times the
//     length it is given, for video positions, before a YaRN factor
//     (mrope.py at 055e47c28003156421365af985d676fc921cb075).
//   - The models pass max_position_embeddings as max_position:
//     LlamaAttention (get_rope(head_dim, rotary_dim=head_dim,
//     max_position=max_position_embeddings) in
//     vllm/model_executor/models/llama.py at
//     0035bdf2b1ac243ef6f31eef27411b022461df8e), Llama4Attention (the same
//     call in llama4.py at 0121c95efe85a732d1f5c1ade6c5434152b76276),
//     Gemma3Attention (gemma3.py at
//     004dc924965cf24a4ade341394c45290169dd2ba: a default table from
//     rope_local_base_freq on the sliding layers, the config's on the
//     global ones), OAIAttention (gpt_oss.py at
//     0025d69bcf08bb1b135103167f0bbc82b9af6e69: YaRN, in float32).
//   - Multi-head latent attention rotates only the qk_rope_head_dim part
//     of each head: DeepseekV2MLAAttention calls get_rope(qk_rope_head_dim,
//     max_position=max_position_embeddings, rope_parameters, ...) and
//     turns a scaled rope_type into deepseek_yarn
//     (vllm/model_executor/models/deepseek_v2.py at
//     002d6073aa034d4f5545d45021b0e56d1f3c3593).

// VLLMRopeCacheBytes is what vLLM's rotary tables for model m take on each
// device, values valueBytes wide (the model's dtype; 4 where the family
// builds its table in float32, model.Arch.VLLMRotaryFloat32): one table
// for the attention layers' rotary configuration (model.Model.Rope) and a
// second for the sliding-window layers' where theirs differs
// (Model.SlidingRope, or the default kind where the family gives its
// sliding layers one, model.Arch.VLLMLocalRotary). Each is its class's
// positions (vllmRotaryPositions, from max_position_embeddings,
// Model.MaxContext, not --max-model-len) × the rotary dimension
// (vllmRotaryDim). 0 without rotary positions (Model.HasRotaryPositions)
// or a known length.
//
// Llama 4 Scout's 10,485,760 positions × 128 × 2 bytes are 2.5 GiB a rank:
// with them the plan meets the "Model loading took 53.12 GiB" of the
// llm-d-planner v0.19.0 log at TP 4 (row
// llmd-meta-llama-llama-4-scout--h100-80gb--tp4pp1dp1--8192 of
// internal/calibration/data/vllm_startup.json), 2.53 GiB above the weights
// alone; Llama 3.1 8B's 32 MiB is the 0.03 GiB its rows print above the
// weights at TP 1, 2 and 4 (0.06 at fp32). Gemma 3 4B's tables, 131,072
// and 8 × 131,072 positions × 256 × 2 bytes, are 0.5625 GiB: the 0.57 GiB
// its llm-d-planner row printed beyond its language model and tower (the
// 12B 0.61 GiB for the same 0.5625, the 27B 0.35 for 0.28).
func VLLMRopeCacheBytes(m *model.Model, valueBytes int) int64 {
	if m == nil || m.MaxContext <= 0 || !m.HasRotaryPositions() {
		return 0
	}
	if m.Arch().VLLMRotaryFloat32 {
		valueBytes = 4
	}
	head := vllmRotaryHead(m)
	sliding := m.SlidingRope
	if sliding == (model.Rope{}) && m.Arch().VLLMLocalRotary {
		sliding = model.Rope{Type: "default"}
	}
	if sliding == (model.Rope{}) || sliding == m.Rope {
		return vllmRotaryTableBytes(m.Rope, m.MaxContext, head, valueBytes)
	}
	// The global layers' heads may be wider than the sliding ones (Gemma
	// 4's global_head_dim): each table rotates its own layers' heads.
	global := head
	for _, l := range m.LayerKinds {
		if l.Kind == model.FullAttention && l.HeadDim > 0 {
			global = l.HeadDim
			break
		}
	}
	return vllmRotaryTableBytes(m.Rope, m.MaxContext, global, valueBytes) +
		vllmRotaryTableBytes(sliding, m.MaxContext, head, valueBytes)
}

// vllmRotaryTableBytes is one table of rotary configuration r for heads
// of head values (vllmRotaryPositions × vllmRotaryDim values), at most
// maxRotaryTableBytes.
func vllmRotaryTableBytes(r model.Rope, maxPositions, head, valueBytes int) int64 {
	b := float64(vllmRotaryPositions(r, maxPositions)) * float64(vllmRotaryDim(r, head)) * float64(valueBytes)
	return int64(math.Min(b, maxRotaryTableBytes))
}

// maxRotaryTableBytes caps one table (1 PiB) so that a config of absurd
// lengths and widths (each in range alone) yields a plan too large to fit
// rather than an overflowed product.
const maxRotaryTableBytes = 1 << 50

// vllmRotaryHead is the width of the part of each head that positions
// rotate: the whole head, or qk_rope_head_dim under multi-head latent
// attention.
func vllmRotaryHead(m *model.Model) int {
	if m.QKRopeHeadDim > 0 {
		return m.QKRopeHeadDim
	}
	return m.EffectiveHeadDim()
}

// vllmRotaryPositions is the number of positions vLLM's rotary class for
// r tabulates where the model passes max_position_embeddings maxPositions
// (the classes above): a scaled kind's factor or original length where
// the configuration gives them, the default length otherwise (an unknown
// kind included).
func vllmRotaryPositions(r model.Rope, maxPositions int) int64 {
	n := float64(maxPositions)
	original := float64(r.OriginalMaxPositions)
	if original == 0 {
		original = n
	}
	mrope := 1.0
	if r.MRoPE {
		mrope = 4
	}
	switch r.Type {
	case "linear", "dynamic":
		if r.Factor > 0 {
			return int64(math.Ceil(n * r.Factor))
		}
	case "yarn":
		if r.Factor > 0 {
			return int64(math.Ceil(mrope * original * r.Factor))
		}
	case "longrope":
		if r.OriginalMaxPositions > 0 {
			return int64(original + n)
		}
	}
	return int64(mrope * n)
}

// vllmRotaryDim is the rotary dimension of r's table for heads of head
// values: all of them, or the part an explicit rotary_dim or
// partial_rotary_factor names (get_rope's int(head_size ×
// partial_rotary_factor)).
func vllmRotaryDim(r model.Rope, head int) int {
	switch {
	case r.RotaryDim > 0 && r.RotaryDim <= head:
		return r.RotaryDim
	case r.PartialFactor > 0:
		return int(float64(head) * r.PartialFactor)
	}
	return head
}
