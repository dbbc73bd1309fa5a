package api

import (
	"context"
	"strings"
	"testing"

	json "github.com/goccy/go-json"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fixtureLoad is the load an answer of PlanSharding on a fixture machine
// names for engine.
func fixtureLoad(t *testing.T, machine, request, engine string) (repo, ggufType, needs string) {
	t.Helper()
	detect := fixtureDetect(t, machine)
	out := PlanSharding(context.Background(), []byte(request[:len(request)-1]+`,"detect":`+detect+`}`), NoEnv)
	var a struct {
		Load map[string]struct {
			Repo     string `json:"repo"`
			GGUFType string `json:"gguf_type"`
			Needs    string `json:"needs"`
		} `json:"load"`
	}
	require.NoError(t, json.Unmarshal(out, &a), "%s", out)
	ld := a.Load[engine]
	return ld.Repo, ld.GGUFType, ld.Needs
}

// publishedEngineLine is the explanation's line naming another engine that
// runs a published checkpoint, or "".
func publishedEngineLine(lines []string) string {
	return lineWith(lines, "no published checkpoint runs it under ")
}

// On a DGX H100 DeepSeek-R1 fits vLLM (the default engine) only at int4,
// of which no checkpoint is published, and its native FP8 does not fit: the
// plan had no command and did not say that llama.cpp runs a published GGUF
// of it on the same GPUs. The plan now names that engine, the file its
// command loads (the one "engine": "llama.cpp" plans) and its devices;
// suggest says the same.
func TestPlanWithoutPublishedCheckpointNamesAnEngineThatRunsOne(t *testing.T) {
	const machine = "dgx-h100"
	fits, q, expl := fixtureAnswer(t, PlanSharding, machine, `{"model":{"name":"DeepSeek-R1"}}`)
	require.True(t, fits)
	require.Equal(t, "int4", q)
	_, _, needs := fixtureLoad(t, machine, `{"model":{"name":"DeepSeek-R1"}}`, "vllm")
	require.NotEmpty(t, needs, "no published int4 checkpoint: no command")
	line := publishedEngineLine(expl)
	require.NotEmpty(t, line, "%q", expl)

	const named = `{"model":{"name":"DeepSeek-R1"},"engine":"llama.cpp"}`
	namedFits, namedQuant, _ := fixtureAnswer(t, PlanSharding, machine, named)
	require.True(t, namedFits)
	repo, ggufType, namedNeeds := fixtureLoad(t, machine, named, "llama.cpp")
	require.NotEmpty(t, repo, "llama.cpp's plan runs a published file")
	require.Empty(t, namedNeeds)
	assert.Equal(t, strings.ToUpper(namedQuant), ggufType)
	assert.True(t, strings.HasPrefix(line, "no published checkpoint runs it under vLLM; engine llama.cpp runs "+repo+":"+ggufType+" on cuda:0, "), line)
	assert.True(t, strings.HasSuffix(line, `; plan it with "engine": "llama.cpp"`), line)

	sFits, sQuant, sExpl := fixtureAnswer(t, SuggestQuant, machine, `{"model":{"name":"DeepSeek-R1"}}`)
	require.True(t, sFits)
	assert.Equal(t, q, sQuant)
	assert.Equal(t, line, publishedEngineLine(sExpl))

	// An engine the request named is its answer: no other is offered.
	_, _, expl = fixtureAnswer(t, PlanSharding, machine, `{"model":{"name":"DeepSeek-R1"},"engine":"vllm"}`)
	assert.Empty(t, publishedEngineLine(expl))
	// Nor where a published checkpoint runs the plan (Llama-3.1-8B's
	// BF16 under vLLM).
	_, _, expl = fixtureAnswer(t, PlanSharding, machine, `{"model":{"name":"Llama-3.1-8B"}}`)
	assert.Empty(t, publishedEngineLine(expl))
}
