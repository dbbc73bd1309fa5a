package plan

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/calibration"
	"github.com/ai-hwaccel/ai-hwaccel/internal/engine"
	"github.com/ai-hwaccel/ai-hwaccel/internal/model"
	"github.com/ai-hwaccel/ai-hwaccel/internal/modelio"
	"github.com/ai-hwaccel/ai-hwaccel/internal/quant"
	"github.com/ai-hwaccel/ai-hwaccel/internal/specs"
)

// TestVLLMValidatedOnNamesItsRows: a vLLM plan on GPUs, which pays vLLM's
// fitted constants, says in validated_on what they are fitted on and
// checked by (the vLLM rows of serving_decode.json, the out-of-sample
// median and p90 of their leave-one-source-out cross-validation) and
// stays not validated; it no longer says the model is llama.cpp's.
func TestVLLMValidatedOnNamesItsRows(t *testing.T) {
	m, err := modelio.Resolve(model.Spec{Name: "Llama-3.1-70B"})
	require.NoError(t, err)
	s, ok := specs.ByName("NVIDIA H100 SXM5 80GB")
	require.True(t, ok)
	r := NewServingReplay(engine.NameVLLM, m, quant.Level("bf16"), s, 4, 1024)
	require.True(t, efficiency(fitted).servingUsed(planEngine(r.decodePlan, r.decodeReq), r.decodePlan))

	v, ok := validatedOn(r.decodePlan, r.decodeReq)
	assert.False(t, ok)
	assert.True(t, strings.HasPrefix(v, NotValidated), v)
	assert.Contains(t, v, "vLLM's constants")
	assert.Contains(t, v, "serving_decode.json")
	assert.Contains(t, v, "leave-one-source-out")
	assert.Contains(t, v, calibration.VLLMOutOfSample)
	assert.NotContains(t, v, "fitted on llama.cpp")
}

// TestHBMQ8IsNotValidated: a llama.cpp plan of Q8_0 weights on one H200
// is not validated and quotes the held-out H200 Q8_0 records that miss
// (HBMQ8Check), while the k-quant plan on the same GPU stays validated.
func TestHBMQ8IsNotValidated(t *testing.T) {
	m, err := modelio.Resolve(model.Spec{Name: "Llama-3.1-8B"})
	require.NoError(t, err)
	s, ok := specs.ByName("NVIDIA H200 SXM 141GB")
	require.True(t, ok)
	q8 := NewReplay(engine.NameLlamaCPP, m, quant.Level("q8_0"), s, 1, 0, 64)
	v, ok := validatedOn(q8.decodePlan, q8.decodeReq)
	assert.False(t, ok)
	assert.True(t, strings.HasPrefix(v, NotValidated), v)
	assert.Contains(t, v, HBMQ8Records+" of llama.cpp 34af94cd "+HBMQ8Check)
	k := NewReplay(engine.NameLlamaCPP, m, quant.Level("q4_k_m"), s, 1, 0, 64)
	v, ok = validatedOn(k.decodePlan, k.decodeReq)
	assert.True(t, ok, v)
}
