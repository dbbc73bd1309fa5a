package plan

import (
	"fmt"
	"math"

	"github.com/ai-hwaccel/ai-hwaccel/internal/engine"
)

// contextStep is the multiple a chosen context is rounded down to: the
// step llama.cpp's --fit rounds to (engine.LlamaFitContextStep), used for
// every engine so that a chosen context reads the same whatever the engine
// (vLLM's own --max-model-len auto searches to the token; 256 is a whole
// number of its 16-token blocks).
const contextStep = engine.LlamaFitContextStep

// fitContext is the context planned when the request leaves it to the
// engine, for plan ch: the model's trained context reduced to the largest
// multiple of contextStep that fits the plan's devices, with a line saying
// so. It applies with no context_length to an engine that chooses its own
// context (llama.cpp's --fit, engine.Memory.ContextFloor) or serves its
// sequences from one paged KV pool (vLLM, SGLang: budget.Paged), and to any
// engine when the request asked for "auto". ok is false when the request's
// context stands: one was given, the engine runs the one it is given (and
// the request did not ask for "auto"), the plan does not fit or already
// offloads to host memory at the floor (--fit then keeps the floor and
// moves layers instead), or the model's trained context is unknown or no
// longer than the context already planned. floor is the context the first
// pass was planned at (the request's), which the line names.
func fitContext(req *planning, ch *choice, floor int) (ctx int, line string, ok bool) {
	pl := &ch.Plan
	if req.ContextGiven || !pl.Fits || pl.Offloaded || pl.Pool == nil {
		return 0, "", false
	}
	eng, paged := pl.Pool.Budget.Engine, pl.Pool.Budget.Paged
	shared := eng.Memory(0).ContextFloor > 0
	if !shared && !paged && !req.ContextAuto {
		return 0, "", false
	}
	trained := req.Model.MaxContext
	if shared {
		// llama.cpp's context (-c, n_ctx) is the total of the parallel
		// sequences (-np): with no -c it is the trained context in all
		// (src/llama-context.cpp: n_ctx = n_ctx_train when 0), which
		// --fit reduces as a whole (common/fit.cpp: hp_nct, with no
		// factor of n_seq), and with -np given the cache is not unified,
		// so each of a replica's sequences gets its share (n_ctx_seq =
		// n_ctx / n_seq_max), at ggml-org/llama.cpp 81ff7abe50b9 and
		// 34af94cd; the emitted flags are engine.llamaCPP.Args'.
		trained /= max(pl.batchOf(req), 1)
	}
	trained -= trained % contextStep
	if trained <= req.ContextLength {
		return 0, "", false
	}
	// maxFitting holds the batch of an unpaged engine at the context; for
	// a paged pool it holds one sequence (fitBatch), the engine's own rule.
	n := maxFitting(pl, req, true)
	n = min(n-n%contextStep, trained)
	if n <= req.ContextLength {
		return 0, "", false
	}
	return n, contextLine(eng, paged, shared, n, trained, floor, req.Model.MaxContext, pl.batchOf(req)), true
}

// floorContextLine says, for a fitting plan of an engine that chooses its
// own context (engine.Memory.ContextFloor: llama.cpp) that offloads to
// host RAM with no context asked, why its context is the floor and which
// step of the engine's fit placed the rest, in the engine's words
// (engine.FitNamer; llama.cpp's order of --fit's steps is told in
// internal/engine/llamafit.go). A MoE model whose dense weights do not all
// fit keeps dense-only layers on the GPUs (AllExpertsOnHost). ok is false
// for any other plan.
func floorContextLine(req *planning, ch *choice) (string, bool) {
	pl := &ch.Plan
	if req.ContextGiven || !pl.Fits || !pl.Offloaded || pl.Pool == nil || len(pl.Stages) < 2 {
		return "", false
	}
	floor := pl.Pool.Budget.Engine.Memory(0).ContextFloor
	if floor <= 0 {
		return "", false
	}
	gpus := pl.Stages[:len(pl.Stages)-1]
	var usable int64
	gpuLayers := 0
	for _, s := range gpus {
		for _, d := range s.Devices {
			usable += d.Usable
		}
		gpuLayers += s.End - s.Start
	}
	where := "the GPU"
	if n := len(gpus); n > 1 {
		where = fmt.Sprintf("the %d GPUs", n)
	}
	trained := -1
	if req.Model.MaxContext > 0 {
		trained = req.Model.MaxContext / max(pl.batchOf(req), 1)
	}
	f := engine.FitFloor{Context: req.ContextLength, Floor: floor, Seqs: max(pl.batchOf(req), 1), Trained: trained,
		NeedBytes: wholeBytes(ch), UsableBytes: usable, GPUs: len(gpus), Where: where, GPULayers: gpuLayers, Host: hostOffloadOf(pl)}
	if n, ok := pl.Pool.Budget.Engine.(engine.FitNamer); ok {
		return n.FitFloorLine(f), true
	}
	return neutralFloorLine(pl.Pool.Budget.Engine, f), true
}

// neutralFloorLine is floorContextLine for an engine that does not tell
// its own fit (engine.FitNamer): the facts the planner found, in its own
// words.
func neutralFloorLine(e engine.Engine, f engine.FitFloor) string {
	head := fmt.Sprintf("context: %d tokens per sequence, the floor of the context %s chooses itself", f.Context, e.Title())
	if f.Trained >= 0 && f.Trained <= f.Context {
		head = fmt.Sprintf("context: %d tokens per sequence, the model's trained context, which is not above the floor of the context %s chooses itself", f.Context, e.Title())
	}
	return fmt.Sprintf("%s; at %d the model still needs %s with every tensor on %s against %s usable, so the plan keeps this context and keeps weights in host RAM instead",
		head, f.Context, gib(f.NeedBytes), f.Where, gib(f.UsableBytes))
}

// wholeBytes is what the chosen level of ch needs with the whole model on
// one device: its row of the levels table, the figure the explanation's
// "chosen with cpu_offload" line gives.
func wholeBytes(ch *choice) int64 {
	for _, r := range ch.Rows {
		if r.Quant == string(ch.Plan.Level) && r.TotalBytes > 0 {
			return r.TotalBytes
		}
	}
	return ch.Plan.oneDeviceBytes()
}

// fitChoice is how engine e chooses a context when given none, in its
// words (engine.FitNamer), else the planner's.
func fitChoice(e engine.Engine) string {
	if n, ok := e.(engine.FitNamer); ok {
		return n.FitChoice()
	}
	return e.Title() + " chooses it with none asked"
}

// trainedShare names the context llama.cpp runs with no -c: the model's
// trained context, perSeq tokens per sequence, which with seqs > 1 parallel
// sequences (-np) is the whole shared among them, so that perSeq is not
// read as the model's own context (Llama-3.1-70B at -np 4: 131072 tokens,
// 32768 per sequence).
func trainedShare(whole, seqs, perSeq int) string {
	if seqs <= 1 {
		return fmt.Sprintf("the model's trained context (%d per sequence)", perSeq)
	}
	return fmt.Sprintf("the model's trained context (%d tokens, shared by %d sequences: %d per sequence)", whole, seqs, perSeq)
}

// contextLine says how a context of n tokens per sequence was chosen from
// the trained context (per sequence) for engine e, starting from the
// planned floor; whole is the model's trained context and seqs the
// sequences a shared context (llama.cpp's -np) divides it among.
func contextLine(e engine.Engine, paged, shared bool, n, trained, floor, whole, seqs int) string {
	if shared {
		how := "reduced to fit"
		if n == trained {
			how = "it fits whole"
		}
		return fmt.Sprintf("context: %d tokens per sequence, chosen as %s: %s, %s (a multiple of %d, at least %d)",
			n, fitChoice(e), trainedShare(whole, seqs, trained), how, contextStep, floor)
	}
	// A paged engine's plan is fitted in the pool the engine itself sizes
	// at start-up: vLLM's start-up accounting (vllmcharge.go), SGLang's
	// --mem-fraction-static of the memory free less the weights
	// (staticPool), the figures engine_expect reports.
	pool := fmt.Sprintf("%s's KV pool", e.Title())
	var how string
	switch {
	case paged && n == trained:
		how = fmt.Sprintf("the model's trained context, which fits whole: one sequence of it fits %s", pool)
	case paged:
		how = fmt.Sprintf("the model's trained context (%d), reduced to the largest multiple of %d with which one full-length sequence fits %s",
			trained, contextStep, pool)
	case n == trained:
		how = "the model's trained context, which fits whole"
	default:
		how = fmt.Sprintf("the model's trained context (%d), reduced to the largest multiple of %d that fits", trained, contextStep)
	}
	line := fmt.Sprintf("context: %d tokens per sequence, chosen: %s (the request gave no number; the plan was made at %d, then again at this context)", n, how, floor)
	if f, ok := e.(engine.ContextFitter); ok {
		// The engine can choose its context itself (vLLM's
		// --max-model-len auto); the plan pins the figure.
		line += "; " + f.ContextFitNote()
	}
	return line
}

// chosenSpeedDepth is the KV depth, in tokens per sequence, at which the
// speed of a plan whose context was chosen (fitContext) is stated: the
// default context, the depth every plan's speed was stated at before
// contexts were chosen. A chosen context is the longest a sequence may
// grow to, not the length sequences have: stating decode at a full 128k
// cache would make the headline speed that of the rare longest request
// (this planner's figures for Llama-3.1-8B Q4_K_M with llama.cpp on one
// H100: about 68 tokens/s at 131072 against 205 at 4096).
const chosenSpeedDepth = DefaultContextLength

// throughputOf is the speed estimate of a fitting plan. A context the
// request gave is also the depth the speed is stated at; a chosen one
// (chosen true) is stated at chosenSpeedDepth, and the assumptions say so
// and give decode at the full chosen depth.
func throughputOf(pl *planned, req *planning, interStageGBs float64, chosen bool, maxBatch int) Throughput {
	full := throughputAt(pl, req, interStageGBs, maxBatch)
	if !chosen || req.ContextLength <= chosenSpeedDepth {
		return full
	}
	shallowPl, shallowReq, ratio, ok := atDepth(pl, req, chosenSpeedDepth)
	if !ok {
		return full
	}
	// The pool that holds maxBatch sequences at the chosen context holds
	// at least 1/ratio times as many at the shallower depth.
	t := throughputAt(shallowPl, shallowReq, interStageGBs, int(float64(maxBatch)/ratio))
	if t.DecodeTokensPerS <= 0 && t.PrefillTokensPerS <= 0 {
		return full // no figure to state a depth for
	}
	note := fmt.Sprintf("speeds are stated at a KV depth of %d tokens per sequence, not at the chosen context of %d: a sequence's cache grows to it only at its longest",
		chosenSpeedDepth, req.ContextLength)
	if full.DecodeTokensPerS > 0 {
		note = fmt.Sprintf("speeds are stated at a KV depth of %d tokens per sequence, not at the chosen context of %d: at that full depth decode is %.1f tokens/s",
			chosenSpeedDepth, req.ContextLength, full.DecodeTokensPerS)
		if full.Sequences != t.Sequences && full.Sequences > 0 {
			note += fmt.Sprintf(" over %s, all the KV pool holds at that depth", counted(full.Sequences, "sequence"))
		}
	}
	t.Assumptions = append(t.Assumptions, note)
	return t
}

// atDepth is plan pl and request req with every device's KV cache as it
// is at depth tokens per sequence instead of the planned context: the
// same devices and layer split, for estimating speed at that depth. The
// cache scales by the estimate's own ratio (quant.KVCacheBytes, so that
// sliding-window layers capped at their window scale as they do); ok is
// false when no KV cache is planned. ratio is the cache at depth over the
// cache at the planned context.
func atDepth(pl *planned, req *planning, depth int) (*planned, *planning, float64, bool) {
	batch := fitBatch(pl.Pool, pl.batchOf(req))
	full, okFull := estimateSaneOn(req, pl.Pool, pl.Level, req.ContextLength, batch)
	shallow, okShallow := estimateSaneOn(req, pl.Pool, pl.Level, depth, batch)
	if !okFull || !okShallow || full.KVCacheBytes <= 0 || shallow.KVCacheBytes <= 0 {
		return nil, nil, 0, false
	}
	ratio := float64(shallow.KVCacheBytes) / float64(full.KVCacheBytes)
	p := *pl
	p.Stages = stagesWithKV(pl.Stages, ratio)
	if pl.Replicas != nil {
		p.Replicas = make([][]stage, len(pl.Replicas))
		for i, r := range pl.Replicas {
			p.Replicas[i] = stagesWithKV(r, ratio)
		}
	}
	p.Costs.LayerKV *= ratio
	r := *req.Request
	r.ContextLength = depth
	q := *req
	q.Request = &r
	return &p, &q, ratio, true
}

// stagesWithKV is a copy of stages with each part's KV cache scaled by
// ratio.
func stagesWithKV(stages []stage, ratio float64) []stage {
	out := make([]stage, len(stages))
	for i, s := range stages {
		s.Part.KV = int64(math.Ceil(float64(s.Part.KV) * ratio))
		out[i] = s
	}
	return out
}
