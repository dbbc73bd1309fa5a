package engine

import (
	"github.com/ai-hwaccel/ai-hwaccel/internal/model"
)

// How vLLM v1 lays out the cache of a model whose attention layers use a
// sliding window (all of them, or beside full-attention layers: gpt-oss,
// Gemma 2 and 3, Mistral 7B v0.1), read at vllm-project/vllm commit
// 001cabc1be16a59a70d720ed61a13b678c060a18 (vllm/v1/core/kv_cache_utils.py,
// vllm/v1/kv_cache_interface.py):
//
//   - Layers of one spec (full attention; a window size) form groups of
//     equal size, as for recurrent layers (VLLMHybridLayoutOf); a model of
//     one spec is one group of all its layers.
//   - All groups draw blocks of 16 tokens from one pool: blocks = memory /
//     page / layers per group (get_kv_cache_config_from_groups).
//   - A request at --max-model-len holds cdiv(len, 16) blocks in each
//     full-attention group and, in each window group, the blocks of the
//     window's last window - 1 tokens plus one chunked-prefill step
//     (--max-num-batched-tokens), at most the whole length, plus one for a
//     window that starts inside a block (SlidingWindowSpec.
//     max_memory_usage_bytes). "Maximum concurrency" is the pool's blocks
//     over their sum (get_max_concurrency_for_kv_cache_config).
//   - "GPU KV cache size" is blocks // groups x 16 (_report_kv_cache_config),
//     every layer counted at the whole length, until vLLM printed it as
//     concurrency x --max-model-len (vllmTokensAsConcurrency).
//
// The llm-d start-up logs of vLLM 0.19.0 (internal/calibration/data/
// vllm_startup.json: gpt-oss-20b at TP 2, Gemma-2-9B) print the concurrency
// this gives (316.07x and 20.60x, where the tokens over the length give
// 316.38 and 20.62); vllmWindowFrom is the oldest release such a log pins.

// vllmWindowFrom is the oldest vLLM release whose replayed start-up log
// shows sliding-window groups in its concurrency (the llm-d 0.19.0 rows);
// earlier releases are planned with every layer at the whole length.
var vllmWindowFrom = Version{0, 19, 0}

// VLLMWindowLayout is vLLM's cache layout on one GPU for a model whose
// attention layers include sliding windows.
type VLLMWindowLayout struct {
	// PageBytes is one layer's block of vllmWindowBlockTokens tokens.
	PageBytes int64
	// LayersPerGroup is the layers of each group: a block of the pool is
	// PageBytes x LayersPerGroup.
	LayersPerGroup int
	// FullGroups and WindowGroups count the groups of each kind.
	FullGroups, WindowGroups int
	// WindowBlocksPerRequest is the blocks a request of --max-model-len
	// tokens holds in each window group.
	WindowBlocksPerRequest int

	maxModelLen       int
	tokensConcurrency bool
}

// vllmWindowBlockTokens is vLLM's default --block-size on CUDA
// (CacheConfig.block_size, vllm/config/cache.py).
const vllmWindowBlockTokens = 16

// VLLMWindowSetup is what the window layout depends on besides the model.
type VLLMWindowSetup struct {
	Version Version
	// TP is the tensor-parallel size: it splits the KV heads (never below
	// one).
	TP int
	// MaxModelLen is --max-model-len; MaxNumBatchedTokens the tokens of one
	// scheduler step (--max-num-batched-tokens).
	MaxModelLen, MaxNumBatchedTokens int
	// KVBytes is one cache element (2 for auto on a bf16 model, 1 for fp8).
	KVBytes float64
	// Start and End are the layers of the pipeline stage, [Start, End);
	// End 0: all the model's layers.
	Start, End int
}

// VLLMWindowLayoutOf is vLLM's layout of model m's cache, false when m has
// no sliding-window layer, keeps recurrent state (VLLMHybridLayoutOf), has
// a layer of another kind (chunked, latent or shared attention) or layers
// whose per-token cache differs in size, several window sizes, or s is a
// release before vllmWindowFrom: cases this does not follow.
func VLLMWindowLayoutOf(m *model.Model, s VLLMWindowSetup) (VLLMWindowLayout, bool) {
	if m == nil || s.MaxModelLen <= 0 || s.MaxNumBatchedTokens <= 0 || s.KVBytes <= 0 ||
		s.Version.Before(vllmWindowFrom) || m.RecurrentStateElements() > 0 {
		return VLLMWindowLayout{}, false
	}
	tp := max(s.TP, 1)
	end := s.End
	if end <= 0 || end > m.Layers {
		end = m.Layers
	}
	var full, windowed, window int
	var token int64 // one token of one layer
	for i := max(s.Start, 0); i < end; i++ {
		l := m.LayerAt(i)
		switch {
		case (l.Kind == model.FullAttention || l.Kind == model.SlidingWindow && l.Window >= s.MaxModelLen) && !l.KEqV:
			// A window no shorter than --max-model-len never drops a token
			// (Phi-4-mini's 262144): counted as the full attention it is
			// (vLLM keeps one block more for it, which the fit leaves out).
			full++
		case l.Kind == model.SlidingWindow && !l.KEqV && l.Window > 0 && (window == 0 || l.Window == window):
			windowed++
			window = l.Window
		default:
			return VLLMWindowLayout{}, false
		}
		b, _, ok := tokenBytes(m, model.Layer{Kind: model.FullAttention, KVHeads: l.KVHeads, HeadDim: l.HeadDim}, tp, s.KVBytes)
		if !ok || (token != 0 && b != token) {
			return VLLMWindowLayout{}, false
		}
		token = b
	}
	if windowed == 0 || token == 0 {
		return VLLMWindowLayout{}, false
	}
	group := full + windowed // one spec: one group of every layer
	if full > 0 {
		group = min(full, windowed)
		if 2*max(full, windowed) < 3*group {
			group = max(full, windowed)
		}
	}
	l := VLLMWindowLayout{
		PageBytes:         vllmWindowBlockTokens * token,
		LayersPerGroup:    group,
		WindowGroups:      int(ceilDiv(int64(windowed), int64(group))),
		maxModelLen:       s.MaxModelLen,
		tokensConcurrency: !s.Version.Before(vllmTokensAsConcurrency),
	}
	if full > 0 {
		l.FullGroups = int(ceilDiv(int64(full), int64(group)))
	}
	held := min(window-1+s.MaxNumBatchedTokens, s.MaxModelLen)
	l.WindowBlocksPerRequest = int(ceilDiv(int64(held), vllmWindowBlockTokens)) + 1
	return l, true
}

// Blocks is the pool's blocks in kvBytes of KV cache memory.
func (l VLLMWindowLayout) Blocks(kvBytes int64) int64 {
	if kvBytes <= 0 {
		return 0
	}
	return kvBytes / l.PageBytes / int64(l.LayersPerGroup)
}

// BlocksPerRequest is the blocks one request of --max-model-len tokens
// holds over all groups.
func (l VLLMWindowLayout) BlocksPerRequest() int {
	return l.FullGroups*int(ceilDiv(int64(l.maxModelLen), vllmWindowBlockTokens)) + l.WindowGroups*l.WindowBlocksPerRequest
}

// MaxConcurrency is "Maximum concurrency for --max-model-len tokens per
// request" of a pool of blocks.
func (l VLLMWindowLayout) MaxConcurrency(blocks int64) float64 {
	return float64(blocks) / float64(l.BlocksPerRequest())
}

// Tokens is "GPU KV cache size: N tokens" of a pool of blocks, as the
// release prints it.
func (l VLLMWindowLayout) Tokens(blocks int64) int64 {
	if l.tokensConcurrency {
		return int64(l.MaxConcurrency(blocks) * float64(l.maxModelLen))
	}
	return blocks / int64(l.FullGroups+l.WindowGroups) * vllmWindowBlockTokens
}
