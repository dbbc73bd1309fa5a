package model

import "math"

// VisionItem is the largest image a multimodal model's processor gives its
// vision tower, which vLLM's profile run encodes before it sizes the KV
// cache ("profiled with N image items of the maximum feature size":
// engine.VLLMEncoderPassOf), with the tower widths that pass keeps live.
type VisionItem struct {
	// Patches is the tower's sequence for one item; Tokens the embeddings
	// the item gives the language model (after the projector's merge or
	// pooling).
	Patches int `json:"patches"`
	Tokens  int `json:"tokens"`
	// PatchValues is the pixel values of one patch (channels × patch² ×
	// temporal patch), which the processor hands over in float32.
	PatchValues int `json:"patch_values"`
	// Hidden and Intermediate are the tower's widths; GatedMLP a SiLU
	// MLP of gate, up and down projections (Qwen2.5-VL) rather than two
	// matrices (SigLIP).
	Hidden       int  `json:"hidden_size"`
	Intermediate int  `json:"intermediate_size"`
	GatedMLP     bool `json:"gated_mlp,omitempty"`
}

// fixedSizeItem is the one image a SigLIP tower of fixed size encodes
// (fixedSizeEncoder): (image_size / patch_size)² patches, pooled to the
// config's mm_tokens_per_image (Gemma 3: 4,096 patches of its 896-pixel
// image to 256 tokens; Gemma3MultiModalProjector's avg pool in vLLM's
// gemma3_mm.py); nil without a fixed-size tower.
func fixedSizeItem(cfg map[string]any, e *VisionEncoder, channels int) *VisionItem {
	if e == nil {
		return nil
	}
	top := configReader{cfg: cfg}
	tokens := top.optInt("mm_tokens_per_image")
	if family, _ := cfg["model_type"].(string); tokens <= 0 && family == "gemma3" {
		// transformers' Gemma3Config defaults mm_tokens_per_image to 256
		// (src/transformers/models/gemma3/configuration_gemma3.py), the
		// figure vLLM's budget of 8192 tokens over the 32 items it
		// profiles gives (row llmd-google-gemma-3-4b-it of
		// internal/calibration/data/vllm_startup.json).
		tokens = 256
	}
	if tokens <= 0 || tokens > e.Patches() {
		tokens = e.Patches()
	}
	return &VisionItem{Patches: e.Patches(), Tokens: tokens, PatchValues: channels * e.PatchSize * e.PatchSize,
		Hidden: e.Hidden, Intermediate: e.Intermediate}
}

// applyPreprocessor sets m.VisionItem for a tower of dynamic resolution
// from the processor's limits (a CatalogEntry's Preprocessor): the
// Qwen2-VL image processor resizes an image to at most max_pixels, in
// whole units of (patch_size × merge_size)² pixels (smart_resize in
// transformers' image_processing_qwen2_vl.py), so its largest image is
// max_pixels / (patch_size × merge_size)² tokens of merge_size² patches
// each: Qwen2.5-VL's 12,845,056 pixels are 16,384 tokens of 65,536
// patches, the "budget of 16384 tokens" vLLM prints for it (QwenLM/Qwen3-VL
// issue 1057). A fixed-size tower keeps its own item; a config without a
// vision_config, or limits missing, leave m unchanged.
func applyPreprocessor(m *Model, cfg, pre map[string]any) {
	v, _ := cfg["vision_config"].(map[string]any)
	if v == nil || pre == nil || m.VisionParams == 0 || m.VisionItem != nil {
		return
	}
	p := configReader{cfg: pre}
	c := configReader{cfg: v}
	patch := p.optInt("patch_size")
	merge := p.optInt("merge_size")
	maxPixels, _ := number(pre["max_pixels"])
	hv := c.optInt("hidden_size", "embed_dim")
	iv := c.optInt("intermediate_size")
	if patch <= 0 || merge <= 0 || maxPixels <= 0 || hv <= 0 || iv <= 0 {
		return
	}
	unit := float64(patch * merge)
	tokens := int(math.Floor(maxPixels / (unit * unit)))
	if tokens <= 0 || tokens > MaxPatchSide*MaxPatchSide {
		return
	}
	temporal := max(p.optInt("temporal_patch_size"), 1)
	channels := max(c.optInt("in_channels", "in_chans", "num_channels"), 3)
	act, _ := v["hidden_act"].(string)
	m.VisionItem = &VisionItem{Patches: tokens * merge * merge, Tokens: tokens,
		PatchValues: channels * patch * patch * temporal, Hidden: hv, Intermediate: iv, GatedMLP: act == "silu"}
}

// pixtralItem is the largest image of a Pixtral tower (vision_config
// model_type pixtral: Mistral Small 3.1 and 3.2), which its processor
// resizes to fit image_size (1540 pixels a side): (1540 / 14)² = 12,100
// patches through the tower, merged spatial_merge_size² at a time (the
// top-level config's, 2 by default: 55 × 55) with an [IMG_BREAK] or
// [IMG_END] token after each row, (55 + 1) × 55 = 3,080 tokens
// (PixtralProcessingInfo.get_num_image_tokens in vLLM's
// vllm/model_executor/models/pixtral.py counts (ncols + 1) × nrows); vLLM
// 0.19.0's budget of 8192 tokens holds 2 of them ("profiled with 2 image
// items", row llmd-w8a8-mistral-small-24b of
// internal/calibration/data/vllm_startup.json). nil for other towers.
func pixtralItem(cfg, v map[string]any) *VisionItem {
	if t, _ := v["model_type"].(string); t != "pixtral" {
		return nil
	}
	c, top := configReader{cfg: v}, configReader{cfg: cfg}
	img, patch := c.optInt("image_size"), c.optInt("patch_size")
	hv, iv := c.optInt("hidden_size"), c.optInt("intermediate_size")
	merge := top.optInt("spatial_merge_size")
	if merge <= 0 {
		merge = 2 // transformers' Mistral3Config default
	}
	if img <= 0 || patch <= 0 || img < patch*merge || img/patch > MaxPatchSide || hv <= 0 || iv <= 0 {
		return nil
	}
	side := (img + patch - 1) / patch
	rows := (side + merge - 1) / merge
	channels := max(c.optInt("num_channels"), 3)
	act, _ := v["hidden_act"].(string)
	return &VisionItem{Patches: side * side, Tokens: (rows + 1) * rows, PatchValues: channels * patch * patch,
		Hidden: hv, Intermediate: iv, GatedMLP: act == "silu"}
}

// llama4MaxTiles is the tiles Llama 4's image processor cuts an image into
// at most, beside the global one it adds (max_patches, 16 by default:
// Llama4ImageProcessorFast in
// src/transformers/models/llama4/image_processing_llama4_fast.py at
// huggingface/transformers 0331fb368bad57dab00bf78d52d077ef6115ed27).
const llama4MaxTiles = 16

// llama4Item is the largest image of a Llama 4 tower (vision_config
// model_type llama4_vision_model: Scout and Maverick), which vLLM's profile
// run encodes: its dummy image is llama4MaxTiles tiles tall and one wide
// (Mllama4ProcessingInfo.get_image_size_with_most_features in
// vllm/model_executor/models/mllama4.py at vllm-project/vllm
// 00dd54939bec83c9db7221c28d22060999edff4f), which the processor cuts into
// that many tiles and a global one. Each tile is (image_size /
// patch_size)² patches and a class token through the tower, and
// pixel_shuffle_ratio² of the patches as tokens after the pixel shuffle
// (get_patch_per_chunk there): 17 tiles of 577 patches and 144 tokens,
// 2,448 tokens, of which vLLM 0.19.0's budget of 8192 holds 3 ("profiled
// with 3 image items", row llmd-meta-llama-llama-4-scout of
// internal/calibration/data/vllm_startup.json). The processor hands the
// pixels over in bfloat16, not float32 as VLLMEncoderPassOf counts them
// (35 MB more on that row). nil for other towers.
func llama4Item(v map[string]any) *VisionItem {
	if t, _ := v["model_type"].(string); t != "llama4_vision_model" {
		return nil
	}
	c := configReader{cfg: v}
	img, patch := c.optInt("image_size"), c.optInt("patch_size")
	hv, iv := c.optInt("hidden_size"), c.optInt("intermediate_size")
	ratio, ok := number(v["pixel_shuffle_ratio"])
	if img <= 0 || patch <= 0 || img%patch != 0 || img/patch > MaxPatchSide || hv <= 0 || iv <= 0 || !ok || ratio <= 0 || ratio > 1 {
		return nil
	}
	side := img / patch
	tokens := int(math.Round(float64(side*side) * ratio * ratio))
	tiles := llama4MaxTiles + 1
	channels := max(c.optInt("num_channels"), 3)
	return &VisionItem{Patches: tiles * (side*side + 1), Tokens: tiles * tokens, PatchValues: channels * patch * patch,
		Hidden: hv, Intermediate: iv}
}
