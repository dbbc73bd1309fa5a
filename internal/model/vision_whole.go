package model

import "math"

// readVisionWhole sets VisionWholeParams, the part of a tower that vLLM and
// SGLang hold whole on every tensor-parallel rank, for the families whose
// whole part is not readVision's patch embedding, norms and position table
// (cfg is the top-level config, v its vision_config). Each count is of the
// family's real tensors, whatever readVision's estimate of the rest, and is
// capped at VisionParams; other families keep readVision's.
//
//   - Gemma 3 (a SigLIP tower under model_type gemma3): the projector is a
//     plain nn.Parameter, mm_input_projection_weight (hv × the language
//     model's width), beside an RMSNorm over hv (Gemma3MultiModalProjector
//     in vllm/model_executor/models/gemma3_mm.py at vllm-project/vllm
//     0004c540861d3e59a7c1b3860f594aa8b24293db). SigLIP's position table is
//     a VocabParallelEmbedding, split (SiglipVisionEmbeddings in siglip.py
//     at 0531c2226a6a25cd96ccc856f3bda3f0bb4efb5f).
//   - Mistral 3 / Pixtral: the projector's patch_merger is an nn.Linear
//     from hv × spatial_merge_size² to hv beside an RMSNorm over hv; its
//     linear_1 and linear_2 are Column/RowParallelLinear
//     (Mistral3PatchMerger and Mistral3MultiModalProjector in
//     vllm/model_executor/models/mistral3.py at
//     02677fd9d49b6b4b3082967642a0d1ff45c36c0a). The tower's MLP and
//     attention are parallel layers in vLLM and SGLang alike (PixtralHFMLP
//     in python/sglang/srt/models/pixtral.py).
//   - Llama 4: the patch embedding is a ColumnParallelLinear
//     (Llama4UnfoldConvolution), split, while class_embedding and
//     positional_embedding_vlm, ((image_size / patch_size)² + 1) × hv, are
//     nn.Parameters (Llama4VisionModel in
//     vllm/model_executor/models/mllama4.py at
//     00dd54939bec83c9db7221c28d22060999edff4f); the adapter MLP and the
//     projector are parallel layers.
//   - Kimi-K2.5's MoonViT: the position table init_pos_emb_height ×
//     init_pos_emb_width × hv is an nn.Parameter, and the projector, a
//     LayerNorm and two ReplicatedLinear layers (hv·k² → hv·k² → the
//     language model's width, k² = merge_kernel_size's product), is whole
//     (Learnable2DInterpPosEmbDivided_fixed and KimiK25MultiModalProjector
//     in vllm/model_executor/models/kimi_k25_vit.py at
//     055e47c28003156421365af985d676fc921cb075).
func readVisionWhole(cfg, v map[string]any, m *Model) {
	if v == nil || m.VisionParams <= 0 {
		return
	}
	c := configReader{cfg: v}
	top := configReader{cfg: cfg}
	depth := float64(c.optInt("depth", "num_hidden_layers", "n_layers", "vt_num_hidden_layers"))
	H := float64(c.optInt("hidden_size", "embed_dim", "width", "vt_hidden_size"))
	channels := float64(max(c.optInt("num_channels", "in_channels", "in_chans"), 3))
	patch := float64(max(c.optInt("patch_size"), 1))
	conv := channels * patch * patch * H
	norms := depth * 2 * H
	text := float64(m.Hidden)
	vt, _ := v["model_type"].(string)
	family, _ := cfg["model_type"].(string)
	var whole float64
	switch {
	case family == "gemma3" && vt == "siglip_vision_model":
		whole = conv + norms + H*text + H
	case vt == "pixtral":
		merge := float64(top.optInt("spatial_merge_size"))
		if merge == 0 {
			merge = 2 // transformers' Mistral3Config default
		}
		whole = conv + norms + merge*merge*H*H + H
	case vt == "llama4_vision_model":
		side := float64(c.optInt("image_size")) / patch
		whole = norms + (math.Floor(side)*math.Floor(side)+1)*H + H
	case c.optInt("vt_hidden_size") > 0:
		k := kimiMergeArea(v)
		posH, posW := float64(c.optInt("init_pos_emb_height")), float64(c.optInt("init_pos_emb_width"))
		if t := float64(top.optInt("text_hidden_size")); t > 0 {
			text = t
		} else if t := float64(c.optInt("text_hidden_size")); t > 0 {
			text = t
		}
		in := k * H
		whole = conv + norms + posH*posW*H + 2*H + in*in + in + in*text + text
	default:
		return
	}
	m.VisionWholeParams = int64(math.Round(min(whole, float64(m.VisionParams))))
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
