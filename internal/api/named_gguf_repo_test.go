package api

import (
	"context"
	"testing"

	json "github.com/goccy/go-json"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// namedRepoPlan is the plan of model on a fixture machine, with engine
// when not "": whether it fits, its level, its budget's engine and what
// that engine loads.
func namedRepoPlan(t *testing.T, machine, model, engine string) (fits bool, quant, eng, repo string) {
	t.Helper()
	in := `{"model":"` + model + `","detect":` + fixtureDetect(t, machine)
	if engine != "" {
		in += `,"engine":"` + engine + `"`
	}
	out := PlanSharding(context.Background(), []byte(in+`}`), NoEnv)
	var a struct {
		Fits   bool   `json:"fits"`
		Quant  string `json:"quant"`
		Budget struct {
			Engine string `json:"engine"`
		} `json:"budget"`
		Load map[string]struct {
			Repo string `json:"repo"`
		} `json:"load"`
	}
	require.NoError(t, json.Unmarshal(out, &a), "%s", out)
	return a.Fits, a.Quant, a.Budget.Engine, a.Load[a.Budget.Engine].Repo
}

// TestGGUFRepositoryNamedIsLoaded: a GGUF repository named as the model is
// the repository loaded. Qwen/Qwen3-8B-GGUF (Qwen's own) and
// unsloth/Qwen3-8B-GGUF share a name, so naming either named neither: a
// llama.cpp plan of Qwen/Qwen3-8B-GGUF loaded unsloth's BF16 file on an
// H200 (Q5_K_M on an 8 GB RTX 4060), not one of Qwen's Q8_0 and Q4_K_M.
func TestGGUFRepositoryNamedIsLoaded(t *testing.T) {
	for _, c := range []struct{ machine, model, quant string }{
		{"h200-vm", "Qwen/Qwen3-8B-GGUF", "q8_0"},
		{"slimbook-hero-rtx4060-igpu", "Qwen/Qwen3-8B-GGUF", "q4_k_m"},
		{"h200-vm", "unsloth/Qwen3-8B-GGUF", "bf16"},
	} {
		fits, quant, eng, repo := namedRepoPlan(t, c.machine, c.model, "llama.cpp")
		assert.True(t, fits, "%s on %s", c.model, c.machine)
		assert.Equal(t, c.quant, quant, "%s on %s", c.model, c.machine)
		assert.Equal(t, "llama.cpp", eng)
		assert.Equal(t, c.model, repo, "%s on %s loads the repository named", c.model, c.machine)
	}
}

// TestGGUFRepositoryNamedChoosesLlamaCPP: with no engine named, a GGUF
// repository named as the model is planned for llama.cpp, as a GGUF file or
// quant is (docs/requests.md, engine: "llama.cpp ... for any GGUF model or
// quant"). The default engine of an H200, vLLM, loads no GGUF type: the
// answer was "fits": false, "vLLM does not plan GGUF types", for a model
// llama.cpp holds at Q8_0 with 100 GiB to spare.
func TestGGUFRepositoryNamedChoosesLlamaCPP(t *testing.T) {
	for _, model := range []string{"ggml-org/gemma-3-27b-it-GGUF", "Qwen/Qwen3-8B-GGUF"} {
		named, namedQuant, _, namedRepo := namedRepoPlan(t, "h200-vm", model, "llama.cpp")
		fits, quant, eng, repo := namedRepoPlan(t, "h200-vm", model, "")
		require.True(t, named, model)
		assert.True(t, fits, model)
		assert.Equal(t, "llama.cpp", eng, model)
		assert.Equal(t, namedQuant, quant, model)
		assert.Equal(t, namedRepo, repo, model)
	}
	// Named with vLLM, the repository still plans its release's Hugging
	// Face checkpoint (docs/requests.md, quant).
	fits, quant, eng, repo := namedRepoPlan(t, "h200-vm", "ggml-org/gemma-3-27b-it-GGUF", "vllm")
	assert.True(t, fits)
	assert.Equal(t, "bf16", quant)
	assert.Equal(t, "vllm", eng)
	assert.Equal(t, "google/gemma-3-27b-it", repo)
}
