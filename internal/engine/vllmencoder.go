package engine

import "github.com/ai-hwaccel/ai-hwaccel/internal/model"

// VLLMEncoderPass is the profile run's pass through a multimodal model's
// vision tower, which vLLM's V1 GPU runner makes before the language
// model's dummy batch (GPUModelRunner.profile_run in
// vllm/v1/worker/gpu_model_runner.py): it encodes Items dummy images of
// the largest size the processor allows, as many as the encoder cache
// budget holds ("Encoder cache will be initialized with a budget of
// BudgetTokens tokens, and profiled with Items image items of the maximum
// feature size"), keeps their embeddings in the encoder cache
// (encoder_cache["tmp"]) through the language model's pass and the
// sampler warm-up, and clears them after. torch's peak over the profile
// run is what vLLM charges (VLLMStartup.ActivationBytes), so the pass
// adds max(ActivationBytes, the language model's peak + CacheBytes).
type VLLMEncoderPass struct {
	BudgetTokens, Items int
	// ActivationBytes is the tower's live memory encoding the items;
	// CacheBytes the embeddings the encoder cache holds.
	ActivationBytes, CacheBytes int64
}

// VLLMEncoderPassOf is the encoder pass of model m on one rank of a
// tensor-parallel group of tp under a --max-num-batched-tokens of
// batchedTokens, the model's values valueBytes wide (2 for bf16); the
// zero pass for a model without a tower
// or without a known largest item (model.Model.VisionItem).
//
// The budget is the larger of the batched tokens and one item's tokens
// (compute_encoder_budget in vllm/v1/core/encoder_cache_manager.py: the
// cache must hold the largest item), the items the budget over one item's
// tokens, at least one: Gemma 3's 8192 over 256 tokens is 32 items,
// Qwen2.5-VL's one item of 16,384 tokens (rows llmd-google-gemma-3-*-it
// and qwen3vl-1057 of internal/calibration/data/vllm_startup.json).
//
// The cache holds budget tokens of the language model's width
// (Model.Hidden) in the model's dtype. The tower's activation is the
// items' patches times what one encoder block keeps live at its largest
// point (vllmEncoderLiveWidth), in the model's dtype, plus the pixel
// values the processor hands over in float32. Its attention runs in
// FlashAttention's kernel (the v0.19.0 logs print "Using backend
// AttentionBackendEnum.FLASH_ATTN for vit attention"), which keeps no
// patches × patches score matrix; an eager backend would, and is not
// modelled.
func VLLMEncoderPassOf(m *model.Model, batchedTokens, valueBytes, tp int) VLLMEncoderPass {
	if m == nil || m.VisionParams <= 0 || m.VisionItem == nil || m.VisionItem.Tokens <= 0 {
		return VLLMEncoderPass{}
	}
	it := m.VisionItem
	budget := max(batchedTokens, it.Tokens)
	items := max(budget/it.Tokens, 1)
	patches := int64(items) * int64(it.Patches)
	return VLLMEncoderPass{
		BudgetTokens:    budget,
		Items:           items,
		ActivationBytes: patches * (vllmEncoderLiveWidth(it, max(tp, 1))*int64(valueBytes) + int64(it.PatchValues)*4),
		CacheBytes:      int64(budget) * int64(m.Hidden) * int64(valueBytes),
	}
}

// vllmEncoderLiveWidth is the values per patch an encoder block keeps
// live at its largest point: in the MLP the residual stream, the normed
// input, the projection's output and the block's output (4 × hidden)
// beside the MLP's own tensors, gate and up with their activated product
// (3 × intermediate) for a gated SiLU MLP, the first projection and its
// activation (2 × intermediate) for a plain one; in the attention the
// residual, the normed input, the fused q/k/v, their contiguous copies
// and the output (9 × hidden). The larger of the two. On one of tp ranks
// the MLP's tensors and the q/k/v heads are the rank's share (vLLM splits
// the tower's linear layers over the ranks: model.Model.VisionWholeParams).
func vllmEncoderLiveWidth(it *model.VisionItem, tp int) int64 {
	mlp := int64(2 * it.Intermediate)
	if it.GatedMLP {
		mlp = int64(3 * it.Intermediate)
	}
	h, n := int64(it.Hidden), int64(tp)
	return max(4*h+mlp/n, 3*h+6*h/n)
}
