package calibration

import "fmt"

// ServingFit names a serving engine's fitted batch-1 decode set: the rows
// of data/serving_decode.json its constants were fitted on (fit/), and so
// which of Throughput's sets a plan for the engine pays. An engine names
// its own (engine.ServingFitted); one no rows were fitted on names none,
// and its plans pay no engine's constants: a figure fitted on one engine's
// runs is not shown for another's.
type ServingFit string

const (
	// ServingFitVLLM: vLLM's batch-1 rows (Throughput.VLLM).
	ServingFitVLLM ServingFit = "vllm"
	// ServingFitSGLang: SGLang's batch-1 rows (Throughput.SGLang and
	// SGLangROCm on HBM GPUs, where they ran; Throughput.VLLM elsewhere,
	// internal/plan's sglangDecode says why).
	ServingFitSGLang ServingFit = "sglang"
)

// The words a plan paying a set's constants quotes of its rows
// (internal/plan's validated_on and assumptions) live here, with the rows:
// a plan speaks of the set it pays, whichever engine it is for (an engine
// naming SGLang's set pays SGLang's constants and reads SGLang's rows), so
// the planner spells no engine's rows itself. The figures are checked
// against the fit by tests of fit/: VLLMOutOfSample by
// TestVLLMValidatedOnQuotesTheCrossValidation, the concurrency checks by
// TestServingConcurrencyCheckQuotesTheReplay.

// VLLMOutOfSample is the check of vLLM's constants (Fitted.VLLM): how
// many vLLM rows of data/serving_decode.json they are fitted on, of how
// many sources, and the median and p90 of the out-of-sample |error| when
// each source's rows are predicted by constants fitted on the others
// (servingcv.go in fit/).
const VLLMOutOfSample = "39 rows of 18 sources; out of sample median 9.4 %, p90 34.2 %"

// VLLMConcurrencyCheck and SGLangConcurrencyCheck are what the published
// runs at a concurrency above 1 of each engine
// (data/serving_concurrency.json) give under the shipped constants: the
// per-sequence decode rate of a plan with batch_size C against the
// measured one, on the rows held out from the per-sequence term's fit
// (vLLM's MI300X benchmark_latency rows fit it).
const (
	VLLMConcurrencyCheck   = "13 held-out rows of 2 sources at concurrency 2-128: median error 15.4 %, p90 49.8 %; 14 rows of 1 source fit its per-sequence term"
	SGLangConcurrencyCheck = "22 held-out rows of 1 source at concurrency 16-100: median error 32.7 %, p90 224 %"
)

// SGLangOffHBM is the note of a plan paying SGLang's set on GPUs other
// than HBM parts, where it pays vLLM's constants: no SGLang row ran on
// one (ServingFitSGLang).
const SGLangOffHBM = "SGLang batch-1 decode pays vLLM's constants here: no SGLang row of internal/calibration/data/serving_decode.json ran on a GPU other than an HBM part (the rows: NVIDIA A100, H200, B200 and AMD MI300X), while vLLM's fit rows include a GDDR GPU (an RTX 4090)"

// SGLangPaysVLLMFit names the fit a plan paying SGLang's set pays off HBM
// GPUs (SGLangOffHBM), for a streamed plan's GPU part.
const SGLangPaysVLLMFit = "vLLM's batch-1 fit, which SGLang pays off HBM GPUs (internal/calibration/data/serving_decode.json)"

// Title is the engine whose runs f's rows are, as prose names it ("vLLM");
// "" for a set this package holds no rows of.
func (f ServingFit) Title() string {
	switch f {
	case ServingFitVLLM:
		return "vLLM"
	case ServingFitSGLang:
		return "SGLang"
	}
	return ""
}

// Rows names the batch-1 rows f's constants are fitted and checked on
// (docs/accuracy.md, "Serving engines"); "" for a set without rows here.
func (f ServingFit) Rows() string {
	switch f {
	case ServingFitVLLM:
		return "the vLLM batch-1 rows of internal/calibration/data/serving_decode.json (NVIDIA A100, H100, H20, B200, RTX 4090 and AMD MI300X; tensor parallelism 1-8)"
	case ServingFitSGLang:
		// Every row of an HBM GPU.
		return "SGLang's batch-1 rows of internal/calibration/data/serving_decode.json (fit: NVIDIA B200 and AMD MI300X; held out: NVIDIA A100 and H200; tensor parallelism 1-8)"
	}
	return ""
}

// NotValidatedWhy is why a plan paying f's constants is not validated:
// what they are fitted on and checked by, and what the check gives against
// the 12 % a validated figure meets (vLLM: the out-of-sample p90 of the
// leave-one-source-out cross-validation); "" for a set without rows here.
func (f ServingFit) NotValidatedWhy() string {
	switch f {
	case ServingFitVLLM:
		return "vLLM's constants are fitted on " + f.Rows() + " and checked by leave-one-source-out cross-validation (" + VLLMOutOfSample + "; docs/accuracy.md); the out-of-sample p90 is above the 12% a validated figure meets"
	case ServingFitSGLang:
		return "SGLang's constants are fitted and checked on " + f.Rows() + "; their errors (docs/accuracy.md) are above the 12% a validated figure meets"
	}
	return ""
}

// BatchFit names f's batch-1 fit as a streamed plan's GPU part takes it;
// "" for a set without rows here.
func (f ServingFit) BatchFit() string {
	switch f {
	case ServingFitVLLM:
		return "vLLM's batch-1 fit (internal/calibration/data/serving_decode.json)"
	case ServingFitSGLang:
		return "SGLang's batch-1 fit (" + f.Rows() + ")"
	}
	return ""
}

// ConcurrencyRuns is what the published runs of f's engine at a
// concurrency above 1 (data/serving_concurrency.json) say of a plan
// decoding several sequences a step under f's constants; "" for a set
// without such runs here.
func (f ServingFit) ConcurrencyRuns() string {
	switch f {
	case ServingFitVLLM:
		return "published vLLM runs at a concurrency above 1 (internal/calibration/data/serving_concurrency.json: " + VLLMConcurrencyCheck + ") measure steps that grow both faster and slower with the concurrency than planned"
	case ServingFitSGLang:
		return "published SGLang runs at a concurrency above 1 (internal/calibration/data/serving_concurrency.json: " + SGLangConcurrencyCheck + ") mostly measure a step that grows faster with the concurrency than planned"
	}
	return ""
}

// ServingPromptHeldOut is the check of the serving prompt model on the
// held-out vLLM rows of data/serving_prefill.json (time to first token at
// 2,048 input tokens): how many, and their median |log(planned/measured)|
// as a factor. TestServingPromptQuoteIsTheReplay (fit/) checks it against
// the replay.
const ServingPromptHeldOut = "8 held-out vLLM rows, median |log(planned/measured)| 0.459 (a factor of 1.58)"

// PromptNotValidatedWhy is why the prefill figure of a plan paying f's
// constants is not validated, bound being the median error a validated
// prefill figure meets: vLLM's held-out rows miss it; SGLang's prompt
// constants are fitted on its rows and no held-out row checks them; "" for
// a set without rows here.
func (f ServingFit) PromptNotValidatedWhy(bound float64) string {
	switch f {
	case ServingFitVLLM:
		return fmt.Sprintf("vLLM's prompt model is checked on internal/calibration/data/serving_prefill.json (%s; docs/accuracy.md, \"Serving prefill\"), past the %.0f%% a validated prefill figure meets", ServingPromptHeldOut, 100*bound)
	case ServingFitSGLang:
		return "SGLang's prompt constants are fitted on the SGLang cookbook's rows of internal/calibration/data/serving_prefill.json and no held-out SGLang row checks them (docs/accuracy.md, \"Serving prefill\")"
	}
	return ""
}

// DecodeNote is the assumption a plan paying f's batch-1 constants states,
// costs naming what a step streams at and pays (internal/plan's
// servingCostsText); "" for a set without rows here.
func (f ServingFit) DecodeNote(costs string) string {
	switch f {
	case ServingFitVLLM:
		return "vLLM batch-1 decode " + costs + " (fitted on public single-request vLLM figures, internal/calibration/data/serving_decode.json)"
	case ServingFitSGLang:
		return "SGLang batch-1 decode " + costs + " (the MoE and MLA times, and on AMD GPUs a factor on every fixed time, fitted on " + f.Rows() + "; the bandwidth fraction and the step, per-part, all-reduce and indexer times are vLLM's, which those mostly multi-GPU MoE rows do not separate)"
	}
	return ""
}

// ServingBatchRows are the runs the per-sequence term of a serving step
// (Throughput.ServingBatchLayerSeconds and ServingBatchMFU) is fitted on.
const ServingBatchRows = "vLLM runs of 2-128 sequences on 8 MI300X, internal/calibration/data/serving_concurrency.json"

// ServingPromptRows are the rows the serving prompt model's efficiency
// (Throughput.ServingPrefillMFU) is fitted on.
const ServingPromptRows = "SGLang cookbook time-to-first-token rows"

// WeightOffloadRun is where the one published run of a weight offload
// that streams layers from host memory to the GPU each step is described
// (docs/accuracy.md), and WeightOffloadCopyRun what that run was: a
// per-pass copy, as SGLang's offload and vLLM's former one make.
const (
	WeightOffloadRun     = "docs/accuracy.md, \"vLLM weight offload\""
	WeightOffloadCopyRun = "Aphrodite's port of vLLM's former copying offload"
)
