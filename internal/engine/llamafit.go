package engine

import "fmt"

// llama.cpp's --fit in its own words (FitNamer): the planner follows its
// order (common_params_fit_impl in common/fit.cpp,
// https://github.com/ggml-org/llama.cpp/blob/master/common/fit.cpp): with no
// -c it starts from the trained context (step 1: no change when that fits);
// step 2 reduces the context, and returns when the whole model fits the
// GPUs at a context between the floor (--fit-ctx) and the trained one;
// otherwise the context stays at the floor and only then does step 3 move
// weights, filling each GPU with whole layers from the back (a MoE model:
// every layer's dense weights with all experts in host memory), and for a
// MoE model whose dense weights all fit, step 4 brings whole layers'
// experts back onto the GPUs until they are full, and part of one more
// layer. A MoE model whose dense weights do not all fit stops after step 3
// with dense-only layers on the GPUs.

// FitChoice implements FitNamer.
func (llamaCPP) FitChoice() string { return "llama.cpp's --fit chooses with no -c" }

// FitSpread implements FitNamer: shown every GPU, llama.cpp splits the
// layers over all of them (--split-mode layer, the default) and --fit
// keeps or cuts the context over them.
func (llamaCPP) FitSpread() string {
	return "llama.cpp shown every GPU splits the layers over all of them (--split-mode layer) and its --fit keeps the model's trained context when they hold it, else cuts it to what they hold"
}

// FitDenseOnly implements FitNamer: --fit's step 3 for a MoE model.
func (llamaCPP) FitDenseOnly() string { return "as llama.cpp's --fit does (its step 3)" }

// FitRounding implements FitNamer: --fit reduces a context to a multiple
// of LlamaFitContextStep.
func (llamaCPP) FitRounding() string { return "llama.cpp's --fit" }

// FitFloorLine implements FitNamer: why the context is --fit's floor
// (--fit-ctx, a total over the -np slots: Args) and which step of --fit
// placed the rest.
func (e llamaCPP) FitFloorLine(f FitFloor) string {
	batch := max(f.Seqs, 1)
	// --fit-ctx bounds the total context, which the -np slots divide
	// (Args): the floor a sequence times the slots.
	fitCtx := fmt.Sprintf("--fit-ctx %d", f.Floor*batch)
	if batch > 1 {
		fitCtx += fmt.Sprintf(" over -np %d", batch)
	}
	ctx := f.Context
	head := fmt.Sprintf("context: %d tokens per sequence, llama.cpp --fit's floor (%s): with no -c --fit reduces the model's trained context (%d per sequence) toward the floor (its step 2)", ctx, fitCtx, f.Trained)
	switch {
	case f.Trained < 0:
		head = fmt.Sprintf("context: %d tokens per sequence, llama.cpp --fit's floor (%s): with no -c --fit reduces the model's trained context (unknown here) toward the floor (its step 2)", ctx, fitCtx)
	case f.Trained <= ctx:
		head = fmt.Sprintf("context: %d tokens per sequence, the model's trained context, which is not above llama.cpp --fit's floor (%s), so --fit keeps it (its step 2 changes nothing)", ctx, fitCtx)
	}
	line := fmt.Sprintf("%s, but at %d the model still needs %s with every tensor on %s against %s usable, so --fit keeps this context and moves weights to the CPU instead",
		head, ctx, sizeWord(f.NeedBytes), f.Where, sizeWord(f.UsableBytes))
	where := f.Where
	switch {
	case f.Host.AllExperts:
		// Not every layer's dense weights fit the GPUs: --fit's step 3
		// gives them the dense weights of the last layers only, their
		// experts in host memory (n_part = n_layer, the output layer
		// whole), and stops (global_surplus_cpu_moe <= 0).
		line += fmt.Sprintf(": not every layer's dense weights fit %s with all routed experts in host RAM, so it fills %s from the back with the dense weights and KV cache of as many layers as fit, the last %d here, keeps the first ones whole and every routed expert in host RAM, and stops there (its step 3; llama.cpp %s)", where, where, f.GPULayers, e.HostOffloadSettings(f.Host))
	case f.Host.WholeLayers:
		line += fmt.Sprintf(": it fills %s with whole layers from the back (its step 3), the last %d here (-ngl %d), the first ones staying in host RAM", where, f.GPULayers, f.GPULayers)
	default:
		full := "it is"
		if f.GPUs > 1 {
			full = "they are"
		}
		line += fmt.Sprintf(": every layer's dense weights on %s with all routed experts in host RAM, then whole layers' experts back onto %s until %s full", where, where, full)
		if f.Host.PartTensors > 0 {
			// Its LAYER_FRACTION_UP / _GATE overflow: ffn_gate and
			// ffn_down, or ffn_down, to the CPU.
			line += ", and part of one more layer"
		}
		line += fmt.Sprintf(" (its steps 3 and 4), which leaves the experts of this plan's llama.cpp %s in host RAM; --fit names the last layers in -ot patterns where --n-cpu-moe names the first, the same memory for layers of one size", e.HostOffloadSettings(f.Host))
	}
	return line + "; a longer -c than the room's (this placement, each layer's KV cache on its layer's device) fits only with more of the model in host RAM"
}
