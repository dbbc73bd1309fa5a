package engine

import (
	"fmt"
	"math"
	"sort"
	"strconv"

	"github.com/ai-hwaccel/ai-hwaccel/internal/calibration"
	"github.com/ai-hwaccel/ai-hwaccel/internal/model"
	"github.com/ai-hwaccel/ai-hwaccel/internal/quant"
	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// sglang is SGLang (https://docs.sglang.ai/): a server for CUDA and ROCm
// GPUs that loads Hugging Face checkpoints, tensor, pipeline and data
// parallel, with one paged token pool (RadixAttention). It is planned for
// only when a request names it.
type sglang struct{ Base }

// NameSGLang is SGLang's name in requests and answers.
const NameSGLang = "sglang"

// Name implements Engine.
func (sglang) Name() string { return NameSGLang }

// Title implements Engine.
func (sglang) Title() string { return "SGLang" }

// KVRules: SGLang's pool is the planner's cache, except for a model with
// DeepSeek Sparse Attention, which SGLang keeps in its NSATokenToKVPool:
// the indexer keys in their own layout (dsaIndexerKeyBytes) and, with
// --kv-cache-dtype fp8_e4m3, the latent as FlashMLA's 656-byte sparse
// layout (override_kv_cache_dim; python/sglang/srt/mem_cache/memory_pool.py).
// Measured: PR 11309's start-up of DeepSeek-V3.2-Exp on B200s prints 788
// bytes per token per layer, 656 + 132 (row sglang-pr11309-b200-deepseek-v3.2-exp
// of internal/calibration/data/sglang_startup.json). SGLang defaults the
// cache of such a model to fp8_e4m3 on compute capability 10 and above and
// to bfloat16 below (_set_default_nsa_kv_cache_dtype in
// python/sglang/srt/server_args.py); a plan without kv_cache_dtype is one
// of 16-bit values on every GPU, its command pinning that cache where auto
// would be fp8_e4m3 (sglangDSACacheArgs).
//
// Its window layers it keeps by its own rule (SGLangWindowTokensRatio).
func (sglang) KVRules(o quant.KVOptions, m *model.Model) quant.KVOptions {
	if m != nil && m.IndexerLayers > 0 {
		o.IndexerKeyBytes = dsaIndexerKeyBytes(m)
		o.ScaledFP8Latent = true
	}
	o.WindowTokensRatio = SGLangWindowTokensRatio(m)
	if m != nil && m.RecurrentStateElements() > 0 {
		o.StatePoolRatio = SGLangMambaFullMemoryRatio
	}
	return o
}

// SGLangAutoCache reports whether SGLang runs a plan's KV cache type kv as
// --kv-cache-dtype auto: no type asked, or fp16, for which SGLang has no
// value (bf16 is its --kv-cache-dtype bf16). auto is the model's dtype:
// ModelRunner.configure_kv_cache_dtype sets kv_cache_dtype to self.dtype
// (model_config.dtype) unless the checkpoint's quantization config asks
// an FP8 cache (python/sglang/srt/model_executor/model_runner.py at
// sgl-project/sglang 0005834cdb2a5b7472789ccbf0d3361b5cf853b8), and a
// token's cell is torch's element size of that dtype
// (get_cell_size_per_token in model_runner_kv_cache_mixin.py at
// 001ccef0072a4537d4ec6bdd50a73e6feb2c907d): 4 bytes a value beside fp32
// weights, which the planner counts.
func SGLangAutoCache(kv string) bool { return kv == "" || kv == "fp16" }

// KVRulesAt implements LevelCacheRules: auto beside fp32 weights is a
// cache of 4-byte values (SGLangAutoCache).
func (sglang) KVRulesAt(o quant.KVOptions, kv string, l quant.Level) quant.KVOptions {
	if l == quant.FP32 && SGLangAutoCache(kv) {
		o.Bytes = 4
	}
	return o
}

// SGLangMambaFullMemoryRatio is SGLang's default --mamba-full-memory-ratio
// (python/sglang/srt/server_args.py: 0.9 in the versions read). For a
// model with recurrent layers beside attention (its mambaish_config:
// Mamba2, gated DeltaNet, Kimi linear and lightning attention hybrids),
// profile_max_num_token counts only the full-attention layers in a token's
// cell and handle_max_mamba_cache gives the mamba state pool ratio / (1 +
// ratio) of the rest, in whole states of mamba_cache_per_req, before the
// KV pool takes what is left
// (python/sglang/srt/model_executor/model_runner_kv_cache_mixin.py at
// sgl-project/sglang 001ccef0072a4537d4ec6bdd50a73e6feb2c907d): a KV
// token costs (1 + ratio) times its bytes of the rest
// (quant.KVOptions.StatePoolRatio). init_memory then caps the requests
// run at once at a third of the states (MaxRequests).
const SGLangMambaFullMemoryRatio = 0.9

// sglangMambaRequestRatio is how many mamba states SGLang keeps per running
// request: init_memory caps max_num_reqs (--max-running-requests, or its
// own default) at max_mamba_cache_size // calculate_mamba_ratio(), which is
// MAMBA_CACHE_SIZE_MAX_RUNNING_REQUESTS_RATIO, 3, with the radix cache on
// and no extra buffer (python/sglang/srt/model_executor/model_runner_kv_cache_mixin.py
// at sgl-project/sglang 001ccef0072a4537d4ec6bdd50a73e6feb2c907d; the
// default --mamba-scheduler-strategy auto resolves to no_buffer in
// python/sglang/srt/server_args.py). extra_buffer, asked, adds 1 or 2.
const sglangMambaRequestRatio = 3

// SGLang's mamba state dtypes: the conv state in bfloat16 (CONV_DTYPE of
// python/sglang/srt/configs/mamba_utils.py; hybrid_gdn_params'
// conv_dtype) and the SSM state in --mamba-ssm-dtype, float32 by default
// (ServerArgs.mamba_ssm_dtype in python/sglang/srt/server_args.py).
const (
	sglangConvStateBytes = 2
	sglangSSMStateBytes  = 4
)

// sglangMambaish reports whether SGLang runs m with a mamba state pool
// beside its KV pool (its mambaish_config): recurrent layers beside layers
// that cache per token, as quant.KVOptions.StatePoolRatio charges them.
func sglangMambaish(m *model.Model) bool {
	if m == nil || m.RecurrentStateElements() <= 0 {
		return false
	}
	for l := range m.CachedLayerCounts() {
		if l.CachesPerToken() {
			return true
		}
	}
	return false
}

// sglangMambaStateBytes is SGLang's mamba_cache_per_req for m on one of tp
// ranks: each recurrent layer's conv and SSM states, split over the ranks
// (conv_dim and the heads divided by the attention TP size), at
// sglangConvStateBytes and sglangSSMStateBytes. Mamba2's group padding
// where n_groups does not divide by tp is not counted.
func sglangMambaStateBytes(m *model.Model, tp int) float64 {
	var b float64
	for l, n := range m.LayerCounts() {
		b += float64(n) * (float64(l.ConvState)*sglangConvStateBytes + float64(l.SSMState)*sglangSSMStateBytes)
	}
	return b / float64(max(tp, 1))
}

// MaxRequests implements RequestCapper: for a model with a mamba state
// pool, handle_max_mamba_cache gives the pool SGLangMambaFullMemoryRatio /
// (1 + ratio) of the rest, in whole states of mamba_cache_per_req
// (sglangMambaStateBytes), and init_memory runs a third of them at once
// (sglangMambaRequestRatio).
func (sglang) MaxRequests(m *model.Model, poolBytes int64, tp int) (int, string, bool) {
	per := 0.0
	if sglangMambaish(m) {
		per = sglangMambaStateBytes(m, tp)
	}
	if per <= 0 || poolBytes <= 0 {
		return 0, "", false
	}
	states := int(float64(poolBytes) * SGLangMambaFullMemoryRatio / (1 + SGLangMambaFullMemoryRatio) / per)
	n := states / sglangMambaRequestRatio
	return n, fmt.Sprintf("SGLang runs at most %d requests at once: its mamba state pool holds %d states of %.1f MiB (%s / (1 + %s) of the %s its fraction leaves past the weights, --mamba-full-memory-ratio) and init_memory caps --max-running-requests at max_mamba_cache_size // %d (python/sglang/srt/model_executor/model_runner_kv_cache_mixin.py)",
		n, states, per/(1<<20), fmtFraction(SGLangMambaFullMemoryRatio), fmtFraction(SGLangMambaFullMemoryRatio), gib(poolBytes), sglangMambaRequestRatio), true
}

// SGLangSWAFullTokensRatio is SGLang's default --swa-full-tokens-ratio,
// "the ratio of SWA layer KV tokens / full layer KV tokens, regardless of
// the number of swa:full layers" (python/sglang/srt/server_args.py at
// sgl-project/sglang 001067ff).
const SGLangSWAFullTokensRatio = 0.8

// sglangHybridSWATypes are the Hugging Face model_types of the
// architectures SGLang keeps in its hybrid SWA pool: is_hybrid_swa_model
// in python/sglang/srt/configs/model_config.py at sgl-project/sglang
// 001adf564fd332c285397a46a034ee2f93ba7515 lists GptOssForCausalLM,
// Llama4ForConditionalGeneration, MiMoV2ForCausalLM and
// MiMoV2FlashForCausalLM, Step3p5ForCausalLM,
// Step3p7ForConditionalGeneration, Gemma4ForCausalLM and
// Gemma4ForConditionalGeneration and LagunaForCausalLM (and
// DeepseekV4ForCausalLM, whose compressed pool is its own: deepseek_v4 is
// left to the planner's window). The catalog's Llama 4 entries carry the
// text_config of their Llama4ForConditionalGeneration release
// (llama4_text).
var sglangHybridSWATypes = map[string]bool{
	"gpt_oss": true, "llama4": true, "llama4_text": true, "mimo_v2": true, "mimo_v2_flash": true,
	"step3p5": true, "step3p7": true, "gemma4": true, "gemma4_text": true, "laguna": true,
}

// sglangHybridSWAMultimodalOnly are the model types of
// sglangHybridSWATypes whose text-only class is not in the list: Llama 4's
// Llama4ForCausalLM (python/sglang/srt/models/llama4.py at sgl-project/sglang
// 003cb210149dabe1daf32be9c38ed7fe56093190), which reads a llama4_text
// config without vision_config, is outside is_hybrid_swa_model, so SGLang
// caches its chunked layers at the whole context. A model of these types
// is the listed Llama4ForConditionalGeneration only with a vision tower
// (model.Model.VisionParams, read from its vision_config).
var sglangHybridSWAMultimodalOnly = map[string]bool{"llama4": true, "llama4_text": true}

// SGLangHybridSWA reports whether SGLang keeps model m's window layers in
// its hybrid SWA pool (sglangHybridSWATypes, sglangHybridSWAMultimodalOnly),
// m having some.
func SGLangHybridSWA(m *model.Model) bool {
	if m == nil || !sglangHybridSWATypes[m.Architecture] {
		return false
	}
	if sglangHybridSWAMultimodalOnly[m.Architecture] && m.VisionParams <= 0 {
		return false
	}
	_, swa := m.SlidingLayers()
	return swa+m.CountLayers(model.ChunkedAttention) > 0
}

// SGLangWindowTokensRatio is what SGLang's pool keeps of a window layer
// (sliding or chunked) per token of the full layers' pool
// (quant.KVOptions.WindowTokensRatio), from
// python/sglang/srt/model_executor/model_runner_kv_cache_mixin.py at
// sgl-project/sglang 001ccef0072a4537d4ec6bdd50a73e6feb2c907d:
//   - a hybrid-SWA model (SGLangHybridSWA): set_num_tokens_hybrid_swa
//     gives the full layers full_tokens = rest / (F x n_full + r x S x
//     n_swa) and the window layers r x full_tokens, r being
//     --swa-full-tokens-ratio (SGLangSWAFullTokensRatio), whatever the
//     window; max_total_num_tokens is full_tokens;
//   - any other model: get_cell_size_per_token counts every layer at the
//     whole context (KV heads x (head_dim + v_head_dim) x num_layers),
//     whatever its sliding_window (Mistral, Gemma 2 and 3, whose
//     model_overrides/gemma2_gemma3.py also sets disable_hybrid_swa_memory);
//   - DeepSeek-V4, in the hybrid list but sized by its own compressed pool,
//     and a model without window layers: 0 (the planner's cells).
func SGLangWindowTokensRatio(m *model.Model) float64 {
	if m == nil || m.Architecture == "deepseek_v4" {
		return 0
	}
	if SGLangHybridSWA(m) {
		return SGLangSWAFullTokensRatio
	}
	if _, swa := m.SlidingLayers(); swa+m.CountLayers(model.ChunkedAttention) > 0 {
		return 1
	}
	return 0
}

// RunsOn implements Engine: NVIDIA and AMD GPUs.
func (sglang) RunsOn(k registry.Kind) bool { return k == registry.KindCUDA || k == registry.KindROCm }

// SGLang's default --mem-fraction-static, by ServerArgs._handle_gpu_memory_settings,
// reserve_for_graph_mb and _generate_prefill_cuda_graph_batch_sizes in
// python/sglang/srt/server_args.py (sgl-project/sglang at commit
// 001067fffe33427bee0ed2f007fb7551a1d76b44,
// https://github.com/sgl-project/sglang/blob/001067fffe33427bee0ed2f007fb7551a1d76b44/python/sglang/srt/server_args.py):
// the share of each GPU for the weights and the KV pool is (total -
// reserved) / total rounded to 3 decimals, total being the GPU's memory in
// MiB (the smallest of the plan's GPUs), and reserved (MiB) the sum of
//   - 512 of constant metadata,
//   - 1.5 per token of the prefill chunk (at least 2048 tokens),
//   - tp x pp / 8 x 1024 for the parallel ranks,
//   - 2 per decode CUDA-graph batch entry (cuda_graph_max_bs),
//   - the prefill CUDA graphs: 8 per captured token count (one per size
//     up to the chunk), or 1536 for an MLA model,
//
// at least 10240 on GPUs above 60 GiB (the floor applies before DeepEP's
// reserve, which a plan does not use). The chunk and the graph batch grow
// with the GPU's memory (sglangTiers). Earlier versions had other defaults:
// the v0.3 and v0.4 logs of internal/calibration/data/sglang_startup.json
// print 0.88 at TP 1 and 0.85 at TP 4 whatever the GPU.
const (
	sglangMetadataMiB     = 512
	sglangPrefillMiB      = 1.5 // per token of the prefill chunk
	sglangMinChunk        = 2048
	sglangDecodeGraphMiB  = 2 // per decode CUDA-graph batch entry
	sglangPrefillGraphMiB = 8 // per captured prefill token count
	sglangLatentGraphMiB  = 1536
	sglangParallelMiB     = 1024.0 / 8
	sglangLargeGPUMiB     = 60 * 1024
	sglangLargeReserve    = 10 * 1024
	sglangUnknownFraction = 0.88 // SGLang's value when the GPU's memory is unknown
)

// sglangTier is the chunked_prefill_size and decode cuda_graph_max_bs
// (below TP 4, and from TP 4) of GPUs with less than BelowMiB of memory.
type sglangTier struct {
	BelowMiB               float64
	Chunk, Graph, GraphTP4 int
}

// sglangTiers are _handle_gpu_memory_settings' tiers (T4/4080; A10/4090/5090;
// A100 40GB/L40; H100/A100 80GB; H20/H200; then B200/MI300).
var sglangTiers = []sglangTier{
	{20 * 1024, 2048, 8, 8}, {35 * 1024, 2048, 24, 80}, {60 * 1024, 4096, 32, 160},
	{90 * 1024, 8192, 256, 512}, {160 * 1024, 8192, 256, 512}, {math.Inf(1), 16384, 512, 512},
}

// sglangTierOf is the tier of a GPU of mib MiB.
func sglangTierOf(mib float64) sglangTier {
	for _, t := range sglangTiers {
		if mib < t.BelowMiB {
			return t
		}
	}
	return sglangTiers[len(sglangTiers)-1]
}

// sglangPrefillGraphs is how many token counts SGLang captures prefill CUDA
// graphs for up to maxTokens (_generate_prefill_cuda_graph_batch_sizes:
// steps of 4 to 32, 16 to 256, 32 to 512, 64 to 1024, 256 to 4096, then 512).
func sglangPrefillGraphs(maxTokens int) int {
	n := 0
	for _, r := range [][3]int{{4, 32, 4}, {48, 256, 16}, {288, 512, 32}, {576, 1024, 64}, {1280, 4096, 256}, {4608, math.MaxInt32, 512}} {
		for s := r[0]; s <= r[1] && s <= maxTokens; s += r[2] {
			n++
		}
	}
	return n
}

// sglangReserveMiB is the memory SGLang keeps outside --mem-fraction-static
// on each GPU of layout l (of mib MiB).
func sglangReserveMiB(mib float64, l Layout) float64 {
	t := sglangTierOf(mib)
	graph := t.Graph
	if l.TP >= 4 {
		graph = t.GraphTP4
	}
	r := sglangMetadataMiB + sglangPrefillMiB*float64(max(t.Chunk, sglangMinChunk)) +
		float64(l.TP*l.PP)*sglangParallelMiB + sglangDecodeGraphMiB*float64(graph)
	switch {
	case l.Kind != registry.KindCUDA:
		// Prefill graphs are captured on CUDA only: elsewhere the default
		// backend is tc_piecewise, which SGLang turns off on HIP
		// (default_prefill_backend in
		// python/sglang/srt/model_executor/cuda_graph_config.py,
		// _disable_tc_piecewise_cudagraph_if_incompatible).
	case l.Latent:
		r += sglangLatentGraphMiB
	default:
		r += sglangPrefillGraphMiB * float64(sglangPrefillGraphs(t.Chunk))
	}
	if mib > sglangLargeGPUMiB {
		r = max(r, sglangLargeReserve)
	}
	return r
}

// sglangFractionAt is SGLang's default --mem-fraction-static for layout l.
func sglangFractionAt(l Layout) float64 {
	if l.TotalBytes <= 0 {
		return sglangUnknownFraction
	}
	l.TP, l.PP = max(l.TP, 1), max(l.PP, 1)
	mib := float64(l.TotalBytes) / (1 << 20)
	return math.Round((mib-sglangReserveMiB(mib, l))/mib*1000) / 1000
}

// sglangFraction is SGLang's default fraction on one CUDA GPU of
// totalBytes for a model without MLA.
func sglangFraction(totalBytes int64) float64 {
	return sglangFractionAt(Layout{TotalBytes: totalBytes, Kind: registry.KindCUDA})
}

// sglangLinkedGroupBytes is what SGLang's process groups take on each rank
// of an NVLinked tensor-parallel group before it measures the memory free
// for its fraction: "Init torch distributed ends. mem usage=2.01 GB" (1.77
// to 2.01 over the ranks) at TP 8 on H200s in
// https://github.com/sgl-project/sglang/pull/11716 (a row of
// internal/calibration/data/sglang_startup.json); 0.13 GB over PCIe, where
// SGLang turns its custom all-reduce off for more than two GPUs, which is
// not counted.
const sglangLinkedGroupBytes = 2 << 30

// Memory: the fraction asked, else SGLang's own by the GPU's memory and
// the plan's parallelism (FractionOf, FractionAt); one paged pool shared by
// the running requests, which --max-running-requests caps. A multimodal
// model's vision tower is built in the same process (VisionInProcess):
// Qwen2_5_VLForConditionalGeneration.__init__ creates
// Qwen2_5_VisionTransformer beside Qwen2Model, its MLP and patch merger
// ColumnParallelLinear and RowParallelLinear and its attention SGLang's
// VisionAttention, split over the tensor-parallel ranks; the patch
// embedding (an nn.Conv3d) and the norms are whole on each
// (python/sglang/srt/models/qwen2_5_vl.py at sgl-project/sglang
// 013902a8a7a23879a17862507ffd79a7e4efba7e; model.Model.VisionWholeParams),
// as in Qwen3-VL (qwen3_vl.py at 005fa8330a5843e541fe075249f1d3da3d48ae0f),
// unless --mm-enable-dp-encoder (off by default, not planned) runs the
// encoder data-parallel.
// Llama 4's tower is the exception: SGLang's default launch does not build
// it (VisionOff, sglangTowerOff).
func (sglang) Memory(asked float64) Memory {
	if asked > 0 {
		return Memory{Fraction: asked, PagedKV: true, WorkspaceOutside: true, LinkedGroupBytes: sglangLinkedGroupBytes,
			VisionInProcess: true, VisionOff: sglangTowerOff()}
	}
	return Memory{Fraction: sglangUnknownFraction, PagedKV: true, FractionOf: sglangFraction, FractionAt: sglangFractionAt,
		WorkspaceOutside: true, LinkedGroupBytes: sglangLinkedGroupBytes, VisionInProcess: true, VisionOff: sglangTowerOff()}
}

// sglangTextOnly is a family SGLang serves text-only unless
// --enable-multimodal.
type sglangTextOnly struct {
	// Family is its name in prose.
	Family string
	// TowerOff: the model class then builds no vision tower nor projector.
	TowerOff bool
}

// sglangMultimodalOff are the families, by model type
// (model.Model.Architecture), whose architectures are in SGLang's
// mm_disabled_models: with --enable-multimodal unset, ModelConfig.__init__
// sets enable_multimodal False for Gemma3ForConditionalGeneration,
// Llama4ForConditionalGeneration and Step3VLForConditionalGeneration
// (unless --model-impl transformers), logging "Multimodal is disabled for
// <model_type>. To enable it, set --enable-multimodal."
// (python/sglang/srt/configs/model_config.py at sgl-project/sglang
// 001adf564fd332c285397a46a034ee2f93ba7515). What the model class then
// builds differs:
//   - Llama4ForConditionalGeneration builds vision_model and
//     multi_modal_projector only when enable_multimodal is set (and the
//     checkpoint has vision weights), and skips their weights when loading
//     (python/sglang/srt/models/mllama4.py at
//     0076e713398e6fbb7279a61940428b611b800a24): no tower in memory.
//   - Gemma3ForConditionalGeneration builds its SigLIP vision_tower and
//     multi_modal_projector whatever the flag
//     (python/sglang/srt/models/gemma3_mm.py at
//     017f5d473f3f81d668e92be0437ad8711ab4a11e): the tower is loaded, only
//     images are refused.
//
// A multimodal model's type is its text_config's ("llama4_text",
// "gemma3_text": model.FromConfig reads the language model from it), the
// top-level one for a config read flat; its vision_config
// (model.Model.VisionParams) tells the ConditionalGeneration class from
// the text-only one. Step3-VL is not in the catalog and its model class
// was not checked.
var sglangMultimodalOff = map[string]sglangTextOnly{
	"llama4":      {Family: "Llama 4", TowerOff: true},
	"llama4_text": {Family: "Llama 4", TowerOff: true},
	"gemma3":      {Family: "Gemma 3"},
	"gemma3_text": {Family: "Gemma 3"},
}

// sglangTowerOff are the model types whose tower SGLang's default launch
// does not build (Memory.VisionOff), sorted.
func sglangTowerOff() []string {
	var out []string
	for arch, f := range sglangMultimodalOff {
		if f.TowerOff {
			out = append(out, arch)
		}
	}
	sort.Strings(out)
	return out
}

// sglangTextOnlyNote says, for a multimodal model of a family SGLang serves
// text-only by default, that the plan's launch serves no images and what
// --enable-multimodal adds to each rank: the tower at p's level, its split
// part over p's tensor-parallel ranks and its whole part on each, as the
// planner charges it (quant.VisionBytes, quant.VisionWholeBytes); "" for
// other models.
func sglangTextOnlyNote(p *Placement) string {
	m := p.Model
	f, ok := sglangMultimodalOff[m.Architecture]
	if !ok || m.VisionParams <= 0 {
		return ""
	}
	if !f.TowerOff {
		return fmt.Sprintf("SGLang serves %s text-only by default (mm_disabled_models); pass --enable-multimodal to serve images (the vision tower is loaded, and counted, either way)", f.Family)
	}
	tower, whole := float64(quant.VisionBytes(m, p.Level)), float64(quant.VisionWholeBytes(m, p.Level))
	perRank := (tower-whole)/float64(max(p.TP, 1)) + whole
	return fmt.Sprintf("SGLang loads %s as text-only by default (mm_disabled_models): this plan counts no vision tower; pass --enable-multimodal to serve images (adds %.2f GiB a rank)", f.Family, perRank/(1<<30))
}

// ReserveWarning says what a --mem-fraction-static above SGLang's own
// default leaves its CUDA graphs: SGLang's default keeps reserve_for_graph_mb
// and more of each GPU outside the pool (ServerArgs._handle_gpu_memory_settings
// in python/sglang/srt/server_args.py), and the plan estimates the
// activations, not the graphs.
func (sglang) ReserveWarning(asked, def float64, totalBytes int64) string {
	total := float64(totalBytes)
	return fmt.Sprintf("%s is above SGLang's own default for this GPU and layout (%s), which keeps %s of each GPU outside its pool for prefill activations, CUDA graphs and metadata (reserve_for_graph_mb in ServerArgs._handle_gpu_memory_settings, python/sglang/srt/server_args.py); %s keeps %s: the plan's activations fit there, but SGLang's CUDA graphs, which the plan does not estimate, may not, and it can then fail at CUDA-graph capture or run out of memory on a long prompt (a lower fraction, or a smaller --cuda-graph-max-bs, leaves them room)",
		BudgetSetting(sglang{}, Memory{Fraction: asked}), fmtFraction(def), gib(int64((1-def)*total)),
		fmtFraction(asked), gib(int64((1-asked)*total)))
}

// BudgetSource explains SGLang's budget as SGLang states it.
func (sglang) BudgetSource(who string, m Memory) string {
	return fmt.Sprintf("%s starts SGLang with --mem-fraction-static %s: SGLang keeps the weights and its KV pool within that share of each GPU's memory free once its CUDA context and process groups exist, and the rest for prefill activations and CUDA graphs (ServerArgs._handle_gpu_memory_settings in python/sglang/srt/server_args.py, which picks the value itself from the GPU's memory and the tensor- and pipeline-parallel degrees when no flag is given); the plan is fitted as SGLang divides each device: its weights and one full-context sequence within that pool (its context and batch are the pool's, engine_expect.sglang.max_total_num_tokens) and its activations within the rest",
		who, fmtFraction(m.Fraction))
}

// BudgetSetting: SGLang's share of a device is --mem-fraction-static of
// its total memory.
func (sglang) BudgetSetting(m Memory) string {
	return sglangShareFlag + " " + fmtFraction(m.Fraction)
}

// sglangShareFlag sets SGLang's share of each device for the weights and
// its KV pool; sglangOffloadFlag how much of the layer weights it keeps in
// host memory, in whole GiB per GPU (sglangOffloadStep).
const (
	sglangShareFlag   = "--mem-fraction-static"
	sglangOffloadFlag = "--cpu-offload-gb"
)

// OffloadSetting implements OffloadNamer: --cpu-offload-gb.
func (sglang) OffloadSetting() string { return sglangOffloadFlag }

// PoolSetting implements OffloadNamer: --mem-fraction-static.
func (sglang) PoolSetting() string { return sglangShareFlag }

// CannotLoad: SGLang serves Hugging Face checkpoints, not GGUF files.
func (sglang) CannotLoad(l quant.Level) string {
	if l.IsGGUF() {
		return fmt.Sprintf("SGLang does not plan GGUF types (%s); plan it with engine %s, which loads GGUF files, or ask SGLang for a Hugging Face precision (int4, fp8...)", l, NameLlamaCPP)
	}
	return ""
}

// SGLang's methods whose floors were read in sgl-project/sglang (paths
// under python/sglang/srt/layers/quantization/): fp8 (FP8 checkpoints and
// --quantization fp8 on a 16-bit one) 80 (Fp8Config.get_min_capability for
// CUDA, 100 for MXFP8, fp8.py at 00563d368df9673403eacead4adf45ef77ef0ca9,
// which imports Marlin FP8 for GPUs without FP8 tensor cores), and AWQ 75
// (AWQConfig, "The AWQ kernel only supports Turing or newer GPUs", awq.py at
// 0149944fafd4ff560664ef2400e131b0e1b11643; AWQMarlinConfig, used from 8.0,
// returns 80). Other methods (GPTQ, mxfp4, compressed-tensors, modelopt)
// and the float levels are left to the device's precision list.
var (
	sglangFP8 = quantMethod{"fp8", 80, "Fp8Config.get_min_capability, python/sglang/srt/layers/quantization/fp8.py"}
	sglangAWQ = quantMethod{"AWQ", 75, "AWQConfig.get_min_capability, python/sglang/srt/layers/quantization/awq.py"}
)

// sglangCUDAFloor is the lowest compute capability SGLang runs on: below
// compute capability 8.0 ModelRunner.load_model switches the weights to
// float16 and, for a minor version below 5 (7.0, 6.x, 5.x), stops with
// "SGLang only supports sm75 and above."
// (python/sglang/srt/model_executor/model_runner.py at sgl-project/sglang
// 01cc04e2b5b01ce379698a3fee1bd17706e1d0ec, the same check in later
// releases), and sgl-kernel, whose kernels it calls, is compiled for sm_75
// and up with no PTX for older GPUs (the -gencode list in
// sgl-kernel/CMakeLists.txt at 3ec6e09487cbf7424f7875cb098860a2142666a3), so
// a Kepler 3.7, which the check lets through, has no kernels either.
var sglangCUDAFloor = cudaFloor{"SGLang", 75, "ModelRunner.load_model stops with \"SGLang only supports sm75 and above\", python/sglang/srt/model_executor/model_runner.py; sgl-kernel is built from sm_75, sgl-kernel/CMakeLists.txt"}

// CannotRunDevice implements DeviceFloor: nothing runs below
// sglangCUDAFloor.
func (sglang) CannotRunDevice(d *registry.Device) string {
	cc, ok := cudaCapability(d)
	if !ok {
		return ""
	}
	return sglangCUDAFloor.refusal(d, cc)
}

// sglangHalfBelow is the compute capability below which SGLang runs float16
// weights only: ModelRunner.load_model sets server_args.dtype to "float16"
// there, whatever --dtype asked ("Compute capability below sm80. Use
// float16 due to lack of bfloat16 support.", the check of sglangCUDAFloor,
// python/sglang/srt/model_executor/model_runner.py, read at
// 677b66af805d93f7a26e9cf96b7b243eb1beaee1), so fp32 and bf16 weights are
// never what it loads on a T4 or an RTX 20xx.
const sglangHalfBelow capability = 80

// CannotRunLevel implements LevelRule for SGLang on CUDA: below SGLang's
// floor (sglangCUDAFloor) no level runs; below 8.0 no 16- or 32-bit float
// level but fp16 (sglangHalfBelow); above it fp8 and AWQ int4
// checkpoints must meet their method's minimum compute capability; other
// levels and kinds follow the device's precision list.
func (sglang) CannotRunLevel(d *registry.Device, m *model.Model, l quant.Level) (string, bool) {
	cc, ok := cudaCapability(d)
	if !ok {
		return "", false
	}
	if why := sglangCUDAFloor.refusal(d, cc); why != "" {
		return why, true
	}
	if cc < sglangHalfBelow && (l == quant.FP32 || l == quant.BF16) {
		return fmt.Sprintf("SGLang runs float16 weights below compute capability %s (ModelRunner.load_model sets --dtype float16 there, python/sglang/srt/model_executor/model_runner.py); %s has %s: plan fp16", sglangHalfBelow, deviceName(d), cc), true
	}
	method := publishedMethod(m, l)
	switch {
	case l == quant.FP8 && (method == "" || method == "fp8"):
		return sglangFP8.refusal("SGLang", d, cc), true
	case l == quant.INT4 && method == "awq":
		return sglangAWQ.refusal("SGLang", d, cc), true
	}
	return "", false
}

// Load is the checkpoint SGLang loads at p's level: a published one, else
// the float one for float levels (--dtype converts) and fp8 (quantized on
// load).
func (sglang) Load(p *Placement) (*Load, string) {
	m, l := p.Model, p.Level
	ck := checkpointFor(m, l, false)
	if need := givenWeightsNeed(m, l, l == quant.FP8, ck); need != "" {
		ld := &Load{Quant: string(l), Needs: need}
		if ck != nil {
			ld.Repo, ld.Method, ld.Source, ld.Switch = ck.Repo, ck.Method, ck.Source, releaseSwitch(m, ck, l, false)
		}
		return ld, "SGLang: needs " + need + "; serving the given weights would run them as stored"
	}
	if (isFloat(l) || l == quant.FP8) && (ck == nil || ck.Release != m.Releases.Named) {
		ck = preferNamed(m, ck, floatCheckpoint(m))
	}
	if ck != nil {
		return &Load{Quant: string(l), Repo: ck.Repo, Method: ck.Method, Source: ck.Source, Switch: releaseSwitch(m, ck, l, false)}, ""
	}
	if len(m.Checkpoints) == 0 {
		return nil, ""
	}
	if l.IsGGUF() {
		return nil, ""
	}
	return unpublishedNeed(m, l), fmt.Sprintf("SGLang: no %s checkpoint of %s is published in the catalog; SGLang reads the quantization method from a pre-quantized checkpoint (AWQ, GPTQ, compressed-tensors)", l, m.Name)
}

// Parallelism implements Engine: tensor and pipeline parallel; weights
// offloaded with --cpu-offload-gb stay in host memory and each offloaded
// layer's are copied to the GPU in its forward pass, every layer running on
// the GPU (StreamsOffloadedWeights, OffloadCopiedPerPass): OffloaderV1 in
// python/sglang/srt/utils/offloader.py at sgl-project/sglang 046a9e40
// moves the parameters of the layers make_layers hands it, in order, to
// (pinned, where available) CPU tensors until int(cpu_offload_gb *
// 1024**3) bytes are taken, and wraps each such layer's forward to move its
// state_dict .to(device) before running it.
func (sglang) Parallelism() Parallelism {
	return Parallelism{Tensor: true, StreamsOffloadedWeights: true, OffloadStep: sglangOffloadStep, OffloadCopiedPerPass: true,
		BlockSplitRefusal: sglangBlockSplitRefusal, ExpertParallel: "--ep"}
}

// sglangBlockSplitRefusal is SGLang's refusal of a block-quantized fp8
// checkpoint split into part blocks, the same check as vLLM's
// (vllmBlockSplitRefusal): its cookbook's Qwen3-Coder page says "For
// 480B-A35B with FP8 quantization, --ep 2 is required to satisfy the
// dimension alignment requirement" (sgl-project/sgl-cookbook
// docs/autoregressive/Qwen/Qwen3-Coder.md @ 7b5bd9c0), and its
// MiniMax-M2.5 page pairs --tp 8 with --ep 8.
const sglangBlockSplitRefusal = `SGLang refuses to load it ("is not divisible by weight quantization block_n")`

// sglangOffloadStep is the step of SGLang's --cpu-offload-gb: a GiB, the
// flag being an integer ("cpu_offload_gb: A[int, \"How many GBs of RAM to
// reserve for CPU offloading.\"]" in python/sglang/srt/server_args.py at
// sgl-project/sglang 001067ff) that create_offloader turns into
// int(cpu_offload_gb * 1024**3) bytes (offloader.py at 046a9e40).
const sglangOffloadStep = float64(1 << 30)

// Args are sglang.launch_server's flags for p
// (https://docs.sglang.ai/advanced_features/server_arguments.html): --tp,
// --pp-size, --dp-size, --mem-fraction-static, --context-length,
// --max-running-requests, --swa-full-tokens-ratio, --dtype or
// --quantization fp8, --kv-cache-dtype, --cpu-offload-gb.
func (e sglang) Args(p *Placement) ([]string, []string, bool) {
	var a, notes []string
	pp := len(p.Stages)
	if p.Offloaded {
		pp--
	}
	if p.TP > 1 {
		a = append(a, "--tp", strconv.Itoa(p.TP))
	}
	if pp > 1 {
		a = append(a, "--pp-size", strconv.Itoa(pp))
	}
	if p.DP > 1 {
		a = append(a, "--dp-size", strconv.Itoa(p.DP))
	}
	a = append(a, sglangShareFlag, strconv.FormatFloat(p.Memory.Fraction, 'f', -1, 64),
		"--context-length", strconv.Itoa(p.Context))
	if p.Batch > 1 {
		a = append(a, "--max-running-requests", strconv.Itoa(p.Batch))
	}
	if SGLangHybridSWA(p.Model) {
		// The pool the plan sized (SGLangWindowTokensRatio), pinned: the
		// default is one SGLang may resolve per model.
		a = append(a, "--swa-full-tokens-ratio", strconv.FormatFloat(SGLangSWAFullTokensRatio, 'f', -1, 64))
	}
	ld, missing := e.Load(p)
	switch p.Level {
	case quant.BF16, quant.FP16, quant.FP32:
		a = append(a, "--dtype", torchDType[p.Level])
	case quant.FP8:
		if ld == nil || ld.Method == "" {
			a = append(a, "--quantization", "fp8")
		}
	}
	if missing != "" {
		notes = append(notes, missing)
	}
	cache, note := sglangCacheArgs(p)
	a = append(a, cache...)
	notes = appendNonEmpty(notes, note)
	if p.Offloaded {
		// Whole GiB, per GPU; a plan offloads on one GPU
		// (OffloadedWeightBytes, sglangOffloadStep).
		a = append(a, sglangOffloadFlag, strconv.FormatFloat(offloadSteps(p.OffloadedWeightBytes, sglangOffloadStep), 'f', 0, 64))
	}
	if n := sglangTextOnlyNote(p); n != "" {
		notes = append(notes, n)
	}
	if p.MultiNode {
		n := "SGLang: a plan over several nodes runs one launch_server per node with --nnodes, --node-rank and --dist-init-addr"
		if nodes := nodeVisibleDevices(p); nodes != "" {
			// One environment cannot name two machines' GPUs
			// (visibleDevicesEnv), so each node's command takes its own.
			n += ", each with the plan's GPUs on its node visible (" + nodes + ")"
		}
		notes = append(notes, n)
	}
	return a, notes, true
}

// sglangCacheArgs are the --kv-cache-dtype flag of p's cache type and what
// the plan says of it. SGLang's one-byte types are fp8_e5m2 and fp8_e4m3
// (e5m2 needs no scales from the checkpoint); "bf16" is one of its choices
// ("bf16" or "bfloat16" for BF16 KV cache, python/sglang/srt/server_args.py
// of sgl-project/sglang); it has no float16, so an fp16 cache is auto
// (modelCacheNote). A DeepSeek Sparse Attention model has its own rule
// (sglangDSACacheArgs).
func sglangCacheArgs(p *Placement) ([]string, string) {
	if p.Model != nil && p.Model.IndexerLayers > 0 {
		if a, note, ok := sglangDSACacheArgs(p); ok {
			return a, note
		}
	}
	switch p.KVCacheDType {
	case "fp8", "int8":
		return []string{"--kv-cache-dtype", "fp8_e5m2"}, ""
	case "bf16":
		return []string{"--kv-cache-dtype", "bf16"}, ""
	case "fp16": // SGLangAutoCache
		return nil, modelCacheNote(autoCache{title: "SGLang", why: "; SGLang has no float16 value",
			fp32: "which this plan counts (kv_cache_dtype bf16 is a 2-byte cache SGLang takes)"}, p)
	}
	return nil, ""
}

// sglangDSAFP8From is the compute capability from which SGLang's auto KV
// cache of a DeepSeek Sparse Attention model is fp8_e4m3, bfloat16 below
// it; fp8_e4m3 and bfloat16 are the only types SGLang takes for such a
// model ("DeepSeek DSA only supports bf16/bfloat16 or fp8_e4m3
// kv_cache_dtype": _set_default_nsa_kv_cache_dtype in
// python/sglang/srt/server_args.py, major >= 10; the same rule in the
// arg_groups passes of later versions). The log of sgl-project/sglang PR
// 11309 (main of 2025-10-07, B200s, no --kv-cache-dtype) allocates
// FlashMLA's 656-byte fp8 latent.
const sglangDSAFP8From capability = 100

// sglangDSACacheArgs is sglangCacheArgs for a DeepSeek Sparse Attention
// model, ok false where the usual rule holds: a one-byte cache is fp8_e4m3
// (the FlashMLA layout KVRules sizes; fp8_e5m2 stops SGLang at start-up),
// and on a GPU of sglangDSAFP8From or above a 16-bit cache, which auto
// would make fp8_e4m3, is pinned as --kv-cache-dtype bf16, the cache the
// plan sized.
func sglangDSACacheArgs(p *Placement) ([]string, string, bool) {
	switch {
	case p.KVCacheDType == "fp8" || p.KVCacheDType == "int8":
		return []string{"--kv-cache-dtype", "fp8_e4m3"}, "", true
	case SGLangAutoCache(p.KVCacheDType) && sglangHasCapability(p, sglangDSAFP8From):
		return []string{"--kv-cache-dtype", "bf16"}, fmt.Sprintf("SGLang: --kv-cache-dtype bf16 keeps the 16-bit cache this plan sized: with auto SGLang gives %s's DeepSeek Sparse Attention an fp8_e4m3 cache from compute capability %s (bfloat16 below; _set_default_nsa_kv_cache_dtype, python/sglang/srt/server_args.py); kv_cache_dtype fp8 plans that cache", p.Model.Name, sglangDSAFP8From), true
	}
	return nil, "", false
}

// sglangHasCapability reports whether a GPU of p has CUDA compute
// capability cc or above.
func sglangHasCapability(p *Placement, cc capability) bool {
	for _, unit := range p.Units() {
		for _, s := range unit {
			for _, d := range s.Devices {
				if d.Dev == nil {
					continue
				}
				if c, ok := cudaCapability(d.Dev); ok && c >= cc {
					return true
				}
			}
		}
	}
	return false
}

// Env: the plan's GPUs made visible in placement order (visibleDevicesEnv).
func (sglang) Env(p *Placement) map[string]string { return visibleDevicesEnv(p) }

// Command is `python3 -m sglang.launch_server --model-path MODEL` for the
// model servedModel names; nil when it names none (vllm.Command).
func (sglang) Command(s Served) []string {
	m, ok := servedModel(s)
	if !ok || m == "" {
		return nil
	}
	return []string{"python3", "-m", "sglang.launch_server", "--model-path", m}
}

// SGLangChunkedPrefillSize is SGLang's chunked_prefill_size when not given,
// on a GPU of mib MiB (sglangTiers, _handle_gpu_memory_settings of
// python/sglang/srt/server_args.py): the most prompt tokens one forward
// pass runs.
func SGLangChunkedPrefillSize(mib float64) int { return sglangTierOf(mib).Chunk }

// PromptChunk is SGLang's default chunked_prefill_size for the GPU's
// memory (SGLangChunkedPrefillSize).
func (sglang) PromptChunk(totalBytes int64, _ string) int {
	return SGLangChunkedPrefillSize(float64(totalBytes) / (1 << 20))
}

// PromptChunkSetting is SGLang's server argument for the chunk.
func (sglang) PromptChunkSetting() string { return "chunked_prefill_size" }

// PromptRequestSeconds is SGLang's fixed time per request,
// c.ServingPromptRequestSeconds (fitted with ServingPromptMFU on the SGLang
// cookbook's fit rows).
func (sglang) PromptRequestSeconds(c calibration.Throughput) float64 {
	return c.ServingPromptRequestSeconds
}

// SpeedModel implements SpeedModeled: SGLang's plans take the serving
// model.
func (sglang) SpeedModel() SpeedModel { return SpeedServing }

// ServingFit implements ServingFitted: SGLang's rows fit its own MoE, MLA
// and AMD constants over the serving model (calibration.Throughput.SGLang
// and SGLangROCm, HBM GPUs).
func (sglang) ServingFit() calibration.ServingFit { return calibration.ServingFitSGLang }

// expectSourceOutside says what EngineExpect's figures rest on for an
// engine that reserves its workspace outside its fraction (SGLang).
const expectSourceOutside = "SGLang's own sizing (profile_max_num_token in python/sglang/srt/model_executor/model_runner_kv_cache_mixin.py): --mem-fraction-static of the memory free once its CUDA context exists, less the weights, over one token's cache (page size 1); replayed against public SGLang start-up logs in docs/accuracy.md; the memory its process groups take at TP > 1 and the weights as SGLang loads them are the plan's estimates"

// ReportSource implements StartupReportNamer: SGLang's static pool
// (Memory.WorkspaceOutside), whatever the layout.
func (sglang) ReportSource(ReportLayout, VLLMBackend) string { return expectSourceOutside }

// ShortPoolWarning implements StartupReportNamer: the planner checks no
// start-up refusal of SGLang's.
func (sglang) ShortPoolWarning(string, int, int64) string { return "" }

// ContextSetting implements CommandContextNamer: --context-length, the
// longest one request may be (Args).
func (sglang) ContextSetting() string { return "--context-length" }

// SequencesSetting implements CommandContextNamer: the context is each
// request's own.
func (sglang) SequencesSetting() string { return "" }
