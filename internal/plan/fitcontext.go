package plan

import (
	"fmt"

	"github.com/ai-hwaccel/ai-hwaccel/internal/engine"
)

// fitContext is the context an engine that chooses its own would take for
// plan ch: the model's trained context reduced to the largest multiple of
// engine.LlamaFitContextStep that fits the plan's devices (llama.cpp's
// --fit, engine.Memory.ContextFloor), with a line saying so; ok is false
// when the request's context stands: one was given, the engine runs the
// one it is given (and the request did not ask for "auto"), the plan does
// not fit or already offloads to host memory at the floor (--fit then
// keeps the floor and moves layers instead), or the model's trained
// context is unknown or no longer than the floor.
func fitContext(req *planning, ch *choice) (ctx int, line string, ok bool) {
	pl := &ch.Plan
	if req.ContextGiven || !pl.Fits || pl.Offloaded || pl.Pool == nil {
		return 0, "", false
	}
	eng := pl.Pool.Budget.Engine
	floor := eng.Memory(0).ContextFloor
	if floor == 0 && !req.ContextAuto {
		return 0, "", false
	}
	// llama.cpp's context (-c, n_ctx) is shared by the parallel sequences
	// (-np): with no -c it is the trained context in all, so each of a
	// replica's sequences gets its share (n_ctx_seq = n_ctx / n_seq,
	// src/llama-context.cpp).
	trained := req.Model.MaxContext / max(pl.batchOf(req), 1)
	trained -= trained % engine.LlamaFitContextStep
	if trained <= req.ContextLength {
		return 0, "", false
	}
	n := maxFitting(pl, req, true)
	n = min(n-n%engine.LlamaFitContextStep, trained)
	if n <= req.ContextLength {
		return 0, "", false
	}
	how := "reduced to fit"
	if n == trained {
		how = "it fits whole"
	}
	return n, fmt.Sprintf("context: %d tokens per sequence, chosen as llama.cpp's --fit chooses with no -c: the model's trained context (%d per sequence), %s (a multiple of %d, at least %d)",
		n, trained, how, engine.LlamaFitContextStep, req.ContextLength), true
}
