package quant

import "github.com/ai-hwaccel/ai-hwaccel/internal/model"

// A checkpoint's stored layout (model.WeightLayout): where its config says
// which parts are quantized and how, the weights at its level follow it
// rather than the level's rule of every linear layer at the level's width.
// Moonshot's INT4 releases (Kimi-K2-Thinking, K2.5, K2.6, K2.7-Code)
// quantize the routed experts alone, 4 bits with a bf16 scale per 32
// weights, and keep attention, shared experts, the dense MLP and the head
// in bf16: costed by the int4 level, Kimi-K2.7-Code's weights came to
// 533.0 GB against its 595.2 GB of files (catalog_totals_test.go).

// layoutKey is a layout as the WeightsBytes memo keys it (comparable).
type layoutKey struct {
	bits, group, block, scale, zero int
	strategy                        string
	quantized                       [len(layoutParts)]bool
}

// storedLayout is the layout m's weights are stored in at level l: that of
// the checkpoint a plan at l loads (the one the request named when it
// stores l, else the first non-GGUF one listed at l), else the config's
// (model.Model.Layout); false at another level, for a checkpoint that
// records none, or for a level that is not fp8, int8 or int4.
func storedLayout(m *model.Model, l Level) (model.WeightLayout, bool) {
	if l != FP8 && l != INT8 && l != INT4 {
		return model.WeightLayout{}, false
	}
	if ck := loadedCheckpoint(m, l); ck != nil {
		return ck.Layout, !ck.Layout.IsZero()
	}
	return m.Layout, m.Layout.Quant == string(l) && !m.Layout.IsZero()
}

// loadedCheckpoint is the catalog checkpoint a plan at l loads: the one
// the request named when it stores l, else the first non-GGUF one listed
// at l; nil where none is listed at l.
func loadedCheckpoint(m *model.Model, l Level) *model.Checkpoint {
	if ck := m.NativeCheckpoint(); ck != nil && ck.Quant == string(l) {
		return ck
	}
	for i := range m.Checkpoints {
		if ck := &m.Checkpoints[i]; ck.Quant == string(l) && !ck.IsGGUF() {
			return ck
		}
	}
	return nil
}

// keyOf is w's memo key (the zero key for no layout).
func keyOf(w model.WeightLayout, ok bool) layoutKey {
	if !ok {
		return layoutKey{}
	}
	k := layoutKey{bits: w.Bits, group: w.GroupSize, block: w.BlockSize, scale: w.ScaleBits, zero: w.ZeroBits, strategy: w.Strategy}
	for p, name := range layoutParts {
		k.quantized[p] = name != "" && w.Quantizes(name)
	}
	return k
}

// layoutBits is the bits per weight of tensor t stored in layout k: a
// quantized part's bits plus its scales and zero points (one of each per
// group of a row, per block x block tile, or per output row), 16 for
// every other tensor (the checkpoint's dtype: norms, router, embedding
// and the parts the quantization ignores).
func layoutBits(k layoutKey, t tensor) float64 {
	if t.cat == catF32 || !k.quantized[t.part] {
		return 16
	}
	b := float64(k.bits)
	perScale := float64(k.scale + k.zero)
	switch k.strategy {
	case "group":
		if k.group > 0 {
			b += perScale / float64(k.group)
		}
	case "block":
		if k.block > 0 {
			b += perScale / float64(k.block*k.block)
		}
	case "channel":
		if t.cols > 0 {
			b += perScale / float64(t.cols)
		}
	}
	return b
}

// ActiveShare is the share of m's weight bytes at level l, the input
// embedding aside, that one decode step reads when they are stored in a
// checkpoint's layout (storedLayout): every tensor but the routed experts
// whole, and ExpertsPerToken of the Experts routed experts. With the
// layout's bits differing by part the parameter share misstates it:
// Kimi-K2.5's INT4 release reads its bf16 attention, shared experts and
// dense MLP (23.4 GB) and eight of 384 experts at 4.5 bits (11.9 GB), 35.3
// GB a token, where 3.1 % of the parameters' share of 595 GB is 18.3 GB.
// False without a stored layout at l, a shape or routed experts: the
// parameter share stands.
func ActiveShare(m *model.Model, l Level) (float64, bool) {
	lay, ok := storedLayout(m, l)
	if !ok || !m.IsMoE() || m.Experts <= 0 || m.ExpertsPerToken <= 0 {
		return 0, false
	}
	ts, shaped := tensors(m)
	if !shaped {
		return 0, false
	}
	k := keyOf(lay, true)
	frac := float64(m.ExpertsPerToken) / float64(m.Experts)
	var all, read float64
	for _, t := range ts {
		if t.part == partEmbedding {
			continue
		}
		b := t.elements * layoutBits(k, t)
		all += b
		if t.part == partRoutedExperts {
			b *= frac
		}
		read += b
	}
	if all <= 0 {
		return 0, false
	}
	return read / all, true
}

// StoredEmbeddingBytes are the bytes of m's token embedding and output head
// (0 when tied to the embedding) at level l when its weights are stored in
// a checkpoint's layout (storedLayout): the embedding in the checkpoint's
// 16-bit dtype, the head at the layout's width where the layout quantizes
// it, else 16-bit too. False without a stored layout at l or a shape: the
// level's bits per weight stand. Kimi-K2.5's INT4 release keeps both in
// bf16, 2.35 GB each, where int4's 4.125 bits would make them 0.61 GB.
func StoredEmbeddingBytes(m *model.Model, l Level) (in, out float64, ok bool) {
	lay, ok := storedLayout(m, l)
	if !ok {
		return 0, 0, false
	}
	ts, shaped := tensors(m)
	if !shaped {
		return 0, 0, false
	}
	k := keyOf(lay, true)
	for _, t := range ts {
		switch t.part {
		case partEmbedding:
			in += t.elements * layoutBits(k, t) / 8
		case partHead:
			out += t.elements * layoutBits(k, t) / 8
		}
	}
	return in, out, true
}

// WeightBlock is the side of the square tiles the checkpoint a plan at l
// loads stores its weights in (fp8 weight_block_size: 128 for
// Qwen/Qwen3-235B-A22B-FP8, DeepSeek-V3), 0 where it stores none. vLLM
// and SGLang load such a checkpoint only where every tensor-parallel
// rank's share of an FFN matrix is whole tiles (model.Model.TPSplitWidths):
// Fp8LinearMethod and Fp8MoEMethod.create_weights raise "is not divisible
// by weight quantization block_n" otherwise
// (vllm/model_executor/layers/quantization/fp8.py of ROCm/vllm @
// f8c9a385; SGLang's cookbook, sgl-project/sgl-cookbook
// docs/autoregressive/Qwen/Qwen3-Coder.md @ 7b5bd9c0: "--ep 2 is required
// to satisfy the dimension alignment requirement"). A checkpoint with no
// recorded layout gives the block an engine's refusal to load it names
// (model.Checkpoint.SplitBlock: 128 for Qwen/Qwen3-Next-80B-A3B-Instruct-FP8).
func WeightBlock(m *model.Model, l Level) int {
	if w, ok := storedLayout(m, l); ok {
		if w.Strategy != "block" {
			return 0
		}
		return w.BlockSize
	}
	if l != FP8 {
		return 0
	}
	if ck := loadedCheckpoint(m, l); ck != nil {
		return ck.SplitBlock
	}
	return 0
}
