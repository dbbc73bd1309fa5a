package plan

import (
	"fmt"

	"github.com/ai-hwaccel/ai-hwaccel/internal/calibration"
	"github.com/ai-hwaccel/ai-hwaccel/internal/engine"
)

// sglangRows names the measurements SGLang's constants rest on: SGLang's
// rows of internal/calibration/data/serving_decode.json, every one of an
// HBM GPU (docs/accuracy.md, "Serving engines").
const sglangRows = "SGLang's batch-1 rows of internal/calibration/data/serving_decode.json (fit: NVIDIA B200 and AMD MI300X; held out: NVIDIA A100 and H200; tensor parallelism 1-8)"

// sglangFallback is the note of an SGLang plan that pays vLLM's constants:
// SGLang has no row on a GPU outside HBM parts.
const sglangFallback = "SGLang batch-1 decode pays vLLM's constants here: no SGLang row of internal/calibration/data/serving_decode.json ran on a GPU other than an HBM part (the rows: NVIDIA A100, H200, B200 and AMD MI300X), while vLLM's fit rows include a GDDR GPU (an RTX 4090)"

// sglangDecode is the batch-1 decode overhead of an SGLang plan and
// whether it is SGLang's own: calibration.Throughput.SGLang (on AMD GPUs
// SGLangROCm) where every device of the plan is an HBM GPU (the GPUs
// SGLang's rows ran on), else vLLM's, whose fit covers a GDDR GPU too.
func (e efficiency) sglangDecode(pl *planned) (calibration.ServingDecode, bool) {
	if e.SGLang.BandwidthFraction <= 0 || !sglangMeasured(pl) {
		return e.VLLM, false
	}
	for _, s := range pl.computeStages() {
		for _, d := range s.Devices {
			if amdGPU(d) {
				return e.SGLangROCm, true
			}
		}
	}
	return e.SGLang, true
}

// sglangMeasured reports whether every device of the plan is of the memory
// class SGLang's rows ran on (HBM); a streamed offload plan's host memory
// is not one of its devices (its bytes cross PCIe: computeStages).
func sglangMeasured(pl *planned) bool {
	for _, s := range pl.computeStages() {
		for _, d := range s.Devices {
			if memoryClass(d) != MemoryClassHBM {
				return false
			}
		}
	}
	return len(pl.Stages) > 0
}

// servingFitOf is the calibration set whose constants a plan for engine en
// pays: the one the engine names as fitted on its own runs
// (engine.ServingFitted), where the engine takes the serving speed model
// and the set is one this planner holds constants for; "" otherwise, and
// such an engine pays no engine's fitted constants (servingDecode).
func servingFitOf(en engine.Engine) calibration.ServingFit {
	if engine.SpeedModelOf(en) != engine.SpeedServing {
		return ""
	}
	switch f := engine.ServingFitOf(en); f {
	case calibration.ServingFitVLLM, calibration.ServingFitSGLang:
		return f
	}
	return ""
}

// servingNoteOf is the assumption naming the fixed costs s a serving
// engine's plan pays: vLLM's (servingNote), or SGLang's own or, off HBM,
// vLLM's in their place.
func (e efficiency) servingNoteOf(en engine.Engine, pl *planned, s calibration.ServingDecode) string {
	if servingFitOf(en) != calibration.ServingFitSGLang {
		return servingNote(s)
	}
	if _, own := e.sglangDecode(pl); !own {
		return sglangFallback + "; " + servingNote(s)
	}
	return fmt.Sprintf("SGLang batch-1 decode %s (the MoE and MLA times, and on AMD GPUs a factor on every fixed time, fitted on %s; the bandwidth fraction and the step, per-part, all-reduce and indexer times are vLLM's, which those mostly multi-GPU MoE rows do not separate)",
		servingCostsText(s), sglangRows)
}

// servingFractionOf is the engine whose bandwidth fraction a serving
// plan's decode streams at (decodeNote): SGLang where its own constants
// apply, else vLLM; "" when the plan is not a serving one.
func (e efficiency) servingFractionOf(serving bool, en engine.Engine, pl *planned) string {
	if !serving {
		return ""
	}
	if servingFitOf(en) == calibration.ServingFitSGLang {
		if _, own := e.sglangDecode(pl); own {
			return "SGLang"
		}
	}
	return "vLLM"
}

// sglangValidatedOn is an SGLang plan's validated_on: what its speed was
// checked on (SGLang's rows, docs/accuracy.md) and why it is not a
// validated figure (the held-out rows miss the 12 % a validated one meets).
func sglangValidatedOn(pl *planned) string {
	if _, own := efficiency(fitted).sglangDecode(pl); !own {
		return NotValidated + ": " + sglangFallback
	}
	return NotValidated + ": SGLang's constants are fitted and checked on " + sglangRows + "; their errors (docs/accuracy.md) are above the 12% a validated figure meets"
}

// servingUsed reports whether a plan for the engine en pays a serving
// engine's fitted constants (servingDecode): on NVIDIA and AMD GPUs.
func (e efficiency) servingUsed(en engine.Engine, pl *planned) bool {
	_, ok := e.servingDecode(en, pl)
	return ok
}

// computeStages are the stages of pl whose devices run layers: all of them
// but a streamed offload plan's host stage, which only stores weights the
// GPU uses (streamed).
func (pl *planned) computeStages() []stage {
	if pl.streamed() {
		return pl.Stages[:len(pl.Stages)-1]
	}
	return pl.Stages
}

// streamedGPUFigure says what the GPU's part of streamed plan pl's decode
// is under engine en: the engine's fitted batch-1 decode (SGLang's own on
// HBM GPUs, else vLLM's), or the generic estimate where no serving row
// covers the device (streamedValidatedOn).
func streamedGPUFigure(en engine.Engine, pl *planned) string {
	e := efficiency(fitted)
	if !e.servingUsed(en, pl) {
		return "the generic estimate (no " + en.Title() + " row on this device)"
	}
	if servingFitOf(en) == calibration.ServingFitSGLang {
		if _, own := e.sglangDecode(pl); own {
			return "SGLang's batch-1 fit (" + sglangRows + ")"
		}
		return "vLLM's batch-1 fit, which SGLang pays off HBM GPUs (internal/calibration/data/serving_decode.json)"
	}
	return "vLLM's batch-1 fit (internal/calibration/data/serving_decode.json)"
}
