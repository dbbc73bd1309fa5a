package plan

import (
	"os"
	"strings"
	"testing"

	json "github.com/goccy/go-json"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// h200Detected is the h200-vm fixture's detected registry (its golden
// detect answer): one H200, where vLLM is the default engine.
func h200Detected(t *testing.T) *registry.Registry {
	b, err := os.ReadFile("../../testdata/golden/h200-vm.json")
	require.NoError(t, err)
	var golden struct {
		Detect registry.Registry `json:"detect"`
	}
	require.NoError(t, json.Unmarshal(b, &golden))
	return &golden.Detect
}

func explanationBudgetLines(a *ShardingAnswer) []string {
	var out []string
	for _, l := range a.Explanation {
		if strings.HasPrefix(l, "budget: ") {
			out = append(out, l)
		}
	}
	return out
}

// A GGUF request with no engine named makes llama.cpp the engine on an
// H200, whose default is vLLM; the budget said "llama.cpp, the default for
// cuda_gpu devices", which it is not. It says now what chose it.
func TestGGUFRequestBudgetSaysWhatChoseLlamaCpp(t *testing.T) {
	for body, why := range map[string]string{
		`{"model":{"name":"Llama-3.1-8B"},"quant":"q4_k_m"}`:        "chosen for the GGUF quant q4_k_m over vllm, the default for cuda_gpu devices,",
		`{"model":{"name":"ggml-org/gemma-3-27b-it-GGUF"}}`:         "chosen for the GGUF repository ggml-org/gemma-3-27b-it-GGUF over vllm, the default for cuda_gpu devices,",
		`{"model":{"name":"Llama-3.1-8B"},"kv_cache_dtype":"q8_0"}`: "chosen for the cache type q8_0 over vllm, the default for cuda_gpu devices,",
	} {
		a := shard(t, request(t, body, h200Detected(t)))
		require.NotNil(t, a.Budget, body)
		assert.Equal(t, "llama.cpp", a.Budget.Engine, body)
		assert.True(t, a.Budget.EngineDefault, body)
		assert.Equal(t, why[len("chosen for "):strings.Index(why, " over ")], a.Budget.EngineChosenFor, "the wire says what chose the engine, not only the text")
		assert.Contains(t, a.Budget.Source, "no engine named: llama.cpp, "+why, body)
		assert.NotContains(t, a.Budget.Source, "llama.cpp, the default for", body)
		lines := explanationBudgetLines(a)
		require.Len(t, lines, 1, body)
		assert.Contains(t, lines[0], why, body)
	}

	// Where llama.cpp is the default anyway (a P40 alone, below vLLM's
	// compute capability floor), the GGUF quant chose nothing: the line
	// stays.
	r := h200WithP40(t)
	kept := r.Devices[:0]
	for _, d := range r.Devices {
		if d.ID != "cuda:0" {
			kept = append(kept, d)
		}
	}
	r.Devices = kept
	a := shard(t, request(t, `{"model":{"name":"Llama-3.1-8B"},"quant":"q4_k_m"}`, r))
	lines := explanationBudgetLines(a)
	require.Len(t, lines, 1)
	assert.Contains(t, lines[0], "no engine named: llama.cpp, the default for cuda_gpu devices,")
	assert.NotContains(t, lines[0], "chosen for")
	assert.Empty(t, a.Budget.EngineChosenFor)
}
