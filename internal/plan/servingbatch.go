package plan

import (
	"fmt"
	"math"

	"github.com/ai-hwaccel/ai-hwaccel/internal/calibration"
	"github.com/ai-hwaccel/ai-hwaccel/internal/model"
)

// servingBatchSeconds is what a vLLM or SGLang decode step of batch
// sequences adds on one stage for every sequence beyond the first, beside
// the KV cache it reads and the all-reduce bytes it sends (counted with
// the step): layers × Fitted.ServingBatchLayerSeconds, the work an engine
// does in every layer for each sequence (the decode attention kernel runs
// one block per sequence, partition and KV head and a reduction per
// sequence and head, csrc/rocm/attention.cu of ROCm/vllm at 040de12d; the
// norm, rotary, activation and quantisation kernels work row by row), and
// one more token's matrix products, tokenFLOPs on one device, at
// Fitted.ServingBatchMFU of the device's dense peak (vLLM's fp8 linear
// layers run a skinny GEMV, wvSplitKQ, at one token and torch._scaled_mm,
// a GEMM of M = the step's tokens, above it: rocm_per_tensor_w8a8_scaled_mm
// in vllm/model_executor/layers/quantization/utils/w8a8_utils.py at
// 040de12d), on top of the weight stream the batch-1 constants already
// time. Zero at one sequence, so a batch-1 figure does not move; the
// FLOPs part is left out where the peak is unknown. The rule it was
// fitted and adopted under: rule 6 of
// internal/calibration/data/serving_concurrency.json (docs/accuracy.md,
// "Serving engines at concurrency above 1").
func (e efficiency) servingBatchSeconds(batch, layers int, tokenFLOPs, peakTFLOPS float64) float64 {
	if batch <= 1 {
		return 0
	}
	perSequence := float64(layers) * e.ServingBatchLayerSeconds
	if e.ServingBatchMFU > 0 && peakTFLOPS > 0 && !math.IsInf(peakTFLOPS, 1) {
		perSequence += tokenFLOPs / (peakTFLOPS * 1e12 * e.ServingBatchMFU)
	}
	return float64(batch-1) * perSequence
}

// servingBatchNote is the assumption a serving plan of batch sequences a
// step states for the per-sequence term; "" at one sequence or without
// the constants.
func (e efficiency) servingBatchNote(batch int) string {
	if batch <= 1 || e.ServingBatchLayerSeconds <= 0 && e.ServingBatchMFU <= 0 {
		return ""
	}
	return fmt.Sprintf("%d sequences a step: each one beyond the first adds %.2f us per layer (attention and the per-token kernels) and one token's matrix products at %.0f%% of the dense peak (fitted on %s)",
		batch, e.ServingBatchLayerSeconds*1e6, e.ServingBatchMFU*100, calibration.ServingBatchRows)
}

// ServingBatchRoutedShare is the share of one token's matrix products
// (matmulParams) that its routed experts take in m, the k of E experts'
// weights of the MoE layers; 0 for a dense model. Rule 7 of
// internal/calibration/data/serving_concurrency.json, tried and not
// adopted (docs/accuracy.md, "Serving engines at concurrency above 1"),
// kept the routed experts' part of servingBatchSeconds's FLOPs at small M
// (their GEMMs have about C·k/E rows) and capped the rest at the step's
// tokens at the prompt's efficiency; internal/calibration/fit replays it
// with this share.
func ServingBatchRoutedShare(m *model.Model) float64 {
	if !m.IsMoE() || m.ExpertsPerToken <= 0 {
		return 0
	}
	active := float64(m.ActiveParams)
	if active <= 0 {
		active = float64(m.Params)
	}
	total := matmulParams(m, active)
	if total <= 0 {
		return 0
	}
	routed := float64(m.RoutedExpertParams()) * float64(m.MoELayers()) * float64(m.ExpertsPerToken) / float64(m.Experts)
	return min(routed/total, 1)
}

// routedByteShare is the routed experts' share of a MoE model's weights:
// their parameters (RoutedExpertParams x MoELayers) over all parameters,
// every weight at the level's average bits (a checkpoint whose attention
// stays 16-bit under an FP8 or int4 level is misshared a little); 0 for a
// dense model.
func routedByteShare(m *model.Model) float64 {
	if !m.IsMoE() || m.Params <= 0 {
		return 0
	}
	return min(float64(m.RoutedExpertParams())*float64(m.MoELayers())/float64(m.Params), 1)
}
