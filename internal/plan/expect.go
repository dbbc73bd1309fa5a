package plan

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/ai-hwaccel/ai-hwaccel/internal/engine"
	"github.com/ai-hwaccel/ai-hwaccel/internal/quant"
	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// EngineExpect is what an engine that sizes its own paged KV pool at
// start-up (budget.Paged: vLLM, SGLang) will report for a plan, per device of the
// plan's first pipeline stage: vLLM logs "Model loading took X GiB",
// "Available KV cache memory: X GiB", "GPU KV cache size: N tokens" and
// "Maximum concurrency for L tokens per request: Cx"
// (determine_available_memory in vllm/v1/worker/gpu_worker.py,
// _report_kv_cache_config in vllm/v1/core/kv_cache_utils.py). On host
// memory alone vLLM's pool is the VLLM_CPU_KVCACHE_SPACE the command names
// (engineExpectCPU).
type EngineExpect struct {
	// ModelLoadingGiB is the weights one device holds.
	ModelLoadingGiB float64 `json:"model_loading_gib"`
	// KVCacheGiB is the memory left on one device for the KV cache: the
	// budget (total x --gpu-memory-utilization, or less where less is
	// free) less the weights, the activation peak and the memory outside
	// torch the plan charges (the answer's budget.engine_reserved_bytes);
	// for an engine whose fraction holds the weights and the KV pool only
	// (SGLang), that fraction of the memory free before the weights less
	// the weights (staticPool).
	KVCacheGiB float64 `json:"kv_cache_gib"`
	// KVCacheTokens is the tokens that memory holds, in whole blocks of
	// vllmCharge.blockTokens for vLLM (16, 128 on Gaudi; SGLang's page is one token), the fewest over the plan's stages (each stage's
	// workers hold their own layers' cache).
	KVCacheTokens int64 `json:"kv_cache_tokens"`
	// MaxConcurrency is KVCacheTokens over the context (--max-model-len):
	// how many full-length sequences fit at once. For a model with
	// recurrent layers beside attention it is vLLM's: the pool's blocks
	// over the blocks one full-length request holds, its state blocks
	// included (engine.VLLMHybridLayout), and KVCacheTokens is what the
	// release prints for that pool. Where the engine runs fewer requests at
	// once than its pool holds (engine.RequestCapper: SGLang's mamba state
	// pool) it is that cap.
	MaxConcurrency float64 `json:"max_concurrency"`
	// MaxTotalNumTokens is KVCacheTokens as SGLang logs it
	// (max_total_num_tokens), for an engine whose fraction holds the
	// weights and the KV pool only; absent for vLLM.
	MaxTotalNumTokens int64 `json:"max_total_num_tokens,omitempty"`
	// Source says how the figures were made and what they leave out.
	Source string `json:"source"`
	// EngineVersion is the vLLM release the figures are for: the request's
	// engine_version, else engine.VLLMDefaultVersion. vLLM only, as the
	// fields below.
	EngineVersion string `json:"engine_version,omitempty"`
	// MaxNumBatchedTokens and MaxNumSeqs are the batch limits vLLM runs
	// (its defaults for the GPU and version, or the plan's --max-num-seqs):
	// its profile run takes MaxNumBatchedTokens tokens and warms the
	// sampler up on MaxNumSeqs requests.
	MaxNumBatchedTokens int `json:"max_num_batched_tokens,omitempty"`
	MaxNumSeqs          int `json:"max_num_seqs,omitempty"`
	// PeakActivationGiB, NonTorchGiB and CUDAGraphGiB are what vLLM's
	// start-up profile charges each device beside the weights, as it logs
	// them ("Free memory on device ... Actual usage is ... for peak
	// activation, ... non-torch memory, and ... CUDAGraph memory");
	// CUDAGraphGiB is charged inside --gpu-memory-utilization from 0.21.0
	// only (engine.VLLMStartup), and 0 before.
	PeakActivationGiB float64 `json:"peak_activation_gib,omitempty"`
	NonTorchGiB       float64 `json:"non_torch_gib,omitempty"`
	CUDAGraphGiB      float64 `json:"cuda_graph_gib,omitempty"`
	// Warning says, for SGLang, when the fraction asked is above SGLang's
	// own default for the GPU and layout (staticReserveWarning); for vLLM,
	// when by this accounting vLLM will refuse to start the
	// plan: one sequence of --max-model-len tokens does not fit the KV
	// cache it leaves (_check_enough_kv_cache_memory in
	// vllm/v1/core/kv_cache_utils.py). The fit is this accounting
	// (vllmcharge.go), so a fitting plan carries none. It also says when
	// engine_version is before engine.VLLMOldestVersion, the oldest release
	// the accounting covers.
	Warning string `json:"warning,omitempty"`
	// warnings are the caveats Warning joins, each of which the answer's
	// warnings carry too (addExpectWarnings).
	warnings []string
}

// warn adds caveat w ("" adds none) to x's warnings and to Warning, which
// joins them with "; ".
func (x *EngineExpect) warn(w string) {
	if w == "" {
		return
	}
	x.warnings = append(x.warnings, w)
	x.Warning = strings.Join(x.warnings, "; ")
}

// addExpectWarnings adds to warnings each caveat of the engines' expected
// start-up figures (EngineExpect.warn) it lacks, in engine-name order: a
// caveat of the plan is one of its warnings, which the CLI's text plan
// prints (engine_expect it does not), whatever the engine. vLLM's release
// warning is among them already (engineVersionWarnings) and is not
// repeated.
func addExpectWarnings(warnings []string, expect map[string]EngineExpect) []string {
	names := make([]string, 0, len(expect))
	for n := range expect {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		for _, w := range expect[n].warnings {
			if !slices.Contains(warnings, w) {
				warnings = append(warnings, w)
			}
		}
	}
	return warnings
}

// vllmBlockTokens is vLLM's default --block-size on CUDA: the KV cache is
// allocated in blocks of 16 tokens (CacheConfig.block_size, vllm/config/cache.py).
const vllmBlockTokens = 16

// vllmGaudiBlockTokens is vllm-gaudi's --block-size where the user gives
// none: HpuPlatform.check_and_update_config sets 128 ("default block size
// for Gaudi should be 128", vllm_gaudi/platform.py, vllm-project/vllm-gaudi
// at 00db483642505ddfde2d446bef6b3eaf94b1f16d).
const vllmGaudiBlockTokens = 128

// engineExpectOf is what the engine of a fitting plan on a paged pool will
// report at start-up, keyed by the engine's name; nil for other plans
// (offloaded ones included: the host stage holds no KV pool the engine
// reports).
func engineExpectOf(pl *planned, req *planning) map[string]EngineExpect {
	if !pl.Fits || pl.Pool == nil || !pl.Pool.Budget.Paged || pl.Offloaded || req.ContextLength <= 0 {
		return nil
	}
	b := pl.Pool.Budget
	if pl.Pool.Kind == registry.KindCPU {
		// vLLM's CPU backend takes VLLM_CPU_KVCACHE_SPACE, which the
		// command names (vllm/v1/worker/cpu_worker.py).
		return engineExpectCPU(pl, req)
	}
	if !b.WorkspaceOutside && (pl.Costs.VLLM == nil || len(pl.Costs.VLLM.GPUs) == 0) {
		// vLLM's start-up profile sizes the cache on accelerators only (the
		// plan was fitted with it: vllmcharge.go).
		return nil
	}
	fraction := planFraction(pl)
	x := expectSum{tokens: -1, hybridConcurrency: -1, windowConcurrency: -1}
	for _, r := range pl.replicas() {
		for i, s := range r {
			if len(s.Devices) == 0 || s.Part.KV <= 0 {
				return nil
			}
			x.addStage(pl, req, i, s, fraction)
		}
	}
	return map[string]EngineExpect{b.Engine.Name(): x.expect(pl, req)}
}

// expectSum is engineExpectOf's running figures over the stages of every
// replica.
type expectSum struct {
	out               EngineExpect // the first stage's start-up figures
	tokens            int64        // the fewest KV tokens of a stage's pool; < 0: none yet
	hybridConcurrency float64      // the fewest over the stages; < 0: not a hybrid layout
	windowConcurrency float64      // the same for a sliding-window layout (vllmWindowLayout)
	short             bool         // one sequence does not fit a device's pool as vLLM checks it
}

// stageKVPool is what one device of a stage gives its engine's paged KV
// pool: vLLM's, its budget less the weights and vLLM's start-up charge
// (chargeWith, with the start-up it profiles and its CUDA graphs' memory),
// in vLLM's blocks; an engine whose fraction holds the weights and the
// pool only (SGLang), the static pool of its fraction, in pages of one
// token.
type stageKVPool struct {
	Bytes   int64
	Block   int64 // tokens a block (page) holds
	Startup engine.VLLMStartup
	Graphs  int64
}

func kvPoolOf(pl *planned, s stage, fraction float64) stageKVPool {
	b := pl.Pool.Budget
	p := stageKVPool{Bytes: s.budget() - s.Part.Weights, Block: 1} // SGLang's default --page-size
	if !b.WorkspaceOutside {
		var charge int64
		p.Startup, charge, p.Graphs = pl.Costs.VLLM.chargeWith(max(pl.TP, 1), s.Part.Weights)
		p.Bytes -= charge
		p.Block = int64(pl.Costs.VLLM.blockTokens())
	} else {
		p.Bytes = staticPool(s, fraction, b.LinkedGroup)
	}
	return p
}

// addStage adds stage s (the i-th of its replica): the tokens its pool
// holds, whether one sequence fits it, and the first stage's start-up
// figures.
func (x *expectSum) addStage(pl *planned, req *planning, i int, s stage, fraction float64) {
	b := pl.Pool.Budget
	p := kvPoolOf(pl, s, fraction)
	// Part.KV is one full-context sequence (fitBatch) on one device,
	// for vLLM as its start-up check counts it (vllmCharge.KVScale).
	if !b.WorkspaceOutside && p.Bytes < s.Part.KV {
		x.short = true
	}
	if n := x.poolTokens(pl, req, s, p); x.tokens < 0 || n < x.tokens {
		x.tokens = n
	}
	if i == 0 && x.out.ModelLoadingGiB == 0 {
		x.setStartup(pl, s, p)
	}
}

// poolTokens is the KV tokens pool p of stage s holds: whole blocks of
// its bytes over a token's, or as vLLM's hybrid or sliding-window layout
// lays them out (whose fewest concurrency over the stages it keeps).
func (x *expectSum) poolTokens(pl *planned, req *planning, s stage, p stageKVPool) int64 {
	b := pl.Pool.Budget
	perToken := float64(s.Part.KV) / pl.Costs.VLLM.kvScale() / float64(req.ContextLength*fitBatch(pl.Pool, pl.batchOf(req)))
	if !b.WorkspaceOutside {
		perToken *= vllmTokenScale(pl, req)
	}
	n := int64(float64(p.Bytes)/perToken) / p.Block * p.Block
	if l, ok := vllmHybridLayout(pl, req, &s, p.Startup.Version); ok && !b.WorkspaceOutside {
		blocks := l.Blocks(p.Bytes)
		n = l.Tokens(blocks)
		if c := l.MaxConcurrency(blocks); x.hybridConcurrency < 0 || c < x.hybridConcurrency {
			x.hybridConcurrency = c
		}
	} else if l, ok := vllmWindowLayout(pl, req, &s, p.Startup); ok {
		blocks := l.Blocks(p.Bytes)
		n = l.Tokens(blocks)
		if c := l.MaxConcurrency(blocks); x.windowConcurrency < 0 || c < x.windowConcurrency {
			x.windowConcurrency = c
		}
	}
	return n
}

// setStartup sets the start-up figures the engine reports of its first
// stage: the weights it loads and its KV pool, and vLLM's version,
// scheduler limits, profiled activations, non-torch memory and CUDA
// graphs.
func (x *expectSum) setStartup(pl *planned, s stage, p stageKVPool) {
	x.out.ModelLoadingGiB = gibFloat(s.Part.Weights)
	x.out.KVCacheGiB = gibFloat(p.Bytes)
	if !pl.Pool.Budget.WorkspaceOutside {
		st := p.Startup
		x.out.EngineVersion = st.Version.String()
		x.out.MaxNumBatchedTokens, x.out.MaxNumSeqs = st.MaxNumBatchedTokens, st.MaxNumSeqs
		x.out.PeakActivationGiB, x.out.NonTorchGiB = gibFloat(st.ActivationBytes), gibFloat(st.NonTorchBytes)
		x.out.CUDAGraphGiB = gibFloat(p.Graphs)
	}
}

// expect is the report of the stages summed: the pool's tokens and
// concurrency (by the layout vLLM reports them in), its warnings and the
// source of the report's words.
func (x *expectSum) expect(pl *planned, req *planning) EngineExpect {
	b := pl.Pool.Budget
	out := x.out
	out.KVCacheTokens = max(x.tokens, 0)
	out.MaxConcurrency = roundHundredth(float64(out.KVCacheTokens) / float64(req.ContextLength))
	layout, backend := x.layout(&out), engine.VLLMBackendGPU
	if c, _, ok := requestCap(pl, req); ok && float64(c) < out.MaxConcurrency {
		// The engine runs no more at once, whatever its pool holds
		// (SGLang's mamba state pool: engine.RequestCapper).
		out.MaxConcurrency = float64(c)
	}
	if !b.WorkspaceOutside {
		backend = pl.Costs.VLLM.rule()
	}
	if !b.WorkspaceOutside && x.short {
		out.warn(shortPoolWarning(b.Engine, out.EngineVersion, req.ContextLength, out.KVCacheTokens))
	}
	if !b.WorkspaceOutside {
		out.warn(releaseWarning(b.Engine, vllmStartupOf(pl).Version))
	}
	if b.WorkspaceOutside {
		out.MaxTotalNumTokens = out.KVCacheTokens
		layout = engine.ReportStatic
		out.warn(staticReserveWarning(pl))
	}
	out.Source = reportSource(b.Engine, layout, backend)
	return out
}

// layout is the layout the engine reports its pool in, with the
// concurrency of a sliding-window or hybrid layout set in out (where one
// sequence's blocks do not fit, the pool is short).
func (x *expectSum) layout(out *EngineExpect) engine.ReportLayout {
	layout := engine.ReportPaged
	if x.windowConcurrency >= 0 {
		// A window layer holds its window, not the whole length, in each
		// request's blocks (engine.VLLMWindowLayout).
		out.MaxConcurrency = roundHundredth(x.windowConcurrency)
		layout = engine.ReportWindow
		x.short = x.short || x.windowConcurrency < 1
	}
	if x.hybridConcurrency >= 0 {
		// A hybrid's tokens are not its concurrency: each request also
		// holds state blocks (engine.VLLMHybridLayout).
		out.MaxConcurrency = roundHundredth(max(x.hybridConcurrency, 0))
		layout = engine.ReportHybrid
		x.short = x.short || x.hybridConcurrency < 1
	}
	return layout
}

// staticReserveWarning says, for a plan of an engine whose fraction holds
// the weights and the KV pool only (SGLang) started with a fraction asked
// above the engine's own default for the plan's GPU and layout
// (engine.Memory.FractionAt), that the rest is then smaller than the
// reserve that default keeps for prefill activations, CUDA graphs and
// metadata (reserve_for_graph_mb in ServerArgs._handle_gpu_memory_settings,
// python/sglang/srt/server_args.py at sgl-project/sglang 001067ff): the
// plan checks its activations there (restHolds) but does not estimate
// SGLang's CUDA graphs. "" at or below the default, or without one.
func staticReserveWarning(pl *planned) string {
	b := pl.Pool.Budget
	own := b.Engine.Memory(0).FractionAt
	if b.FractionAt != nil || own == nil {
		return "" // the engine's own default, or no default rule
	}
	l, ok := planLayout(pl)
	if !ok {
		return ""
	}
	asked, def := planFraction(pl), own(l)
	if asked <= def {
		return ""
	}
	if w, ok := b.Engine.(engine.ReserveWarner); ok {
		return w.ReserveWarning(asked, def, l.TotalBytes)
	}
	total := float64(l.TotalBytes)
	return fmt.Sprintf("%s is above %s's own default for this GPU and layout (%s), which keeps %s of each GPU outside its pool; %s keeps %s, and the plan estimates only its activations there",
		engine.BudgetSetting(b.Engine, engine.Memory{Fraction: asked}), b.Engine.Title(), fmtFraction(def), gib(int64((1-def)*total)),
		fmtFraction(asked), gib(int64((1-asked)*total)))
}

// staticPool is the KV pool an engine whose fraction holds the weights and
// the pool only (budget.WorkspaceOutside: SGLang) sizes on each device of
// stage s: the fraction of the memory free before the weights load, less
// the weights, on the device with the least (profile_max_num_token in
// python/sglang/srt/model_executor/model_runner_kv_cache_mixin.py,
// sgl-project/sglang at commit 001ccef0072a4537d4ec6bdd50a73e6feb2c907d:
// rest = available after loading - total x (1 - mem_fraction_static), total
// being what ModelRunner measured free after creating its CUDA context and
// process groups, the minimum over the ranks: staticFree). It is both
// engine_expect's figure and the room a plan's KV cache is fitted in
// (staticHolds), so a plan's context and batch are SGLang's own.
func staticPool(s stage, fraction float64, linkedGroup int64) int64 {
	return staticShare(s, fraction, linkedGroup) - s.Part.Weights
}

// staticShare is what --mem-fraction-static gives the weights and the KV
// pool on each device of stage s: fraction of the memory free before the
// weights load (staticFree), as SGLang rounds it to bytes.
func staticShare(s stage, fraction float64, linkedGroup int64) int64 {
	return int64(fraction * float64(staticFree(s, linkedGroup)))
}

// staticFree is the memory SGLang measures free on each device of stage s
// before it loads the weights (total_gpu_memory in ModelRunner): the
// device's usable memory (free, else total) less the plan's per-device
// runtime overhead (its CUDA context) and, on a tensor-parallel stage
// inside one high-bandwidth domain, linkedGroup for the engine's process
// groups, on the device with the least.
func staticFree(s stage, linkedGroup int64) int64 {
	before := int64(math.MaxInt64)
	for _, d := range s.Devices {
		before = min(before, d.Dev.UsableMemory()-s.Part.Overhead)
	}
	if len(s.Devices) > 1 && oneDomain(s.Devices) {
		before -= linkedGroup
	}
	return before
}

// oneDomain reports whether the devices share one high-bandwidth domain.
func oneDomain(ds []*device) bool {
	for _, d := range ds {
		if d.Domain < 0 || d.Domain != ds[0].Domain {
			return false
		}
	}
	return true
}

// releaseWarning is engine e's warning that release v is older than the
// rules the planner follows (engine.ReleaseWarner), "" for none.
func releaseWarning(e engine.Engine, v engine.Version) string {
	if w, ok := e.(engine.ReleaseWarner); ok {
		return w.ReleaseWarning(v)
	}
	return ""
}

// reportSource says what engine e's engine_expect figures rest on for a
// pool of layout l on backend b, in its words (engine.StartupReportNamer),
// else the planner's.
func reportSource(e engine.Engine, l engine.ReportLayout, b engine.VLLMBackend) string {
	if n, ok := e.(engine.StartupReportNamer); ok {
		return n.ReportSource(l, b)
	}
	return fmt.Sprintf("the planner's figures for %s's KV pool, as the plan sizes it (the answer's budget); not replayed against a start-up log of %s", e.Title(), e.Title())
}

// shortPoolWarning says that one sequence of context tokens does not fit
// the tokens engine e's pool holds, by e's own accounting, release release
// (engine.StartupReportNamer), else the planner's.
func shortPoolWarning(e engine.Engine, release string, context int, tokens int64) string {
	if n, ok := e.(engine.StartupReportNamer); ok {
		return n.ShortPoolWarning(release, context, tokens)
	}
	return fmt.Sprintf("by the plan's accounting one sequence of %d tokens does not fit the KV cache %s is left (%d tokens); ask context_length %d or less, a larger memory_fraction or more devices",
		context, e.Title(), tokens, tokens)
}

// engineVersionWarnings is the answer's warning for a request whose
// engine_version is a release older than the rules the planner follows
// for the engine it is read for (engine.ReleaseWarner): the engine named,
// else each engine that reads engine_version (checkEngineVersion); none
// otherwise.
func engineVersionWarnings(req *planning) []string {
	if req.EngineVersion == "" {
		return nil
	}
	engines := engine.All()
	if e := req.requestEngine(); e != nil {
		engines = []engine.Engine{e}
	}
	var out []string
	for _, e := range engines {
		if !isVersioned(e) {
			continue
		}
		if w := releaseWarning(e, vllmVersion(req)); w != "" {
			out = append(out, w)
		}
	}
	return out
}

// vllmStartupOf is vLLM's start-up charge on each device of plan pl: the
// charge the plan was fitted with (costs.VLLM, vllmcharge.go: the
// request's vLLM version, the pool's GPUs, the plan's tensor-parallel
// size, context and --max-num-seqs), which engineExpectOf requires.
func vllmStartupOf(pl *planned) engine.VLLMStartup {
	return pl.Costs.VLLM.at(max(pl.TP, 1))
}

// vllmHybridLayout is vLLM's cache layout on a device of stage s when the
// model keeps recurrent state beside attention (engine.VLLMHybridLayoutOf):
// the stage's layers, the plan's tensor-parallel size and context, the KV
// cache type (the model's dtype for auto: 4 bytes for fp32 weights).
// vLLM groups the whole model's layers and projects the groups on each
// pipeline stage; grouping the stage's own layers is the same when the
// stage holds the model's mix of kinds.
func vllmHybridLayout(pl *planned, req *planning, s *stage, v engine.Version) (engine.VLLMHybridLayout, bool) {
	m := req.Model
	if m.RecurrentStateElements() == 0 {
		return engine.VLLMHybridLayout{}, false
	}
	o := vllmCacheOptions(pl, req)
	modelBytes := 2.0
	if pl.Level == quant.FP32 {
		modelBytes = 4
	}
	return engine.VLLMHybridLayoutOf(m, engine.VLLMCacheSetup{Version: v, TP: max(pl.TP, 1), MaxModelLen: req.ContextLength,
		KVBytes: o.Bytes, ModelBytes: modelBytes, Start: s.Start, End: s.End})
}

// vllmWindowLayout is vLLM's cache layout on a device of stage s when the
// model has sliding-window layers (engine.VLLMWindowLayoutOf), for vLLM
// (not SGLang, whose pool is its own) on GPUs only: vLLM's TPU backend puts every layer in one group (its "Hybrid KV
// cache layout: num_kv_cache_groups=1" line in the keras-io Gemma 3 row of
// vllm_startup.json) and Gaudi's gives every attention layer a
// FullAttentionSpec (vllmCharge.layoutKVScale). The
// stage's layers, the plan's tensor-parallel size and context, the KV
// cache type as vllmHybridLayout, and the start-up's
// --max-num-batched-tokens.
func vllmWindowLayout(pl *planned, req *planning, s *stage, st engine.VLLMStartup) (engine.VLLMWindowLayout, bool) {
	if pl.Pool.Budget.WorkspaceOutside || pl.Costs.VLLM == nil || pl.Costs.VLLM.rule() != engine.VLLMBackendGPU {
		return engine.VLLMWindowLayout{}, false
	}
	o := vllmCacheOptions(pl, req)
	return engine.VLLMWindowLayoutOf(req.Model, engine.VLLMWindowSetup{Version: st.Version, TP: max(pl.TP, 1),
		MaxModelLen: req.ContextLength, MaxNumBatchedTokens: st.MaxNumBatchedTokens, KVBytes: o.Bytes, Start: s.Start, End: s.End})
}

// vllmTokenScale is the ratio of the KV bytes per token vLLM counts in
// its "GPU KV cache size" to the plan's: vLLM counts every attention layer
// at the whole context, sliding-window ones included (the Gemma-2 and
// gpt-oss rows of vllm_startup.json print the pool over all layers' full
// cost: 33 % and 97 % fewer tokens than window-sized layers give), and
// caches in the model's dtype when --kv-cache-dtype is auto, 4 bytes for
// fp32 weights (the fp32 row prints half the tokens of the bf16 one),
// a 16-bit type asked included (engine.VLLMAutoCache).
func vllmTokenScale(pl *planned, req *planning) float64 {
	m, ctx := req.Model, req.ContextLength
	plan := quant.KVCacheBytes(m, ctx, 1, req.kvOptionsFor(pl.Pool.Budget.Engine))
	if plan <= 0 {
		return 1
	}
	o := vllmCacheOptions(pl, req)
	return fullLengthScale(m, ctx, o) * float64(quant.KVCacheBytes(m, ctx, 1, o)) / float64(plan)
}

// vllmCacheOptions is the KV cache vLLM allocates for the plan: the
// plan's options, but 4 bytes a value beside fp32 weights where
// --kv-cache-dtype is auto (engine.VLLMAutoCache: vLLM caches in the
// model's dtype). The plan's memory counts that cache through vLLM's
// charge (vllmCharge's fp32Cache), not in its KV options, so
// vllmHybridLayout, vllmWindowLayout and vllmTokenScale ask here rather
// than through engine.KVRulesAt.
func vllmCacheOptions(pl *planned, req *planning) quant.KVOptions {
	o := req.kvOptionsFor(pl.Pool.Budget.Engine)
	if pl.Level == quant.FP32 && engine.VLLMAutoCache(req.KVCacheDType) {
		o.Bytes = 4
	}
	return o
}

// gibFloat is b in GiB to two decimals, as vLLM logs it.
func gibFloat(b int64) float64 { return roundHundredth(float64(b) / (1 << 30)) }

func roundHundredth(x float64) float64 { return math.Round(x*100) / 100 }
