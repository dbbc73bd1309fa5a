package model

import (
	"fmt"
	"math"
	"slices"

	"github.com/ai-hwaccel/ai-hwaccel/internal/calibration"
	"github.com/ai-hwaccel/ai-hwaccel/internal/errs"
)

// ShapeParams computes the total and active parameter counts of a decoder-only
// transformer from its shape. The formula (documented in docs/accuracy.md,
// "Weights") counts every weight matrix and norm vector, no biases:
//
//	embeddings   V·h, output head V·h unless tied
//	attention    h·(H·d) + 2·h·(K·d) + (H·d)·h            (q, k, v, o; GQA aware)
//	  MLA        [h·q + q + q·H·(dn+dr)] or h·H·(dn+dr)      (q path, q = q_lora_rank)
//	             + h·(r+dr) + r + r·H·(dn+dv) + H·dv·h       (kv latent r = kv_lora_rank)
//	  indexer    q·Hi·di + h·di + 2·di + h·Hi                 (DSA: Hi = index_n_heads, di = index_head_dim)
//	  grouped o  h·q + q + q·H·d + h·K·d + K·d + H·d·r + g·r·h (DeepSeek-V4: g = o_groups, r = o_lora_rank)
//	FFN          3·h·I (gated SwiGLU/GeGLU; 2·h·I for falcon/gpt2)
//	  MoE layer  E·3·h·Ie + S·3·h·Ie + h·E                   (experts, shared, router)
//	  LatentMoE  experts E·3·l·Ie in the latent l, + 2·h·l   (projections to l and back)
//	norms        2·h per layer + h final
//
// per layer by its kind (Layer): a Recurrent layer has its mixer's weights
// (Layer.MixerParams) in place of attention's, a parallel hybrid layer both,
// a FeedForward block no mixer; the FFN is the layer's (Layer.FFN).
//
// Active parameters (MoE) replace the E routed experts by the k chosen per
// token and leave out an untied input embedding table.
func ShapeParams(m *Model) (total, active int64, err error) {
	if m.Layers <= 0 || m.Hidden <= 0 {
		return 0, 0, errs.New(errs.InvalidArgument, "model: config needs num_hidden_layers and hidden_size to compute the parameter count")
	}
	h := float64(m.Hidden)
	var t, a float64
	for j, n := range m.patternCounts() {
		lt, la := layerParams(m, j.layer, j.moe)
		t += float64(n) * lt
		a += float64(n) * la
	}
	embed := float64(m.Vocab) * h
	head := embed
	if m.TieEmbeddings {
		head = 0
	}
	t += h + embed + head
	// The lightning indexer runs for every token: total and active alike.
	idx := float64(m.IndexerLayers) * indexerParams(m)
	t += idx
	a += idx
	// Active (MoE): the weights a token's forward pass reads. The input
	// embedding is a row lookup, not a matrix read, so an untied table is
	// left out; this is the convention of the DeepSeek-V3 weight notes
	// ("36.6B activated, including 0.9B output head") and of the gpt-oss
	// model card (arXiv 2508.10925 Table 1), see docs/accuracy.md.
	a += h + embed // the final norm and the output matrix (the head, or the tied table)
	if !m.IsMoE() {
		a = t
	}
	if t > MaxParams || math.IsNaN(t) {
		return 0, 0, errs.New(errs.InvalidArgument, "model: config shape implies %.4g parameters, above the 1e14 limit", t)
	}
	return int64(math.Round(t)), int64(math.Round(a)), nil
}

// layerSlot is one entry of the layer pattern with whether its FFN routes
// to experts there.
type layerSlot struct {
	layer Layer
	moe   bool
}

// patternCounts yields the layer pattern's entries with how many layers
// each describes, the leading DenseLayers of a MoE model apart (their FFN
// is dense): the count in closed form, so the cost is the pattern's length
// whatever the depth.
func (m *Model) patternCounts() func(yield func(layerSlot, int) bool) {
	return func(yield func(layerSlot, int) bool) {
		p := max(len(m.LayerKinds), 1)
		d := min(max(m.DenseLayers, 0), m.Layers)
		j := 0
		for l, n := range m.LayerCounts() {
			moe := m.IsMoE() && l.FFN == FFNModel
			// Of the n layers at pattern index j, those below d are dense.
			dense := 0
			if moe {
				dense = d / p
				if j < d%p {
					dense++
				}
				dense = min(dense, n)
			}
			if dense > 0 && !yield(layerSlot{l, false}, dense) {
				return
			}
			if n-dense > 0 && !yield(layerSlot{l, moe}, n-dense) {
				return
			}
			j++
		}
	}
}

// layerParams is the total and active weights of one layer of kind l, its
// FFN routed to experts when moe.
func layerParams(m *Model, l Layer, moe bool) (total, active float64) {
	h := float64(m.Hidden)
	var mixer, norms float64
	if l.HasAttention() {
		mixer += attentionParams(m, l)
		norms += h
	}
	if l.MixerParams > 0 {
		mixer += float64(l.MixerParams)
		if !l.HasAttention() {
			norms += h
		}
	}
	if l.FFN == FFNNone {
		return mixer + norms, mixer + norms
	}
	norms += h
	proj := float64(ffnProjections(m))
	if !moe {
		ffn := proj * h * float64(m.LayerIntermediate(l))
		return mixer + norms + ffn, mixer + norms + ffn
	}
	in, latent := expertInput(m)
	expert := proj * in * float64(expertIntermediate(m))
	shared := float64(m.SharedExperts) * proj * h * float64(expertIntermediate(m))
	if m.SharedIntermediate > 0 {
		shared = proj * h * float64(m.SharedIntermediate)
	}
	common := mixer + norms + shared + h*float64(m.Experts) + latent
	return common + float64(m.Experts)*expert, common + float64(m.ExpertsPerToken)*expert
}

// expertInput is the width a routed expert reads and writes, the hidden
// size or a LatentMoE's latent (Model.MoELatent), and the weights of the
// projections to the latent and back (2 · hidden · latent; 0 without).
func expertInput(m *Model) (width, projections float64) {
	h := float64(m.Hidden)
	if m.MoELatent <= 0 {
		return h, 0
	}
	l := float64(m.MoELatent)
	return l, 2 * h * l
}

// RoutedExpertParams is the weights of one MoE layer's routed experts (the
// ffn_{gate,up,down}_exps tensors of a GGUF, which llama.cpp's
// --n-cpu-moe keeps in host memory), 0 for a dense model.
func (m *Model) RoutedExpertParams() int64 {
	if !m.IsMoE() || m.Hidden <= 0 {
		return 0
	}
	in, _ := expertInput(m)
	return int64(float64(ffnProjections(m)) * in * float64(expertIntermediate(m)) * float64(m.Experts))
}

// MoELayers is the number of layers whose FFN routes to experts (each
// holding RoutedExpertParams), 0 for a dense model.
func (m *Model) MoELayers() int {
	n := 0
	for j, c := range m.patternCounts() {
		if j.moe {
			n += c
		}
	}
	return n
}

// expertIntermediate is a routed expert's FFN width.
func expertIntermediate(m *Model) int {
	if m.MoEIntermediate > 0 {
		return m.MoEIntermediate
	}
	return intermediateOrDefault(m)
}

// mtpParams is the weights of n multi-token-prediction modules: each is one
// more decoder layer like the model's last, the projection of the
// concatenated embedding and hidden state (2h × h) and its two input norms
// and output norm, sharing the model's embeddings and head (DeepSeek-V3
// technical report, arXiv 2412.19437 §2.2; deepseek-ai/DeepSeek-V3
// README_WEIGHTS.md: 14B of MTP weights besides the 671B;
// DeepSeekMultiTokenPredictorLayer in
// vllm/model_executor/models/deepseek_mtp.py of vllm-project/vllm). An
// architecture with Arch.DenseMTPWithHead builds each as a dense layer with
// a head of its own instead (Step-3.5).
func mtpParams(m *Model, n int) int64 {
	if n <= 0 || m.Layers <= 0 || m.Hidden <= 0 {
		return 0
	}
	last := m.LayerAt(m.Layers - 1)
	if !last.HasAttention() {
		last = Layer{Kind: FullAttention, FFN: last.FFN}
	}
	h := float64(m.Hidden)
	moe, head := m.IsMoE() && m.Layers > m.DenseLayers, 0.0
	if m.Arch().DenseMTPWithHead {
		last.FFN, last.Intermediate = FFNDense, 0
		moe, head = false, float64(m.Vocab)*h
	}
	layer, _ := layerParams(m, last, moe)
	// DeepSeek-V3.2's MTP layer has its own lightning indexer: the Hub's
	// count of the checkpoint exceeds DeepSeek-V3.1's (the same shape
	// without it) by 62 of them, the 61 layers' and the MTP layer's.
	return int64(math.Round(float64(n) * (layer + indexerParams(m) + 2*h*h + 3*h + head)))
}

// indexerParams is the weights of one layer's lightning indexer
// (Model.IndexerHeads; 0 without one): wq_b from the query latent
// (q_lora_rank, the hidden size without one) to index_n_heads keys of
// index_head_dim, wk from the hidden state to the one key, its LayerNorm
// (weight and bias) and weights_proj, one weight per head (class Indexer
// in inference/model.py of https://github.com/deepseek-ai/DeepSeek-V3.2-Exp
// at 6d8cb70d; llama.cpp's blk.N.indexer.{attn_q_b,attn_k,k_norm,proj},
// src/models/deepseek32.cpp of ggml-org/llama.cpp). DeepSeek-V3.2: 1536 ×
// 8192 + 7168 × 128 + 256 + 7168 × 64 = 13,959,424 a layer.
func indexerParams(m *Model) float64 {
	if m.IndexerHeads <= 0 || m.IndexerHeadDim <= 0 {
		return 0
	}
	h := float64(m.Hidden)
	q := float64(m.QLoRARank)
	if q <= 0 {
		q = h
	}
	hi, di := float64(m.IndexerHeads), float64(m.IndexerHeadDim)
	return q*hi*di + h*di + 2*di + h*hi
}

// readVision sets VisionParams from a vision_config that gives the tower's
// shape (depth or num_hidden_layers, hidden_size, intermediate_size,
// patch_size): per layer the attention (4·hv²) and MLP (two hv × Iv
// matrices, three for a gated SiLU MLP as in Qwen2.5-VL), the patch
// embedding (channels × patch² × hv, twice for a temporal patch of 2), and a
// projector from hv × merge² features to the language model's width (one
// more per deepstack_visual_indexes entry, Qwen3-VL's deepstack mergers). An
// estimate from the shape, not a count of the tensors, noted as such. Of it
// the patch embedding, the norms and a learned position table
// (num_position_embeddings) are whole on every tensor-parallel rank
// (VisionWholeParams): vLLM builds them as nn.Conv3d, nn.LayerNorm and
// nn.Embedding, not as parallel layers (Qwen3_VisionPatchEmbed,
// Qwen3_VisionBlock and Qwen3_VisionTransformer in
// vllm/model_executor/models/qwen3_vl.py at vllm-project/vllm
// 002d7b939754b844a3832dd7fbf9e5fd0c0e9f1b), as SGLang does
// (Qwen3VLVisionPatchEmbed in python/sglang/srt/models/qwen3_vl.py at
// sgl-project/sglang 005fa8330a5843e541fe075249f1d3da3d48ae0f). The
// families whose modeling code was read (Gemma 3, Mistral 3, Llama 4,
// Kimi-K2.5: towerOf) are counted tensor by tensor instead, cfg being the
// top-level config, with the parts vLLM and SGLang hold whole there.
func readVision(cfg, v map[string]any, m *Model) {
	if v == nil {
		return
	}
	c := configReader{cfg: v}
	// vt_*: Kimi-K2.5's MoonViT keys.
	depth := c.optInt("depth", "num_hidden_layers", "n_layers", "vt_num_hidden_layers")
	hv := c.optInt("hidden_size", "embed_dim", "width", "vt_hidden_size")
	iv := c.optInt("intermediate_size", "vt_intermediate_size")
	if depth == 0 || hv == 0 {
		m.Notes = append(m.Notes, "the model has a vision tower (vision_config) whose shape the config does not give: its weights are not counted")
		return
	}
	if iv == 0 {
		iv = 4 * hv
	}
	H, I := float64(hv), float64(iv)
	mlp := 2.0
	if act, _ := v["hidden_act"].(string); act == "silu" {
		mlp = 3
	}
	patch := float64(max(c.optInt("patch_size"), 1))
	channels := float64(max(c.optInt("num_channels", "in_channels", "in_chans"), 3))
	temporal := float64(max(c.optInt("temporal_patch_size"), 1))
	merge := float64(max(c.optInt("spatial_merge_size"), 1))
	out := float64(c.optInt("out_hidden_size", "projection_dim", "vision_output_dim"))
	if out == 0 {
		out = float64(m.Hidden)
	}
	in := H * merge * merge
	// Qwen3-VL adds a merger of the main one's shape for each vision layer
	// in deepstack_visual_indexes (deepstack_merger_list in transformers'
	// Qwen3VLVisionModel).
	deepstack, _ := v["deepstack_visual_indexes"].([]any)
	mergers := float64(1 + len(deepstack))
	// Qwen3-VL's learned position table, num_position_embeddings x hv (an
	// nn.Embedding, pos_embed of Qwen3_VisionTransformer in
	// vllm/model_executor/models/qwen3_vl.py at vllm-project/vllm
	// 002d7b939754b844a3832dd7fbf9e5fd0c0e9f1b, and of Qwen3VLVisionModel in
	// src/transformers/models/qwen3_vl/modeling_qwen3_vl.py at
	// huggingface/transformers 68a7b7e272a36928120316249af3ee3cac595818):
	// 2304 x 1152 = 2,654,208 for Qwen3-VL-8B and up, whole on every rank.
	pos := float64(c.optInt("num_position_embeddings")) * H
	p := float64(depth)*(4*H*H+mlp*H*I+2*H) + channels*patch*patch*temporal*H + pos + mergers*(in*in+in*out)
	if p > MaxParams {
		m.Notes = append(m.Notes, "the vision_config's sizes imply more than 1e14 parameters: the vision tower is not counted")
		return
	}
	whole := channels*patch*patch*temporal*H + float64(depth)*2*H + pos
	how := "about %.2f B parameters estimated from vision_config"
	if t, ok := towerOf(cfg, v, float64(m.Hidden)); ok {
		p, whole = t.total, min(t.whole, t.total)
		how = "%.2f B parameters counted from vision_config tensor by tensor (" + t.family + ")"
	}
	m.VisionParams = int64(math.Round(p))
	m.VisionWholeParams = int64(math.Round(whole))
	m.VisionDeepstack = len(deepstack)
	m.VisionEncoder = fixedSizeEncoder(v, c, depth, hv, iv)
	m.VisionItem = fixedSizeItem(cfg, m.VisionEncoder, int(channels))
	if m.VisionItem == nil {
		m.VisionItem = pixtralItem(cfg, v)
	}
	if m.VisionItem == nil {
		m.VisionItem = llama4Item(v)
	}
	// SGLang builds no tower for some families unless --enable-multimodal
	// (Llama 4: engine.Memory.VisionOff, internal/engine/sglang.go), so the
	// note does not say it loads every tower; the plan's own note says so.
	m.Notes = append(m.Notes, fmt.Sprintf("vision tower and projector: "+how+", not in the language model's count: vLLM loads them beside it, and so does SGLang unless its default launch serves the model text-only without building them, as an SGLang plan then says (counted in their plans' weights, at 16 bits, its parallel linear layers split over tensor-parallel ranks, its patch embedding, norms, position table and plain-parameter projector parts whole on each), llama.cpp from a separate --mmproj file", p/1e9))
}

// fixedSizeEncoder is the shape of a SigLIP tower (vision_config
// model_type siglip_vision_model, as in Gemma 3 and MedGemma), which
// llama.cpp's mtmd runs on images resized to image_size: its warm-up, which
// reserves the compute buffer, uses that size (clip.cpp of ggml-org/llama.cpp
// sets warmup_image_size = image_size, and PROJECTOR_TYPE_GEMMA3 keeps it).
// Towers of dynamic resolution (Qwen-VL, Pixtral) get a per-projector
// warm-up size instead and return nil.
func fixedSizeEncoder(v map[string]any, c configReader, depth, hv, iv int) *VisionEncoder {
	if t, _ := v["model_type"].(string); t != "siglip_vision_model" {
		return nil
	}
	img, patch := c.optInt("image_size"), c.optInt("patch_size")
	heads := c.optInt("num_attention_heads")
	if img <= 0 || patch <= 0 || img < patch || heads <= 0 || img/patch > MaxPatchSide {
		return nil
	}
	return &VisionEncoder{ImageSize: img, PatchSize: patch, Hidden: hv, Intermediate: iv, Heads: heads, Layers: depth}
}

// attentionParams is the weights of layer l's attention block: its own
// key/value heads (Model.LayerKVHeads) and head size where it names them,
// without a value projection when its values are its keys (Layer.KEqV).
func attentionParams(m *Model, l Layer) float64 {
	h := float64(m.Hidden)
	H := float64(m.Heads)
	if m.KVLoRARank > 0 && m.Heads > 0 {
		dn, dr, dv := float64(m.QKNopeHeadDim), float64(m.QKRopeHeadDim), float64(m.VHeadDim)
		r := float64(m.KVLoRARank)
		var q float64
		if m.QLoRARank > 0 {
			ql := float64(m.QLoRARank)
			q = h*ql + ql + ql*H*(dn+dr)
		} else {
			q = h * H * (dn + dr)
		}
		return q + h*(r+dr) + r + r*H*(dn+dv) + H*dv*h
	}
	if m.Heads == 0 {
		return 4 * h * h // heads unknown: square q, k, v, o
	}
	if m.OLoRARank > 0 {
		return groupedOutputAttention(m)
	}
	d := float64(m.EffectiveHeadDim())
	if l.HeadDim > 0 {
		d = float64(l.HeadDim)
	}
	K := float64(m.LayerKVHeads(l))
	q := h * H * d
	if m.Arch().GatedAttention {
		q *= 2
	}
	kv := 2 * h * K * d
	if l.KEqV {
		kv /= 2 // keys only: the values are the keys
	}
	return q + kv + H*d*h
}

// groupedOutputAttention is one layer of DeepSeek-V4's attention (class
// Attention in the reference inference/model.py of the release, copied at
// https://github.com/tenstorrent/tt-metal/blob/53cf8635645eac8664b01588c9c30ff80c5e89ed/plans/hf_model_cards/deepseek-v4-flash/inference/model.py):
// the query through a latent of q_lora_rank (wq_a, q_norm, wq_b), the K
// key heads that are also the values (wkv h × K·d and kv_norm: one head in
// both releases) and the output in OGroups groups of OLoRARank (wo_a,
// H·d·r in all) projected to the hidden size (wo_b, g·r × h). The
// per-layer KV compressors, their indexer, the attention sinks and the
// hyper-connection mixing (compress_ratios, hc_mult) are not counted: with
// the routers' biases and hash tables, the shape falls 0.18 % short of the
// tensors of DeepSeek-V4-Flash's checkpoint, 0.08 % of DeepSeek-V4-Pro's.
func groupedOutputAttention(m *Model) float64 {
	h, H := float64(m.Hidden), float64(m.Heads)
	d, K := float64(m.EffectiveHeadDim()), float64(m.EffectiveKVHeads())
	q := h * H * d
	if m.QLoRARank > 0 {
		ql := float64(m.QLoRARank)
		q = h*ql + ql + ql*H*d
	}
	kv := h*K*d + K*d
	r, g := float64(m.OLoRARank), float64(m.OGroups)
	return q + kv + H*d*r + g*r*h
}

// ffnProjections is the number of h×I matrices per FFN: 3 for gated units
// (gate, up, down: Llama, Mistral, Qwen, Gemma, DeepSeek, Phi-3), 2 for the
// plain GELU MLP of Falcon and GPT-2 (Arch.PlainMLP).
func ffnProjections(m *Model) int {
	if m.Arch().PlainMLP {
		return 2
	}
	return 3
}

// intermediateOrDefault is the FFN width, 4·h when the config omits it (the
// GPT-2 convention, n_inner = null).
func intermediateOrDefault(m *Model) int {
	if m.Intermediate > 0 {
		return m.Intermediate
	}
	return 4 * m.Hidden
}

// shapeHeadQuantum divides the attention heads of an estimated shape: the
// largest tensor-parallel size within one 8-GPU node.
const shapeHeadQuantum = 8

// EstimateShape fills an unknown shape from the parameter count with the
// relation fitted over a frozen list of dense catalog models
// (shapeFitModels in internal/calibration/fit, so that catalog additions
// never change it; calibration.ShapeLayersLogIntercept and ShapeLayersExponent: layers =
// exp(a) · P^b; ShapeKVHeads, their most common key/value head count), with
// hidden solved from P ≈ 12·L·h² (attention 4h² + FFN ≈ 8h² per layer),
// and flags the model as estimated. It is used only when a request gives a
// bare count; the KV-cache size then carries the error of this fit (see
// docs/accuracy.md, "KV cache").
//
// The heads (of head_dim 128) are a multiple of shapeHeadQuantum, at least
// 8, and the FFN width is solved for the hidden size they give, so that the
// shape's own parameter count (ShapeParams) is the one asked
// (fittingIntermediate; the layers, which set the KV cache, stay the
// fitted ones): published models have such head counts (Llama 3.1 70B: 64
// heads, Qwen2.5-72B: 64, Llama 3.1 405B: 128), and tensor parallelism
// needs them, since vLLM splits the heads evenly over 2, 4 or 8 GPUs
// (checkBudget in internal/plan/request.go). Rounding hidden/128 to whole
// heads instead gave a 70B model 71 heads, which no TP size above 1
// divides.
func EstimateShape(m *Model) {
	if m.Params <= 0 || m.Layers > 0 {
		return
	}
	p := float64(m.Params)
	layers := math.Round(math.Exp(calibration.ShapeLayersLogIntercept) * math.Pow(p, calibration.ShapeLayersExponent))
	if layers < 1 {
		layers = 1
	}
	hidden := math.Sqrt(p / (12 * layers))
	heads := shapeHeadQuantum * math.Max(1, math.Round(hidden/(128*shapeHeadQuantum)))
	m.Hidden = int(heads * 128)
	m.HeadDim = 128
	m.Heads = int(heads)
	m.KVHeads = min(calibration.ShapeKVHeads, m.Heads)
	m.Layers = int(layers)
	m.Intermediate = fittingIntermediate(m, p)
	m.ShapeEstimated = true
	m.Notes = append(m.Notes, "shape estimated from the parameter count (layers, hidden size, heads): give model.name, model.config or model.path for an exact KV-cache size")
}

// fittingIntermediate is the FFN width (a multiple of 256, at least the
// hidden size) that makes m's shape hold p parameters (ShapeParams): the
// count is linear in it. Published dense models span 2.7 to 5.4 times the
// hidden size (Llama 2 7B 11008 of 4096, Llama 3.1 70B 28672 of 8192);
// the fit lands in that range from 1B up.
func fittingIntermediate(m *Model, p float64) int {
	h := m.Hidden
	at := func(i int) float64 {
		c := *m
		c.Intermediate = i
		t, _, err := ShapeParams(&c)
		if err != nil {
			return math.NaN()
		}
		return float64(t)
	}
	lo, hi := at(h), at(2*h)
	if !(hi > lo) || p <= lo {
		return h
	}
	i := float64(h) + (p-lo)/(hi-lo)*float64(h)
	return int(math.Max(float64(h), math.Round(i/256)*256))
}

// TPSplitWidths is the widths of the FFN matrices a tensor-parallel engine
// splits by rank, each once: a dense layer's intermediate size, a MoE
// layer's routed expert width and its shared experts' together (vLLM's
// MergedColumnParallelLinear gate_up and RowParallelLinear down, and
// FusedMoE's intermediate_size_per_partition, each width / tp per rank).
// A checkpoint stored in blocks (fp8 weight_block_size) loads only where
// each rank's share of every one is whole blocks (quant.WeightBlock, plan's costs.validTP).
func (m *Model) TPSplitWidths() []int {
	var out []int
	add := func(w int) {
		if w > 0 && !slices.Contains(out, w) {
			out = append(out, w)
		}
	}
	for s := range m.patternCounts() {
		switch {
		case s.layer.FFN == FFNNone:
		case !s.moe:
			add(m.LayerIntermediate(s.layer))
		default:
			add(expertIntermediate(m))
			if m.SharedIntermediate > 0 {
				add(m.SharedIntermediate)
			} else {
				add(m.SharedExperts * expertIntermediate(m))
			}
		}
	}
	return out
}
