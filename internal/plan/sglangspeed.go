package plan

import (
	"github.com/ai-hwaccel/ai-hwaccel/internal/calibration"
	"github.com/ai-hwaccel/ai-hwaccel/internal/engine"
)

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
		return calibration.SGLangOffHBM + "; " + servingNote(s)
	}
	return calibration.ServingFitSGLang.DecodeNote(servingCostsText(s))
}

// servingFractionOf is the engine whose bandwidth fraction a serving
// plan's decode streams at (decodeNote), as the set's rows name it: SGLang
// where its own constants apply, else vLLM; "" when the plan is not a
// serving one.
func (e efficiency) servingFractionOf(serving bool, en engine.Engine, pl *planned) string {
	if !serving {
		return ""
	}
	if servingFitOf(en) == calibration.ServingFitSGLang {
		if _, own := e.sglangDecode(pl); own {
			return calibration.ServingFitSGLang.Title()
		}
	}
	return calibration.ServingFitVLLM.Title()
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
