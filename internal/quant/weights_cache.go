package quant

import (
	"sync"

	"github.com/ai-hwaccel/ai-hwaccel/internal/model"
)

// A process-wide memo of WeightsBytes. Planning asks the weights of the same
// few models (catalog models, mostly) at the same few levels on every call;
// each answer walks every tensor of the model (640 for a 70B Llama), which
// was most of a plan's cost after JSON decoding. WeightsBytes is a pure
// function of the model's shape and the level, so a remembered answer is the
// answer.

// shapeKey is every field of model.Model that WeightsBytes may read: all of
// them but Name, Source and Notes (labels, which no weight formula reads,
// and Notes is not comparable), with LayerKinds (a slice, not comparable)
// as a fingerprint of its contents (each layer's weights follow its kind,
// mixer and FFN) and VisionEncoder by value. TestShapeKeyCoversModel fails when Model gains a field
// this key lacks.
type shapeKey struct {
	Params, ActiveParams                                         int64
	Layers, Hidden, Heads, KVHeads, HeadDim, Intermediate, Vocab int
	TieEmbeddings                                                bool
	MaxContext                                                   int
	Rope, SlidingRope                                            model.Rope
	Experts, ExpertsPerToken, SharedExperts                      int
	MoEIntermediate, DenseLayers, SharedIntermediate             int
	MoELatent                                                    int
	LayerKinds                                                   uint64
	SSMStateBytes                                                int
	MTPParams, VisionParams, VisionWholeParams                   int64
	MTPLayers                                                    int
	VisionDeepstack                                              int
	KVLoRARank, QLoRARank, QKRopeHeadDim, QKNopeHeadDim          int
	VHeadDim                                                     int
	OGroups, OLoRARank                                           int
	IndexerHeads, IndexerHeadDim, IndexerTopK, IndexerLayers     int
	UncachedLayers                                               int
	// Layout is m.Layout as layoutKey keys it (a slice is not comparable).
	Layout          layoutKey
	FileQuant       string
	FileWeightBytes int64
	Architecture    string
	ShapeEstimated  bool
	// VisionEncoder is the value m.VisionEncoder points to (zero for nil),
	// comparable where the pointer would compare addresses.
	VisionEncoder model.VisionEncoder
	// VisionItem is the value m.VisionItem points to (zero for nil), by
	// value as VisionEncoder; the weights do not read it.
	VisionItem model.VisionItem
}

// shapeOf is m's memo key. It is kept out of line: inlined, it makes
// NewWeights too costly to inline, and the Weights of every plan then
// escapes to the heap (one allocation per plan).
//
//go:noinline
func shapeOf(m *model.Model) shapeKey {
	return shapeKey{
		Params: m.Params, ActiveParams: m.ActiveParams,
		Layers: m.Layers, Hidden: m.Hidden, Heads: m.Heads, KVHeads: m.KVHeads, HeadDim: m.HeadDim,
		Intermediate: m.Intermediate, Vocab: m.Vocab, TieEmbeddings: m.TieEmbeddings, MaxContext: m.MaxContext,
		Rope: m.Rope, SlidingRope: m.SlidingRope,
		Experts: m.Experts, ExpertsPerToken: m.ExpertsPerToken, SharedExperts: m.SharedExperts,
		MoEIntermediate: m.MoEIntermediate, DenseLayers: m.DenseLayers, SharedIntermediate: m.SharedIntermediate,
		MoELatent:  m.MoELatent,
		LayerKinds: kindsFingerprint(m.LayerKinds), SSMStateBytes: m.SSMStateBytes, MTPParams: m.MTPParams, MTPLayers: m.MTPLayers, VisionParams: m.VisionParams,
		VisionWholeParams: m.VisionWholeParams, VisionDeepstack: m.VisionDeepstack,
		KVLoRARank: m.KVLoRARank, QLoRARank: m.QLoRARank, QKRopeHeadDim: m.QKRopeHeadDim, QKNopeHeadDim: m.QKNopeHeadDim,
		VHeadDim: m.VHeadDim, OGroups: m.OGroups, OLoRARank: m.OLoRARank,
		IndexerHeads: m.IndexerHeads, IndexerHeadDim: m.IndexerHeadDim, IndexerTopK: m.IndexerTopK, IndexerLayers: m.IndexerLayers,
		UncachedLayers: m.UncachedLayers,
		Layout:         keyOf(m.Layout, !m.Layout.IsZero()),
		FileQuant:      m.FileQuant, FileWeightBytes: m.FileWeightBytes, Architecture: m.Architecture,
		ShapeEstimated: m.ShapeEstimated, VisionEncoder: visionEncoderOf(m), VisionItem: visionItemOf(m),
	}
}

// visionItemOf is *m.VisionItem, the zero item when there is none.
func visionItemOf(m *model.Model) model.VisionItem {
	if m.VisionItem == nil {
		return model.VisionItem{}
	}
	return *m.VisionItem
}

// visionEncoderOf is *m.VisionEncoder, the zero encoder when there is none.
func visionEncoderOf(m *model.Model) model.VisionEncoder {
	if m.VisionEncoder == nil {
		return model.VisionEncoder{}
	}
	return *m.VisionEncoder
}

// kindsFingerprint is a 64-bit FNV-1a hash of a layer pattern's fields (0
// for none): patterns that differ in any field differ here but for a
// hash collision.
func kindsFingerprint(kinds []model.Layer) uint64 {
	if len(kinds) == 0 {
		return 0
	}
	const prime = 1099511628211
	h := uint64(14695981039346656037)
	mix := func(v int64) {
		for range 8 {
			h = (h ^ uint64(v&0xff)) * prime
			v >>= 8
		}
	}
	for _, l := range kinds {
		mix(int64(l.Kind)<<8 | int64(l.FFN))
		for _, v := range [...]int64{int64(l.Window), int64(l.KVHeads), int64(l.HeadDim), int64(l.LatentDim),
			int64(l.RopeDim), int64(l.SharesWith), l.ConvState, l.SSMState, l.MixerParams, int64(l.Intermediate), boolInt(l.KEqV)} {
			mix(v)
		}
	}
	return h
}

type weightsKey struct {
	shape shapeKey
	level Level
	// layout is the stored layout of the weights at level (storedLayout):
	// it follows the model's checkpoints, which shapeKey leaves out.
	layout layoutKey
}

// maxRemembered bounds the memo: models given as configs can have any
// shape, so a long-lived process forgets everything when it is full rather
// than grow (catalog models × levels are far fewer).
const maxRemembered = 4096

var remembered struct {
	sync.RWMutex
	bytes map[weightsKey]int64
}

func recall(k weightsKey) (int64, bool) {
	remembered.RLock()
	v, ok := remembered.bytes[k]
	remembered.RUnlock()
	return v, ok
}

func remember(k weightsKey, v int64) {
	remembered.Lock()
	if remembered.bytes == nil || len(remembered.bytes) >= maxRemembered {
		remembered.bytes = make(map[weightsKey]int64)
	}
	remembered.bytes[k] = v
	remembered.Unlock()
}

func boolInt(b bool) int64 {
	if b {
		return 1
	}
	return 0
}
