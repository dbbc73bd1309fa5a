package engine

import (
	"github.com/ai-hwaccel/ai-hwaccel/internal/model"
)

// How vLLM v1 lays out the cache of a model whose layers keep a recurrent
// state (Mamba/Mamba2, gated DeltaNet, short convolutions) beside attention
// layers, read at vllm-project/vllm commit
// 001cabc1be16a59a70d720ed61a13b678c060a18 (vllm/v1/core/kv_cache_utils.py,
// vllm/v1/kv_cache_interface.py) and 1936cf3841edb9781b06c50fc4daf4bac9d3b23e
// (vllm/model_executor/models/config.py):
//
//   - A recurrent layer's state for one sequence is one page (MambaSpec,
//     page_size_bytes: the conv and SSM state tensors). The attention block
//     is raised until one attention layer's page holds it: block = 16 x
//     cdiv(state page, 16 x one token's KV bytes) tokens (64 for MLA), and
//     the state page is padded to the attention page
//     (HybridAttentionMambaModelConfig.verify_and_update_config).
//   - Layers of one kind form groups of equal size: the smaller count, or
//     the larger when it is below 1.5 times the smaller; the last group of a
//     kind is padded (_get_kv_cache_groups_uniform_page_size).
//   - All groups draw blocks from one pool: blocks = memory / page / layers
//     per group (get_kv_cache_config_from_groups, get_num_blocks).
//   - A request at --max-model-len takes cdiv(len, block) blocks in each
//     attention group and one state block per state group, two in the
//     "align" mode of prefix caching (MambaSpec.max_memory_usage_bytes);
//     "Maximum concurrency" is blocks over their sum
//     (get_max_concurrency_for_kv_cache_config).
//   - "GPU KV cache size" was blocks // groups x the smallest block
//     (_report_kv_cache_config) until vLLM printed it as concurrency x
//     --max-model-len (get_kv_cache_capacity; vllm issue 40691, PR 40694).

// vllmTokensAsConcurrency is the first release that prints "GPU KV cache
// size" as concurrency x --max-model-len: the club-3090 start-up logs of
// 0.20.1rc1.dev16 (issue 46) print the blocks over the groups, those of
// 0.20.2rc1.dev9 (issues 75 and 76) concurrency x length.
var vllmTokensAsConcurrency = Version{0, 20, 2}

// vllmAlignTwoBlocks is the first release a replayed log shows charging two
// state blocks per request and group (prefix caching's "align" mode, on by
// default): 0.24.0 (club-3090 issues 612 and 652); 0.19.0 charges one
// (vllm issue 40691). Releases between are not pinned by a log and are
// planned as 0.19.
var vllmAlignTwoBlocks = Version{0, 24, 0}

// vllmNemotronHStateDtype is the first release that keeps a Nemotron-H
// model's SSM state at the dtype its config names ("mamba_ssm_cache_dtype":
// float32 for Nemotron 3): NemotronHForCausalLMConfig in
// vllm/model_executor/models/config.py, added by vllm PR 29978 (December
// 2025), resolves --mamba-ssm-cache-dtype auto to it and logs "Updating
// mamba_ssm_cache_dtype to ..." (the 0.13.0 and 0.14.1 logs do). Before,
// auto is the model's dtype: NVIDIA's 0.12.0 log of Nemotron 3 Nano prints
// no such line and 1,072-token blocks, a bf16 state (NVIDIA-NeMo/Nemotron
// usage-cookbook/Nemotron-3-Nano/vllm_cookbook.ipynb).
var vllmNemotronHStateDtype = Version{0, 13, 0}

// VLLMCacheSetup is what vLLM's hybrid cache layout depends on besides the
// model.
type VLLMCacheSetup struct {
	Version Version
	// TP is the tensor-parallel size: it splits the KV heads (never below
	// one) and the recurrent state.
	TP int
	// MaxModelLen is --max-model-len.
	MaxModelLen int
	// KVBytes is one attention cache element (--kv-cache-dtype: 2 for
	// auto on a bf16 model, 1 for fp8); ModelBytes is one element of the
	// model's dtype, the conv state's width and the SSM state's unless
	// the model names its own (model.Model.SSMStateBytes; ssmBytes).
	KVBytes, ModelBytes float64
	// Start and End are the layers of the pipeline stage, [Start, End);
	// End 0: all the model's layers.
	Start, End int
}

// VLLMHybridLayout is vLLM's cache layout for a hybrid model on one GPU.
type VLLMHybridLayout struct {
	// BlockTokens is the attention block, raised to hold a state page.
	BlockTokens int
	// PageBytes is one layer's page: BlockTokens of one attention layer,
	// the padded state of one recurrent layer.
	PageBytes int64
	// LayersPerGroup is the layers of each group: a block of the pool is
	// PageBytes x LayersPerGroup.
	LayersPerGroup int
	// AttentionGroups and StateGroups count the groups of each kind.
	AttentionGroups, StateGroups int
	// StateBlocksPerRequest is the state blocks a request holds in each
	// state group.
	StateBlocksPerRequest int

	maxModelLen       int
	tokensConcurrency bool
}

// VLLMHybridLayoutOf is vLLM's layout of model m's cache, false when m has
// no recurrent layer besides attention or its attention layers differ in
// shape or kind (sliding windows, several head counts), which this does
// not follow.
func VLLMHybridLayoutOf(m *model.Model, s VLLMCacheSetup) (VLLMHybridLayout, bool) {
	if m == nil || s.MaxModelLen <= 0 || s.KVBytes <= 0 || s.ModelBytes <= 0 {
		return VLLMHybridLayout{}, false
	}
	tp := max(s.TP, 1)
	end := s.End
	if end <= 0 || end > m.Layers {
		end = m.Layers
	}
	var attn, states int
	var token, state int64 // bytes: one token of one attention layer; the largest state page
	mla := false
	for i := max(s.Start, 0); i < end; i++ {
		l := m.LayerAt(i)
		if l.CachesPerToken() {
			b, isMLA, ok := tokenBytes(m, l, tp, s.KVBytes)
			if !ok || (token != 0 && b != token) {
				return VLLMHybridLayout{}, false
			}
			token, mla = b, isMLA
			attn++
		} else if l.Kind != model.Recurrent && l.StateElements() == 0 {
			continue
		}
		if l.StateElements() > 0 {
			state = max(state, statePageBytes(l, tp, s.ModelBytes, ssmBytes(m, s)))
			states++
		}
	}
	if attn == 0 || states == 0 || token == 0 || state == 0 {
		return VLLMHybridLayout{}, false
	}
	align := int64(16)
	if mla {
		align = 64
	}
	block := align * ceilDiv(state, align*token)
	group := min(attn, states)
	if 2*max(attn, states) < 3*group {
		group = max(attn, states)
	}
	l := VLLMHybridLayout{
		BlockTokens:           int(block),
		PageBytes:             block * token,
		LayersPerGroup:        group,
		AttentionGroups:       int(ceilDiv(int64(attn), int64(group))),
		StateGroups:           int(ceilDiv(int64(states), int64(group))),
		StateBlocksPerRequest: 1,
		maxModelLen:           s.MaxModelLen,
		tokensConcurrency:     !s.Version.Before(vllmTokensAsConcurrency),
	}
	if !s.Version.Before(vllmAlignTwoBlocks) {
		l.StateBlocksPerRequest = 2
	}
	return l, true
}

// tokenBytes is one token's KV bytes in attention layer l on one of tp
// ranks: K and V of max(1, heads / tp) heads, or the MLA latent and RoPE
// key, which every rank keeps whole (MLAAttentionSpec).
func tokenBytes(m *model.Model, l model.Layer, tp int, kvBytes float64) (int64, bool, bool) {
	switch l.Kind {
	case model.FullAttention:
		heads, dim := l.KVHeads, l.HeadDim
		if heads == 0 {
			heads = m.EffectiveKVHeads()
		}
		if dim == 0 {
			dim = m.EffectiveHeadDim()
		}
		if heads <= 0 || dim <= 0 {
			return 0, false, false
		}
		return int64(2 * float64(max(heads/tp, 1)*dim) * kvBytes), false, true
	case model.LatentAttention:
		return int64(float64(l.LatentDim+l.RopeDim) * kvBytes), true, true
	}
	return 0, false, false
}

// ssmBytes is one element of model m's SSM state under setup s: the
// dtype the model names (model.Model.SSMStateBytes), else the model's own;
// a Nemotron-H model's named dtype only from vllmNemotronHStateDtype.
func ssmBytes(m *model.Model, s VLLMCacheSetup) float64 {
	if m.SSMStateBytes <= 0 || m.Architecture == "nemotron_h" && s.Version.Before(vllmNemotronHStateDtype) {
		return s.ModelBytes
	}
	return float64(m.SSMStateBytes)
}

// statePageBytes is recurrent layer l's state for one sequence on one of
// tp ranks: the conv state in the model's dtype (modelBytes), the SSM
// state at ssm bytes an element, both split over the ranks
// (mamba2_state_shape and gated_delta_net_state_shape in
// vllm/model_executor/layers/mamba/mamba_utils.py divide the heads and
// channels by the tensor-parallel size).
func statePageBytes(l model.Layer, tp int, modelBytes, ssm float64) int64 {
	t := int64(tp)
	return int64(float64(ceilDiv(l.ConvState, t))*modelBytes + float64(ceilDiv(l.SSMState, t))*ssm)
}

func ceilDiv(a, b int64) int64 { return (a + b - 1) / b }

// Blocks is the pool's blocks in kvBytes of KV cache memory.
func (l VLLMHybridLayout) Blocks(kvBytes int64) int64 {
	if kvBytes <= 0 {
		return 0
	}
	return kvBytes / l.PageBytes / int64(l.LayersPerGroup)
}

// BlocksPerRequest is the blocks one request of --max-model-len tokens
// holds over all groups.
func (l VLLMHybridLayout) BlocksPerRequest() int {
	return l.AttentionGroups*int(ceilDiv(int64(l.maxModelLen), int64(l.BlockTokens))) + l.StateGroups*l.StateBlocksPerRequest
}

// MaxConcurrency is "Maximum concurrency for --max-model-len tokens per
// request" of a pool of blocks.
func (l VLLMHybridLayout) MaxConcurrency(blocks int64) float64 {
	return float64(blocks) / float64(l.BlocksPerRequest())
}

// Tokens is "GPU KV cache size: N tokens" of a pool of blocks, as the
// release prints it.
func (l VLLMHybridLayout) Tokens(blocks int64) int64 {
	if l.tokensConcurrency {
		return int64(l.MaxConcurrency(blocks) * float64(l.maxModelLen))
	}
	smallest := int64(l.BlockTokens)
	if l.StateBlocksPerRequest == 1 {
		// Without prefix caching a state group's block is the whole
		// --max-model-len (MambaModelConfig sets mamba_block_size to it).
		smallest = min(smallest, int64(l.maxModelLen))
	}
	return blocks / int64(l.AttentionGroups+l.StateGroups) * smallest
}
