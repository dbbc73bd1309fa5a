package engine

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/calibration"
)

// Each built-in engine answers the planner's optional questions as its
// rules say: llama.cpp's runs are the speed rows, vLLM's and SGLang's the
// serving ones; only vLLM chooses its context itself (--max-model-len
// auto) and is planned by release; an engine that does not answer (Base,
// none, nil) takes the unmeasured speed model.
func TestOptionalQuestions(t *testing.T) {
	lookup := func(name string) Engine {
		e, ok := Lookup(name)
		require.True(t, ok, name)
		return e
	}
	v, l, s, n := lookup(NameVLLM), lookup(NameLlamaCPP), lookup(NameSGLang), lookup(NameNone)
	assert.Equal(t, SpeedServing, SpeedModelOf(v))
	assert.Equal(t, SpeedKernels, SpeedModelOf(l))
	assert.Equal(t, SpeedServing, SpeedModelOf(s))
	assert.Equal(t, SpeedUnmeasured, SpeedModelOf(n))
	assert.Equal(t, SpeedUnmeasured, SpeedModelOf(nil))
	assert.Equal(t, SpeedUnmeasured, SpeedModelOf(named{name: "extra"}), "Base answers nothing")
	// Each serving engine names the calibration set of its own runs.
	assert.Equal(t, calibration.ServingFitVLLM, ServingFitOf(v))
	assert.Equal(t, calibration.ServingFitSGLang, ServingFitOf(s))
	assert.Equal(t, calibration.ServingFit(""), ServingFitOf(l))
	assert.Equal(t, calibration.ServingFit(""), ServingFitOf(nil))
	assert.Equal(t, calibration.ServingFit(""), ServingFitOf(named{name: "extra"}), "Base names none")

	for _, e := range []Engine{v, l, s, n} {
		_, fits := e.(ContextFitter)
		_, versioned := e.(Versioned)
		assert.Equal(t, e == v, fits, e.Name())
		assert.Equal(t, e == v, versioned, e.Name())
	}
	assert.Contains(t, v.(ContextFitter).ContextFitNote(), "--max-model-len auto")
	assert.Equal(t, VLLMDefaultVersion, v.(Versioned).DefaultVersion())
}
