package model

import "math"

// familyTower is a vision tower and projector counted tensor by tensor from
// its family's modeling code rather than estimated from the generic shape
// (readVision): total is every weight of the tower and projector, whole the
// part vLLM and SGLang hold whole on every tensor-parallel rank.
type familyTower struct {
	total, whole float64
	// family names the code the count follows, for the model's note.
	family string
}

// towerOf counts the tower of the families whose modeling code was read
// (cfg is the top-level config, v its vision_config, text the language
// model's width); ok is false for the others, which keep readVision's
// estimate. The whole parts are the tensors vLLM and SGLang build as
// convolutions, norms, plain parameters, nn.Linear or ReplicatedLinear
// rather than as Column/RowParallel layers.
//
//   - Gemma 3 (a SigLIP tower under model_type gemma3, vision_use_head
//     false): per layer q, k, v, o and fc1/fc2 with biases and two
//     LayerNorms, the patch Conv2d with its bias, a position table of
//     (image_size / patch_size)² × hv, the post-LayerNorm
//     (SiglipVisionEmbeddings, SiglipEncoderLayer, SiglipVisionTransformer
//     in src/transformers/models/siglip/modeling_siglip.py of
//     huggingface/transformers), and the projector, a plain hv × text
//     nn.Parameter (mm_input_projection_weight) beside an RMSNorm over hv
//     (Gemma3MultiModalProjector in
//     vllm/model_executor/models/gemma3_mm.py at vllm-project/vllm
//     0004c540861d3e59a7c1b3860f594aa8b24293db). Whole: the projector and
//     its norm, the patch embedding and norms; the position table is a
//     VocabParallelEmbedding in vLLM, split (SiglipVisionEmbeddings in
//     siglip.py at 0531c2226a6a25cd96ccc856f3bda3f0bb4efb5f).
//   - Mistral 3 / Ministral 3 (a Pixtral tower): per layer q, k, v, o and
//     a gated MLP (gate, up, down), unbiased, and two RMSNorms, the patch
//     Conv2d without bias, ln_pre (PixtralVisionModel in
//     src/transformers/models/pixtral/modeling_pixtral.py at
//     huggingface/transformers 4a1e279ebe65c9e7f1b035dd5e47a5c4b48f5087),
//     and the projector: an RMSNorm over hv, patch_merger from hv ×
//     spatial_merge_size² to hv, linear_1 from hv × the feature layers to
//     the text width and linear_2 from the text width to itself, biased
//     only under multimodal_projector_bias (Mistral3PatchMerger and
//     Mistral3MultiModalProjector in
//     src/transformers/models/mistral3/modeling_mistral3.py at
//     7e7810abe920f7e2636ed5829481fe959b9c2c3b). Whole: patch_merger (an
//     nn.Linear) and the projector's norm beside the patch embedding and
//     norms; linear_1 and linear_2 are Column/RowParallelLinear
//     (Mistral3MultiModalProjector in vllm/model_executor/models/mistral3.py
//     at 02677fd9d49b6b4b3082967642a0d1ff45c36c0a).
//   - Llama 4: per layer q, k, v, o and fc1/fc2 with biases and two
//     LayerNorms, the unfold patch embedding (channels × patch² → hv, no
//     bias), class_embedding, positional_embedding_vlm ((image_size /
//     patch_size)² + 1) × hv, LayerNorms before and after, the
//     pixel-shuffle adapter (vision_adapter: intermediate_size →
//     projector_input_dim → projector_output_dim) and the projector
//     (vision_output_dim → text) (Llama4VisionModel,
//     Llama4VisionPixelShuffleMLP, Llama4VisionMLP2 and
//     Llama4MultiModalProjector in
//     src/transformers/models/llama4/modeling_llama4.py at
//     huggingface/transformers 000c33fdfde12e1ffafbfcdb3c926df5727a00b6;
//     the adapter's biases follow multi_modal_projector_bias as in vLLM's
//     Llama4VisionPixelShuffleMLP). Whole in vLLM: class_embedding and
//     positional_embedding_vlm (nn.Parameters) and the norms; the patch
//     embedding, adapter and projector are parallel layers
//     (vllm/model_executor/models/mllama4.py at
//     00dd54939bec83c9db7221c28d22060999edff4f).
//   - Kimi-K2.5's MoonViT (vt_* keys): the patch Conv2d with its bias, a
//     position table init_pos_emb_height × init_pos_emb_width × hv, per
//     layer wqkv and wo with biases, fc0/fc1 with biases and two
//     LayerNorms, the final LayerNorm, and the projector: a LayerNorm over
//     hv, then linear_1 from hv·k² to itself and linear_2 to the text
//     width, both biased (k² = merge_kernel_size's product;
//     MoonVision3dPatchEmbed, MoonViTEncoderLayer, MoonViT3dEncoder and
//     KimiK25MultiModalProjector in vllm/model_executor/models/kimi_k25_vit.py
//     at vllm-project/vllm fd849acb2cac883d1f76d7bc2ab6796e661ffda7).
//     Whole: the position table (an nn.Parameter) and the projector (two
//     ReplicatedLinear layers) beside the patch embedding and norms.
//   - MiniMax-M3 (a CLIP-style tower, vision model_type
//     clip_vision_model under minimax_m3 or minimax_m3_vl): the Conv3d
//     patch embedding (channels × temporal_patch_size × patch² → hv, no
//     bias), pre_layrnorm, per layer q, k, v, out_proj and fc1/fc2 with
//     biases and two LayerNorms, no post-LayerNorm; then
//     multi_modal_projector (linear_1 hv → projector_hidden_size, linear_2
//     to the text width, both biased) and patch_merge (linear_1 from the
//     text width × spatial_merge_size² to projector_hidden_size, linear_2
//     to the text width, both biased) (MiniMaxM3VLVisionEmbeddings,
//     MiniMaxM3VLVisionEncoderLayer, MiniMaxM3VLVisionTransformer,
//     MiniMaxM3VLPatchMerger and MiniMaxM3VLMultiModalProjector in
//     src/transformers/models/minimax_m3_vl/modeling_minimax_m3_vl.py at
//     huggingface/transformers 0291279d953ec372229a7729eb1d653863101fa6).
//     The merge and temporal sizes are img_token_compression_config's.
//     Whole: the patch embedding and norms, as readVision's default
//     (vLLM's and SGLang's layers for this tower were not read).
func towerOf(cfg, v map[string]any, text float64) (familyTower, bool) {
	c := configReader{cfg: v}
	top := configReader{cfg: cfg}
	depth := float64(c.optInt("depth", "num_hidden_layers", "n_layers", "vt_num_hidden_layers"))
	H := float64(c.optInt("hidden_size", "embed_dim", "width", "vt_hidden_size"))
	I := float64(c.optInt("intermediate_size", "vt_intermediate_size"))
	if depth == 0 || H == 0 || I == 0 {
		return familyTower{}, false
	}
	channels := float64(max(c.optInt("num_channels", "in_channels", "in_chans"), 3))
	patch := float64(max(c.optInt("patch_size"), 1))
	conv := channels * patch * patch * H
	norms := depth * 2 * H
	vt, _ := v["model_type"].(string)
	family, _ := cfg["model_type"].(string)
	switch {
	case family == "gemma3" && vt == "siglip_vision_model" && v["vision_use_head"] == false:
		side := math.Floor(float64(c.optInt("image_size")) / patch)
		total := depth*vitLayer(H, I) + conv + H + side*side*H + 2*H + H*text + H
		return familyTower{total: total, whole: conv + norms + H*text + H, family: "Gemma 3's SigLIP tower and projector"}, true
	case (family == "mistral3" || family == "ministral3") && vt == "pixtral":
		merge := float64(top.optInt("spatial_merge_size"))
		if merge == 0 {
			merge = 2 // transformers' Mistral3Config default
		}
		layers := depth * (4*H*H + 3*H*I + 2*H)
		projector := H + merge*merge*H*H + featureLayers(cfg)*H*text + text*text
		if cfg["multimodal_projector_bias"] == true {
			projector += 2 * text
		}
		return familyTower{total: layers + conv + H + projector, whole: conv + norms + merge*merge*H*H + H,
			family: "Mistral 3's Pixtral tower and projector"}, true
	case vt == "llama4_vision_model":
		side := math.Floor(float64(c.optInt("image_size")) / patch)
		in, out := float64(c.optInt("projector_input_dim")), float64(c.optInt("projector_output_dim"))
		vout := float64(c.optInt("vision_output_dim"))
		adapter := I*in + in*out
		if v["multi_modal_projector_bias"] == true {
			adapter += in + out
		}
		pos := (side*side + 1) * H
		total := depth*vitLayer(H, I) + conv + H + pos + 4*H + adapter + vout*text
		return familyTower{total: total, whole: norms + pos + H, family: "Llama 4's tower, pixel-shuffle adapter and projector"}, true
	case (family == "minimax_m3" || family == "minimax_m3_vl") && vt == "clip_vision_model":
		merge, temporal := miniMaxCompression(cfg, v)
		proj := float64(top.optInt("projector_hidden_size"))
		if proj == 0 {
			proj = text
		}
		embed := conv*temporal + 2*H // Conv3d without bias, pre_layrnorm
		projector := H*proj + proj + proj*text + text
		patchMerge := text*merge*merge*proj + proj + proj*text + text
		return familyTower{total: embed + depth*vitLayer(H, I) + projector + patchMerge, whole: embed + norms,
			family: "MiniMax-M3's CLIP-style tower, projector and patch merger"}, true
	case c.optInt("vt_hidden_size") > 0:
		k := kimiMergeArea(v)
		posH, posW := float64(c.optInt("init_pos_emb_height")), float64(c.optInt("init_pos_emb_width"))
		if t := float64(top.optInt("text_hidden_size")); t > 0 {
			text = t
		} else if t := float64(c.optInt("text_hidden_size")); t > 0 {
			text = t
		}
		in := k * H
		projector := 2*H + in*in + in + in*text + text
		total := conv + H + posH*posW*H + depth*vitLayer(H, I) + 2*H + projector
		return familyTower{total: total, whole: conv + norms + posH*posW*H + projector,
			family: "Kimi-K2.5's MoonViT tower and projector"}, true
	}
	return familyTower{}, false
}

// vitLayer is one encoder layer of hv H and MLP width I with biased q, k,
// v and output projections, a biased two-matrix MLP and two LayerNorms
// (weight and bias): SiglipEncoderLayer, Llama4VisionEncoderLayer and
// MoonViTEncoderLayer (cited at towerOf).
func vitLayer(H, I float64) float64 {
	return 4*(H*H+H) + H*I + I + I*H + H + 2*2*H
}

// featureLayers is the number of vision layers Mistral 3's projector
// concatenates (vision_feature_layer: one for an int, the list's length
// for a list), the factor of linear_1's input width.
func featureLayers(cfg map[string]any) float64 {
	if l, ok := cfg["vision_feature_layer"].([]any); ok && len(l) > 0 {
		return float64(len(l))
	}
	return 1
}

// kimiMergeArea is the number of patches MoonViT's merger folds into one
// token, the product of vision_config merge_kernel_size (2 × 2 in
// Kimi-K2.5; 4 when absent).
func kimiMergeArea(v map[string]any) float64 {
	ks, _ := v["merge_kernel_size"].([]any)
	if len(ks) == 0 {
		return 4
	}
	area := 1.0
	for _, k := range ks {
		f, ok := number(k)
		if !ok || f <= 0 {
			return 4
		}
		area *= f
	}
	return area
}

// miniMaxCompression is MiniMax-M3's spatial merge and temporal patch
// sizes, from img_token_compression_config in the vision_config or at the
// top level (both carry it in MiniMaxAI/MiniMax-M3's config.json); 1 for
// a size neither gives.
func miniMaxCompression(cfg, v map[string]any) (merge, temporal float64) {
	merge, temporal = 1, 1
	for _, src := range []map[string]any{cfg, v} {
		cc, _ := src["img_token_compression_config"].(map[string]any)
		if f, ok := number(cc["spatial_merge_size"]); ok && f > 0 {
			merge = f
		}
		if f, ok := number(cc["temporal_patch_size"]); ok && f > 0 {
			temporal = f
		}
	}
	return merge, temporal
}
