package plan

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/calibration"
	"github.com/ai-hwaccel/ai-hwaccel/internal/engine"
	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// ownServer is a made-up serving engine that declares the serving speed
// model and names fit as the calibration set its constants were fitted on
// (engine.ServingFitted): none, as for an engine no published run of which
// was ever fitted, a set the planner does not hold, or SGLang's.
type ownServer struct {
	engine.Base
	speed engine.SpeedModel
	fit   calibration.ServingFit
}

func (ownServer) Name() string  { return "ownserve" }
func (ownServer) Title() string { return "OwnServe" }

func (ownServer) RunsOn(k registry.Kind) bool { return k == registry.KindCUDA }

func (ownServer) Memory(asked float64) engine.Memory {
	if asked == 0 {
		asked = 0.9
	}
	return engine.Memory{Fraction: asked, PagedKV: true}
}

func (ownServer) Args(*engine.Placement) ([]string, []string, bool) { return nil, nil, true }

func (s ownServer) SpeedModel() engine.SpeedModel { return s.speed }

func (s ownServer) ServingFit() calibration.ServingFit { return s.fit }

// A serving engine's fitted constants were picked by its speed model, so
// a second engine declaring SGLang's model paid SGLang's constants and
// spoke SGLang's validation words, one declaring vLLM's paid vLLM's: a
// figure fitted on one engine's runs shown for another. An engine now
// names the calibration set it was fitted on (engine.ServingFitted); one
// that names none, or a set the planner holds no constants for, pays no
// engine's fitted constants, and its validated_on says why, in its own
// name. One naming SGLang's set pays SGLang's (the set decides, not the
// speed model).
func TestServingConstantsAreTheEnginesOwn(t *testing.T) {
	plan := func(fit calibration.ServingFit) *Throughput {
		e := ownServer{speed: engine.SpeedServing, fit: fit}
		engine.Register(e)
		defer engine.Unregister(e.Name())
		const body = `{"model":{"name":"Qwen3-8B"},"engine":"ownserve","quant":"bf16"}`
		a := shard(t, request(t, body, reg(t, []registry.Device{h100(0)})))
		require.True(t, a.Fits.Yes(), dump(t, a))
		require.NotNil(t, a.Throughput, dump(t, a))
		return a.Throughput
	}
	words := func(tp *Throughput) string {
		return strings.Join(append(tp.Assumptions, tp.ValidatedOn, tp.PrefillValidatedOn), "\n")
	}
	for _, fit := range []calibration.ServingFit{"", "madeup"} {
		tp := plan(fit)
		for _, foreign := range []string{"SGLang", "vLLM", "serving_decode.json"} {
			assert.NotContains(t, words(tp), foreign, fit)
		}
		assert.True(t, strings.HasPrefix(tp.ValidatedOn, NotValidated+": OwnServe names no calibration set"), tp.ValidatedOn)
	}
	own := plan(calibration.ServingFitSGLang)
	assert.Contains(t, words(own), "at SGLang's fraction of memory bandwidth")
	assert.True(t, strings.HasPrefix(own.ValidatedOn, NotValidated+": SGLang's constants are fitted and checked on "), own.ValidatedOn)
}
