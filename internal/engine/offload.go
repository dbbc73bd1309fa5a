package engine

import "math"

// offloadSteps is bytes in steps of step, rounded up (the small slack
// absorbs the float error of a figure OffloadBytes made).
func offloadSteps(bytes int64, step float64) float64 {
	return math.Ceil(float64(bytes)/step - 1e-12)
}

// OffloadBytes is bytes rounded up to what an engine that streams offloaded
// weights (StreamsOffloadedWeights) offloads under the flag its Args write
// for them, in steps of OffloadStep: a plan that keeps this many bytes in
// host memory is the command's. bytes unchanged without a step.
func (p Parallelism) OffloadBytes(bytes int64) int64 {
	if p.OffloadStep <= 0 {
		return bytes
	}
	return int64(offloadSteps(bytes, p.OffloadStep) * p.OffloadStep)
}
