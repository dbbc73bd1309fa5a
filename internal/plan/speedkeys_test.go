package plan

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/engine"
	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// ownServer is a made-up serving engine that declares the serving speed
// model and names no calibration set its constants were fitted on: no
// published run of it was ever fitted.
type ownServer struct {
	engine.Base
	speed engine.SpeedModel
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

// A serving engine's fitted constants were picked by its speed model, so
// a second engine declaring SGLang's model paid SGLang's constants and
// spoke SGLang's validation words, one declaring vLLM's paid vLLM's: a
// figure fitted on one engine's runs shown for another. An engine now
// names the calibration set it was fitted on (engine.ServingFitted); one
// that names none pays no engine's fitted constants, and its validated_on
// says why, in its own name.
func TestServingConstantsAreTheEnginesOwn(t *testing.T) {
	for _, speed := range []engine.SpeedModel{engine.SpeedServing} {
		e := ownServer{speed: speed}
		engine.Register(e)
		const body = `{"model":{"name":"Qwen3-8B"},"engine":"ownserve","quant":"bf16"}`
		a := shard(t, request(t, body, reg(t, []registry.Device{h100(0)})))
		engine.Unregister(e.Name())
		require.True(t, a.Fits.Yes(), dump(t, a))
		require.NotNil(t, a.Throughput, dump(t, a))
		text := strings.Join(append(a.Throughput.Assumptions, a.Throughput.ValidatedOn, a.Throughput.PrefillValidatedOn), "\n")
		for _, foreign := range []string{"SGLang", "vLLM", "serving_decode.json"} {
			assert.NotContains(t, text, foreign, speed)
		}
		assert.True(t, strings.HasPrefix(a.Throughput.ValidatedOn, NotValidated+": OwnServe names no calibration set"), a.Throughput.ValidatedOn)
	}
}
