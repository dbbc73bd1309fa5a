package engine

import "github.com/ai-hwaccel/ai-hwaccel/internal/model"

// PyTorch's CUDA caching allocator (c10/cuda/CUDACachingAllocator.cpp,
// get_allocation_size; the constants in c10/core/AllocatorConfig.h of
// pytorch/pytorch): a request above torchMinLargeAlloc gets a segment of
// its own, rounded up to torchRoundLarge; smaller ones share 2 MiB and
// 20 MiB segments.
const (
	torchMinLargeAlloc = 10 << 20
	torchRoundLarge    = 2 << 20
)

// SGLangAllocatorRoundingBytes is what SGLang counts as weights on each
// device of a tensor-parallel group of tp beyond the tensors of layers
// [start, end) of model m stored in values of valueBits bits (16 for
// bf16, 8 for fp8 and int8, 4 for int4 and MXFP4; their scales are
// separate, smaller tensors, left out): SGLang measures the weights
// as the device's free memory before less after loading them
// (get_available_gpu_memory in python/sglang/srt/utils/common.py,
// torch.cuda.mem_get_info after torch.cuda.empty_cache, sgl-project/sglang
// at 004f0c7a), and PyTorch's allocator holds every weight tensor above
// 10 MiB in a segment rounded up to 2 MiB, which emptying the cache does
// not give back. Shapes whose shards are whole 2 MiB multiples (Llama's)
// lose nothing; Qwen2.5's lose 3.5 MiB a layer. The tensors are those of
// vLLM's and SGLang's fused layers: QKV, output, gate-and-up and down
// projections (a MoE layer's routed experts as one fused tensor each,
// its shared experts as a dense MLP), the vocabulary shards on the first
// and last stage. Multi-head latent attention's projections are left out.
func SGLangAllocatorRoundingBytes(m *model.Model, valueBits float64, tp, start, end int) int64 {
	if m.Hidden <= 0 || valueBits <= 0 || end <= start {
		return 0
	}
	tp = max(tp, 1)
	bytes := valueBits / 8
	dense, moe := sglangLayerRounding(m, bytes, tp)
	moeLayers := 0
	if m.Experts > 0 {
		moeLayers = max(end-max(start, m.DenseLayers), 0)
	}
	total := float64(end-start-moeLayers)*dense + float64(moeLayers)*moe
	if m.Vocab > 0 {
		shard := float64(m.Vocab/tp) * float64(m.Hidden) * bytes
		if start == 0 {
			total += roundingOf(shard)
		}
		if end == m.Layers && !m.TieEmbeddings {
			total += roundingOf(shard)
		}
	}
	return int64(total)
}

// sglangLayerRounding is the rounding of one dense layer's and one MoE
// layer's weight tensors on a device of a group of tp, at bytes per
// weight.
func sglangLayerRounding(m *model.Model, bytes float64, tp int) (dense, moe float64) {
	h := float64(m.Hidden)
	var attn float64
	if m.KVLoRARank == 0 && m.Heads > 0 {
		hd := float64(m.EffectiveHeadDim())
		q := float64(m.Heads/tp) * hd
		kv := float64(max(m.EffectiveKVHeads()/tp, 1)) * hd
		attn = roundingOf(h*(q+2*kv)*bytes) + roundingOf(q*h*bytes)
	}
	mlp := func(inter int) float64 {
		per := float64(inter/tp) * h * bytes
		return roundingOf(2*per) + roundingOf(per)
	}
	dense = attn + mlp(m.Intermediate)
	if m.Experts > 0 {
		w := m.MoEIntermediate
		if w == 0 {
			w = m.Intermediate
		}
		per := float64(m.Experts) * float64(w/tp) * h * bytes
		moe = attn + roundingOf(2*per) + roundingOf(per)
		shared := m.SharedIntermediate
		if shared == 0 {
			shared = m.SharedExperts * w
		}
		if shared > 0 {
			moe += mlp(shared)
		}
	}
	return dense, moe
}

// roundingOf is what the caching allocator holds beyond a tensor of b
// bytes: the rest of its 2 MiB-rounded segment when it is large enough for
// a segment of its own, else nothing (small tensors share segments).
func roundingOf(b float64) float64 {
	if b <= torchMinLargeAlloc {
		return 0
	}
	n := int64(b)
	return float64((n+torchRoundLarge-1)/torchRoundLarge*torchRoundLarge - n)
}
