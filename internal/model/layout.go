package model

import (
	"regexp"
	"slices"
	"strings"
)

// The parts of a model a checkpoint's quantization may cover (a
// WeightLayout's Quantized): its linear layers by what they do, as
// quantization configs name them through module names.
const (
	PartAttention     = "attention"      // the attention projections (q, k, v, o; MLA's down- and up-projections; an indexer)
	PartDenseMLP      = "dense-mlp"      // the FFN of a dense layer (a MoE model's leading dense layers)
	PartSharedExperts = "shared-experts" // a MoE layer's shared experts
	PartRoutedExperts = "routed-experts" // a MoE layer's routed experts (and a LatentMoE's latent projections)
	PartMixer         = "mixer"          // a recurrent mixer's projections (Mamba, gated DeltaNet, short convolutions)
	PartHead          = "head"           // the output head (lm_head)
)

// linearParts are the parts whose weights are linear layers, which a
// quantization config's "Linear" target covers.
var linearParts = []string{PartAttention, PartDenseMLP, PartSharedExperts, PartRoutedExperts, PartMixer, PartHead}

// partModules are module names of each part in the naming of
// transformers' DeepSeek, Qwen and Llama models (and Kimi's, which are
// DeepSeek's under language_model.), for matching a quantization config's
// ignore list: a part is left unquantized when the list matches every one
// of its names. The dense MLP's are those of layer 0 and the other parts'
// those of layer 1, where a MoE model with leading dense layers has them
// (DeepSeek-V3's first_k_dense_replace, Laguna-S-2.1's layer 0).
var partModules = map[string][]string{
	PartAttention:     {"model.layers.1.self_attn.q_proj", "model.layers.1.self_attn.o_proj"},
	PartDenseMLP:      {"model.layers.0.mlp.gate_proj", "model.layers.0.mlp.up_proj", "model.layers.0.mlp.down_proj"},
	PartSharedExperts: {"model.layers.1.mlp.shared_experts.gate_proj", "model.layers.1.mlp.shared_experts.down_proj"},
	PartRoutedExperts: {"model.layers.1.mlp.experts.0.gate_proj", "model.layers.1.mlp.experts.0.down_proj"},
	PartMixer:         {"model.layers.1.mixer.in_proj", "model.layers.1.mixer.out_proj"},
	PartHead:          {"lm_head"},
}

// sharedExpertModules are Qwen's name for the shared expert
// (Qwen2MoeSparseMoeBlock.shared_expert, Laguna's too), matched beside
// DeepSeek's shared_experts.
var sharedExpertModules = []string{"model.layers.1.mlp.shared_expert.gate_proj", "model.layers.1.mlp.shared_expert.down_proj"}

// WeightLayout is how a checkpoint stores its weights, as its
// quantization_config says: which parts of the model are quantized, to how
// many bits, and the scales (and zero points) stored beside them. The
// other parts stay in the checkpoint's 16-bit dtype. The zero layout
// (Bits 0) says nothing, and the weights follow the planning level alone.
type WeightLayout struct {
	// Quant is the planning level the quantized parts are stored at
	// (int4, int8, fp8): the layout applies to a plan at that level.
	Quant string `json:"quant"`
	// Bits is the width of a quantized weight.
	Bits int `json:"bits"`
	// Strategy is how the scales are laid out, in compressed-tensors'
	// words: "group" (one per GroupSize weights of a row), "block" (one per
	// BlockSize x BlockSize tile), "channel" (one per output row) or
	// "tensor" (one per tensor).
	Strategy  string `json:"strategy"`
	GroupSize int    `json:"group_size,omitempty"`
	BlockSize int    `json:"block_size,omitempty"`
	// ScaleBits is the width of a scale: 16 for bf16/fp16, 32 for fp32,
	// 8 for MX formats' e8m0.
	ScaleBits int `json:"scale_bits"`
	// ZeroBits is the width of a zero point stored per scale by an
	// asymmetric scheme (AWQ's qzeros, GPTQ's); 0 for a symmetric one.
	ZeroBits int `json:"zero_bits,omitempty"`
	// Quantized are the parts stored at Bits (PartAttention...): the
	// quantization's targets less its ignore list.
	Quantized []string `json:"quantized"`
	// Source is where the layout was read (the config's URL), for a
	// layout recorded on a catalog checkpoint.
	Source string `json:"source,omitempty"`
}

// IsZero reports whether the layout says nothing.
func (w WeightLayout) IsZero() bool { return w.Bits == 0 }

// Quantizes reports whether part is stored quantized.
func (w WeightLayout) Quantizes(part string) bool { return slices.Contains(w.Quantized, part) }

// quantizedExcept is the linear parts (the head only where head is true)
// whose module names the ignore list does not all match.
func quantizedExcept(ignore []string, head bool) []string {
	var parts []string
	for _, p := range linearParts {
		if p == PartHead && !head {
			continue
		}
		names := partModules[p]
		if ignoredAll(ignore, names) {
			continue
		}
		if p == PartSharedExperts && ignoredAll(ignore, sharedExpertModules) {
			continue
		}
		parts = append(parts, p)
	}
	return parts
}

// ignoredAll reports whether every name is matched by an ignore entry.
func ignoredAll(ignore []string, names []string) bool {
	for _, n := range names {
		if !ignored(ignore, n) {
			return false
		}
	}
	return true
}

// ignored reports whether an ignore-list entry matches the module name: a
// "re:" entry as a regular expression matched from the start of the name
// (compressed-tensors' is_match applies re.match), any other where the
// name contains it, as transformers and vLLM test modules_to_not_convert
// (vLLM's is_layer_skipped_awq: any(module_name in prefix ...), in
// vllm/model_executor/layers/quantization/awq.py): "lm_head" matches
// language_model.lm_head, "visual" matches visual.blocks.0.attn.qkv.
func ignored(ignore []string, name string) bool {
	for _, e := range ignore {
		if pat, ok := strings.CutPrefix(e, "re:"); ok {
			re, err := regexp.Compile("^(?:" + pat + ")")
			if err == nil && re.MatchString(name) {
				return true
			}
			continue
		}
		if e != "" && strings.Contains(name, e) {
			return true
		}
	}
	return false
}

// readLayout is the layout a config's quantization_config declares (a
// multimodal config's from its text_config, which FromConfig merged in),
// the zero layout where there is none or it is not one of these:
//
//   - compressed-tensors (vLLM's and llm-compressor's format): the first
//     config group's weights scheme (num_bits, type, strategy, group_size,
//     block_structure, scale_dtype, symmetric) over the "Linear" target,
//     less the ignore list; the head is a Linear and is quantized unless
//     ignored;
//   - fp8 (transformers' FineGrainedFP8Config): every linear layer but the
//     head in e4m3 with a float32 scale per weight_block_size tile
//     (weight_scale_inv), less modules_to_not_convert;
//   - awq and gptq: bits and group_size, a float16 scale and a packed zero
//     point per group (AWQ's zero_point, GPTQ's qzeros, stored for
//     symmetric GPTQ too), less modules_to_not_convert; GPTQ's g_idx, one
//     int32 per input row, is not counted (under 0.1 % of a 4,096-row
//     matrix's weights).
//
// transformers keeps the head out of every quantizer but
// compressed-tensors (get_keys_to_not_convert in
// transformers/integrations/bitsandbytes.py).
func readLayout(cfg map[string]any) WeightLayout {
	qc, _ := cfg["quantization_config"].(map[string]any)
	if qc == nil {
		return WeightLayout{}
	}
	ignore := stringList(qc["modules_to_not_convert"])
	if l := stringList(qc["ignored_layers"]); len(l) > 0 {
		ignore = append(ignore, l...)
	}
	var w WeightLayout
	head := false
	switch method, _ := qc["quant_method"].(string); method {
	case "compressed-tensors":
		w, ignore, head = compressedTensorsLayout(qc)
	case "fp8":
		w = WeightLayout{Bits: 8, Strategy: "tensor", ScaleBits: 32}
		if b := intList(qc["weight_block_size"]); len(b) == 2 && b[0] == b[1] && b[0] > 0 {
			w.Strategy, w.BlockSize = "block", b[0]
		}
		w.Quant = "fp8"
	case "awq", "gptq":
		w = groupIntLayout(qc, method)
	default:
		return WeightLayout{}
	}
	if w.Bits == 0 || w.Quant == "" {
		return WeightLayout{}
	}
	w.Quantized = quantizedExcept(ignore, head)
	return w
}

// compressedTensorsLayout reads a compressed-tensors quantization_config:
// the layout of its first config group (in key order) whose targets
// include "Linear", its ignore list, and whether the head is covered (it
// is a Linear). A zero layout where no group targets "Linear".
func compressedTensorsLayout(qc map[string]any) (WeightLayout, []string, bool) {
	groups, _ := qc["config_groups"].(map[string]any)
	names := make([]string, 0, len(groups))
	for k := range groups {
		names = append(names, k)
	}
	slices.Sort(names)
	for _, k := range names {
		g, _ := groups[k].(map[string]any)
		if !slices.Contains(stringList(g["targets"]), "Linear") {
			continue
		}
		wt, _ := g["weights"].(map[string]any)
		w := WeightLayout{Bits: intOf(wt["num_bits"]), Strategy: stringOf(wt["strategy"]), ScaleBits: 16}
		if gs := intOf(wt["group_size"]); gs > 0 {
			w.GroupSize = gs
		}
		if b := intList(wt["block_structure"]); len(b) == 2 && b[0] == b[1] && b[0] > 0 {
			w.BlockSize = b[0]
		}
		if s, ok := wt["scale_dtype"].(string); ok {
			// null: the scales are in the model's dtype (16-bit);
			// MX formats name torch.uint8 (an e8m0 exponent).
			w.ScaleBits = scaleDtypeBits(s)
		}
		if sym, ok := wt["symmetric"].(bool); ok && !sym {
			w.ZeroBits = w.Bits
		}
		w.Quant = levelOf(stringOf(wt["type"]), w.Bits)
		return w, stringList(qc["ignore"]), true
	}
	return WeightLayout{}, nil, false
}

// groupIntLayout reads an AWQ or GPTQ quantization_config (bits or
// w_bit, group_size or q_group_size; -1 means one scale per output row).
func groupIntLayout(qc map[string]any, method string) WeightLayout {
	bits := intOf(qc["bits"])
	if bits == 0 {
		bits = intOf(qc["w_bit"])
	}
	group, ok := number(qc["group_size"])
	if !ok {
		group, ok = number(qc["q_group_size"])
	}
	w := WeightLayout{Bits: bits, ScaleBits: 16, ZeroBits: bits, Quant: levelOf("int", bits)}
	switch {
	case ok && group > 0:
		w.Strategy, w.GroupSize = "group", int(group)
	case ok && group == -1:
		w.Strategy = "channel"
	default:
		return WeightLayout{}
	}
	if zp, ok := qc["zero_point"].(bool); method == "awq" && ok && !zp {
		w.ZeroBits = 0
	}
	return w
}

// levelOf is the planning level of weights of type typ ("int", "float")
// and bits: int4, int8, fp8; "" for another (NVFP4, MXFP4, 2 or 3 bits).
func levelOf(typ string, bits int) string {
	switch {
	case typ == "int" && bits == 4:
		return "int4"
	case typ == "int" && bits == 8:
		return "int8"
	case typ == "float" && bits == 8:
		return "fp8"
	}
	return ""
}

// scaleDtypeBits is the width of a scale dtype compressed-tensors names
// ("torch.bfloat16", "torch.float32", "torch.uint8"), 16 for another.
func scaleDtypeBits(s string) int {
	switch strings.TrimPrefix(s, "torch.") {
	case "float32":
		return 32
	case "uint8", "float8_e4m3fn", "float8_e8m0fnu":
		return 8
	}
	return 16
}

func stringList(v any) []string {
	l, _ := v.([]any)
	out := make([]string, 0, len(l))
	for _, x := range l {
		if s, ok := x.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

func intList(v any) []int {
	l, _ := v.([]any)
	out := make([]int, 0, len(l))
	for _, x := range l {
		out = append(out, intOf(x))
	}
	return out
}

// intOf is v as a whole number in [0, 2^16), 0 otherwise.
func intOf(v any) int {
	f, ok := number(v)
	if !ok || f < 0 || f >= 1<<16 || f != float64(int(f)) {
		return 0
	}
	return int(f)
}

func stringOf(v any) string {
	s, _ := v.(string)
	return s
}
