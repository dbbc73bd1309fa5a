package engine

import (
	"fmt"
	"slices"

	"github.com/ai-hwaccel/ai-hwaccel/internal/model"
	"github.com/ai-hwaccel/ai-hwaccel/internal/quant"
)

// CacheType is a KV cache type a request may ask for (kv_cache_dtype).
type CacheType struct {
	Name string
	// BytesPerElement is the storage of one cached value, its block's
	// scales included.
	BytesPerElement float64
}

// CommonCacheTypes are the KV cache types every request may ask for,
// whatever its engine: the model's 16-bit types and one byte per element
// (each engine writes its own flags for them, or says it has none).
var CommonCacheTypes = []CacheType{{"fp16", 2}, {"bf16", 2}, {"fp8", 1}, {"int8", 1}}

// CacheTypes are the names of every KV cache type a request may ask for:
// CommonCacheTypes, then each engine's in registration order, each once.
func CacheTypes() []string {
	return append([]string(nil), current.Load().cacheNames...)
}

// LookupCacheType is the cache type of that (lower-case) name; "" (the
// model's 16-bit type, asked for by most requests) is none.
func LookupCacheType(name string) (CacheType, bool) {
	if name == "" {
		return CacheType{}, false
	}
	t, ok := current.Load().cacheTypes[name]
	return t, ok
}

// dsaIndexerKeyBytes is one token's lightning-indexer key as vLLM and
// SGLang cache it (model.Model.IndexerHeads): index_head_dim fp8 values
// and one fp32 scale per 128 of them, in a uint8 buffer whatever
// --kv-cache-dtype says. vLLM: the Indexer's k_cache is a
// DeepseekV32IndexerCache of head_dim + head_dim // 128 * 4 bytes
// (vllm/model_executor/models/deepseek_v2.py at vllm-project/vllm
// 002d6073aa034d4f5545d45021b0e56d1f3c3593), an MLAAttentionSpec of one
// head the block size of the latent's, which joins the latent layers in
// one UniformTypeKVCacheSpecs group whose page is the sum of the layers'
// pages (vllm/v1/kv_cache_interface.py at 001cabc1be16a59a70d720ed61a13b678c060a18),
// so it shares the pool, the "GPU KV cache size" and the maximum
// concurrency with them. SGLang: NSATokenToKVPool's
// index_k_with_scale_buffer, page_size x (index_head_dim + index_head_dim
// / 128 x 4) bytes a page per layer (python/sglang/srt/mem_cache/memory_pool.py),
// counted in profile_max_num_token since sgl-project/sglang PR 11309
// (https://github.com/sgl-project/sglang/pull/11309). 132 bytes for
// DeepSeek-V3.2.
func dsaIndexerKeyBytes(m *model.Model) float64 {
	d := m.IndexerHeadDim
	return float64(d + d/128*4)
}

// TakesCacheType reports whether engine e takes the (lower-case) cache type
// name: a common one, or one e adds itself (its CacheTypes). A type another
// engine adds (llama.cpp's q8_0) has no flag in e's command, so a plan sized
// with it would not be the plan e runs. Engine none writes no command and
// sizes every known type.
func TakesCacheType(e Engine, name string) bool {
	if IsCommonCacheType(name) {
		return true
	}
	if e.Name() == NameNone {
		_, ok := LookupCacheType(name)
		return ok
	}
	return addsCacheType(e, name)
}

// addsCacheType reports whether name is one of e's own CacheTypes.
func addsCacheType(e Engine, name string) bool {
	for _, t := range e.CacheTypes() {
		if t.Name == name {
			return true
		}
	}
	return false
}

// CacheTypeEngines are the names of the registered engines that add the
// (lower-case) cache type name to the common ones (their CacheTypes), in
// registration order: none for a common or unknown type.
func CacheTypeEngines(name string) []string {
	var out []string
	for _, e := range current.Load().list {
		if addsCacheType(e, name) {
			out = append(out, e.Name())
		}
	}
	return out
}

// IsCommonCacheType reports whether every engine takes the cache type name
// (CommonCacheNames).
func IsCommonCacheType(name string) bool {
	return slices.Contains(CommonCacheNames(), name)
}

// CommonCacheNames are the names of CommonCacheTypes, in order.
func CommonCacheNames() []string {
	out := make([]string, 0, len(CommonCacheTypes))
	for _, t := range CommonCacheTypes {
		out = append(out, t.Name)
	}
	return out
}

// LevelCacheRules is implemented by an engine whose KV cache depends on
// the weights' level the planner must size: a cache type it runs as
// --kv-cache-dtype auto is the model's dtype, 4-byte values beside fp32
// weights (SGLang: SGLangAutoCache). vLLM's is counted in its start-up
// charge instead (VLLMAutoCache, vllmCharge in internal/plan).
type LevelCacheRules interface {
	// KVRulesAt is o, the engine's cache for the cache type kv asked
	// ("" none), for weights at level l.
	KVRulesAt(o quant.KVOptions, kv string, l quant.Level) quant.KVOptions
}

// KVRulesAt is o under engine e's rules for weights at level l and the
// cache type kv asked (LevelCacheRules); o where e has none.
func KVRulesAt(e Engine, o quant.KVOptions, kv string, l quant.Level) quant.KVOptions {
	if r, ok := e.(LevelCacheRules); ok {
		return r.KVRulesAt(o, kv, l)
	}
	return o
}

// RequestCapper is implemented by an engine that runs fewer requests at
// once than its KV pool holds, by a limit of its own (SGLang's mamba state
// pool: sglang.MaxRequests).
type RequestCapper interface {
	// MaxRequests is the most requests the engine runs at once for model m
	// at tensor-parallel size tp on a device whose pool (the memory its
	// fraction leaves past the weights) is poolBytes, and why; ok false
	// where it sets no such limit for m.
	MaxRequests(m *model.Model, poolBytes int64, tp int) (n int, why string, ok bool)
}

// FlashAttentionCache is implemented by an engine that cannot hold some KV
// cache types without flash attention.
type FlashAttentionCache interface {
	// NeedsFlashAttention reports whether the engine refuses the
	// (lower-case) cache type name with flash attention off.
	NeedsFlashAttention(name string) bool
}

// NeedsFlashAttention reports whether engine e refuses cache type name
// with flash attention off (FlashAttentionCache); false for an engine
// without that rule.
func NeedsFlashAttention(e Engine, name string) bool {
	f, ok := e.(FlashAttentionCache)
	return ok && f.NeedsFlashAttention(name)
}

// cacheTorchDType is the torch name of a 16-bit common cache type.
var cacheTorchDType = map[string]string{"fp16": "float16", "bf16": "bfloat16"}

// autoCache is how an engine's command runs a 16-bit cache type it leaves
// to --kv-cache-dtype auto (vLLM: VLLMAutoCache; SGLang: fp16, which it has
// no value for), for modelCacheNote: the engine's title, why it is auto
// (added after "--kv-cache-dtype auto") and what the plan counts of a
// 4-byte cache beside fp32 weights.
type autoCache struct{ title, why, fp32 string }

// modelCacheNote says which KV cache an engine allocates where its command
// leaves the 16-bit type p asks for to auto (a): the model's dtype, which
// --dtype pins at a 16-bit or fp32 level and the checkpoint sets at a
// quantized one. "" where p asks no 16-bit type or --dtype pins the one
// asked.
func modelCacheNote(a autoCache, p *Placement) string {
	k := p.KVCacheDType
	if !isSixteenBitCache(k) {
		return ""
	}
	served, pinned := torchDType[p.Level]
	switch {
	case served == cacheTorchDType[k]:
		return ""
	case p.Level == quant.FP32:
		return fmt.Sprintf("%s: the KV cache is the model's float32 (--kv-cache-dtype auto%s), not the %s asked: 4 bytes a value, %s", a.title, a.why, k, a.fp32)
	case pinned:
		return fmt.Sprintf("%s: the KV cache is the model's %s (--kv-cache-dtype auto%s), not the %s asked: the same 2 bytes a value", a.title, served, a.why, k)
	}
	return fmt.Sprintf("%s: the KV cache is the model's 16-bit type (--kv-cache-dtype auto%s), %s only if the checkpoint's is: the same 2 bytes a value", a.title, a.why, k)
}

// appendNonEmpty is notes with n added unless n is "".
func appendNonEmpty(notes []string, n string) []string {
	if n == "" {
		return notes
	}
	return append(notes, n)
}
