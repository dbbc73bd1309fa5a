package quant

import (
	"math"

	"github.com/ai-hwaccel/ai-hwaccel/internal/model"
)

// KVOptions describes the KV cache storage.
type KVOptions struct {
	// Bytes per cached element: 2 for fp16/bf16 (the default when 0), 1 for
	// an fp8/int8 cache.
	Bytes float64
}

func (o KVOptions) bytes() float64 {
	if o.Bytes > 0 {
		return o.Bytes
	}
	return 2
}

// Breakdown is an inference memory estimate for one model replica.
type Breakdown struct {
	WeightsBytes     int64    `json:"weights_bytes"`
	KVCacheBytes     int64    `json:"kv_cache_bytes"`
	ActivationsBytes int64    `json:"activations_bytes"`
	OverheadBytes    int64    `json:"overhead_bytes"`
	TotalBytes       int64    `json:"total_bytes"`
	Notes            []string `json:"notes,omitempty"`
}

// Estimate is the memory one replica of the model needs at level l for
// batch sequences of contextLen tokens, on one device (OverheadBytes is one
// device's runtime overhead; a plan over N devices adds N-1 more).
func Estimate(m *model.Model, l Level, contextLen, batch int, kv KVOptions) Breakdown {
	b := Breakdown{
		WeightsBytes:     WeightsBytes(m, l),
		KVCacheBytes:     KVCacheBytes(m, contextLen, batch, kv),
		ActivationsBytes: ActivationsBytes(m, contextLen, batch),
		OverheadBytes:    PerDeviceOverheadBytes(),
	}
	b.TotalBytes = b.WeightsBytes + b.KVCacheBytes + b.ActivationsBytes + b.OverheadBytes
	b.Notes = append(b.Notes, m.Notes...)
	return b
}

// KVCacheBytes is the KV cache for batch sequences of contextLen tokens:
// 2 (K and V) × layers × kv_heads × head_dim × tokens × bytes per element.
func KVCacheBytes(m *model.Model, contextLen, batch int, kv KVOptions) int64 {
	if m == nil || contextLen <= 0 || batch <= 0 {
		return 0
	}
	perToken := 2 * float64(m.Layers) * float64(m.EffectiveKVHeads()) * float64(m.EffectiveHeadDim())
	return int64(math.Ceil(perToken * float64(contextLen) * float64(batch) * kv.bytes()))
}

// ActivationsBytes is the inference working buffer (see activations.go).
func ActivationsBytes(m *model.Model, contextLen, batch int) int64 {
	return 0
}

// PerDeviceOverheadBytes is the runtime overhead on each device.
func PerDeviceOverheadBytes() int64 {
	return 512 << 20
}

// MaxContext is the longest context for which Estimate fits in budgetBytes
// (0 when even one token does not fit).
func MaxContext(m *model.Model, l Level, batch int, kv KVOptions, budgetBytes int64) int {
	limit := 1 << 24
	if m.MaxContext > 0 {
		limit = m.MaxContext
	}
	return largest(limit, func(n int) bool { return Estimate(m, l, n, batch, kv).TotalBytes <= budgetBytes })
}

// MaxBatch is the largest batch of contextLen-token sequences for which
// Estimate fits in budgetBytes (0 when none fits).
func MaxBatch(m *model.Model, l Level, contextLen int, kv KVOptions, budgetBytes int64) int {
	return largest(1<<20, func(n int) bool { return Estimate(m, l, contextLen, n, kv).TotalBytes <= budgetBytes })
}

// largest returns the largest n in [1, limit] with ok(n), for ok monotone
// (true then false), or 0 when ok(1) is false.
func largest(limit int, ok func(int) bool) int {
	if limit < 1 || !ok(1) {
		return 0
	}
	lo, hi := 1, limit
	for lo < hi {
		mid := lo + (hi-lo+1)/2
		if ok(mid) {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return lo
}
