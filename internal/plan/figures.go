package plan

import (
	"github.com/ai-hwaccel/ai-hwaccel/internal/model"
	"github.com/ai-hwaccel/ai-hwaccel/internal/quant"
)

// levelWeights is the size of a model's weights at each level a request
// plans. It is computed once per request, before the search, and passed
// down with the request: the search estimates memory at the same few levels
// hundreds of times (every pool, every probe of the inverse questions).
// quant.WeightsBytes remembers sizes across requests, so computing it costs
// a lookup per level for a model seen before.
type levelWeights struct {
	levels []quant.Level
	bytes  []int64
}

// weightsAt sizes m's weights at every level of levels, through one
// quant.Weights so that the model's tensor list is enumerated once for all
// levels (a 60 000-layer config has hundreds of thousands of tensors).
func weightsAt(m *model.Model, levels []quant.Level) levelWeights {
	w := levelWeights{levels: levels, bytes: make([]int64, len(levels))}
	sizer := quant.NewWeights(m)
	for i, l := range levels {
		w.bytes[i] = sizer.Bytes(l)
	}
	return w
}

// at is the weights size at level l: the one computed for the request, or,
// for a level the request did not plan (a caller outside choose),
// quant.WeightsBytes itself.
func (w levelWeights) at(m *model.Model, l quant.Level) int64 {
	for i, x := range w.levels {
		if x == l {
			return w.bytes[i]
		}
	}
	return quant.WeightsBytes(m, l)
}

// estimate is quant.Estimate without notes, on the request's weights.
func (r *Request) estimate(l quant.Level, ctx, batch int) quant.Breakdown {
	return quant.EstimateWith(r.Model, r.weights.at(r.Model, l), ctx, batch, r.kvOptions())
}
