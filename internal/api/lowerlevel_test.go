package api

import (
	"context"
	"strings"
	"testing"

	json "github.com/goccy/go-json"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fixtureAnswer asks entry (PlanSharding or SuggestQuant) on a fixture
// machine and decodes the answer's fits, quant and explanation.
func fixtureAnswer(t *testing.T, entry func(context.Context, []byte, Env) []byte, machine, request string) (fits bool, quant string, explanation []string) {
	t.Helper()
	detect := fixtureDetect(t, machine)
	out := entry(context.Background(), []byte(request[:len(request)-1]+`,"detect":`+detect+`}`), NoEnv)
	var a struct {
		Fits        bool     `json:"fits"`
		Quant       string   `json:"quant"`
		Explanation []string `json:"explanation"`
	}
	require.NoError(t, json.Unmarshal(out, &a), "%s", out)
	return a.Fits, a.Quant, a.Explanation
}

// lowerLevelLine is the explanation's line naming a lower GGUF type that
// fits, or "".
func lowerLevelLine(lines []string) string { return lineWith(lines, "fits it at a lower level") }

// lineWith is the first of lines that holds part, or "".
func lineWith(lines []string, part string) string {
	for _, l := range lines {
		if strings.Contains(l, part) {
			return l
		}
	}
	return ""
}

// On a DGX Spark llama.cpp is the default engine and int4 is sized as the
// Q4_K_M file (132.3 GiB for Qwen3-235B-A22B), which the 118.8 GiB GPU does
// not hold: the answer was a bare refusal, while the same request with
// "engine": "llama.cpp" (quant auto walks the GGUF ladder) fits. A user
// asking "what fits" was told nothing does. The refusal now names a lower
// GGUF type that fits, as a refusal names another engine that fits
// (otherengine.go): the one that engine's own plan under quant auto
// chooses, so the line and the plan it points to agree.
func TestDefaultLlamaCPPRefusalNamesLowerGGUFThatFits(t *testing.T) {
	const machine = "dgx-spark-gb10"
	fits, _, expl := fixtureAnswer(t, PlanSharding, machine, `{"model":{"name":"Qwen3-235B-A22B"}}`)
	require.False(t, fits, "Q4_K_M does not fit: %q", expl)
	line := lowerLevelLine(expl)
	require.NotEmpty(t, line, "%q", expl)

	// llama.cpp's own auto plans q2_k, the best type that fits with a
	// published file (unsloth's Q2_K; no Q3_K_M is published), which the
	// ladder otherwise leaves out (larger than iq2_m on this shape,
	// keepDropped). The line named q3_k_m, the highest lower type
	// that fits, whose plan has no command; it names q2_k now, and says
	// q3_k_m fits without a published file.
	namedFits, autoQuant, _ := fixtureAnswer(t, PlanSharding, machine, `{"model":{"name":"Qwen3-235B-A22B"},"engine":"llama.cpp"}`)
	require.True(t, namedFits)
	assert.Equal(t, "q2_k", autoQuant, "llama.cpp's own auto")
	namedQuant := autoQuant
	assert.Contains(t, line, "engine llama.cpp fits it at a lower level: "+namedQuant+" on cuda:0")
	assert.Contains(t, line, `"quant": "`+namedQuant+`"`)
	assert.Contains(t, line, `plan it with "engine": "llama.cpp" and "quant": "`+namedQuant+`"`, "the library's answer keeps the request's spelling; the CLI rewrites it (internal/cli OptionWords)")
	assert.NotContains(t, line, "--quant")
	assert.Contains(t, line, "mean KL divergence 0.332 to FP16 on Llama-3-8B, against 0.0282 for q4_k_m", "the line says what the lower type costs in quality")
	assert.Contains(t, line, "; q3_k_m also fits but no published file runs it;")

	// The level the line names, asked with no engine, fits as it says.
	lowFits, lowQuant, _ := fixtureAnswer(t, PlanSharding, machine, `{"model":{"name":"Qwen3-235B-A22B"},"quant":"`+namedQuant+`"}`)
	assert.True(t, lowFits)
	assert.Equal(t, namedQuant, lowQuant)

	// suggest says the same.
	sFits, _, sExpl := fixtureAnswer(t, SuggestQuant, machine, `{"model":{"name":"Qwen3-235B-A22B"}}`)
	require.False(t, sFits)
	assert.Equal(t, line, lowerLevelLine(sExpl))

	// A level the request named is its answer: no lower one is offered.
	_, _, expl = fixtureAnswer(t, PlanSharding, machine, `{"model":{"name":"Qwen3-235B-A22B"},"quant":"int4"}`)
	assert.Empty(t, lowerLevelLine(expl))

	// Llama-3.1-405B fits there only at iq2_xs, a type whose quality loss
	// the plan itself warns of (lowQualityNote): the refusal does not
	// point to it.
	_, namedQuant, _ = fixtureAnswer(t, PlanSharding, machine, `{"model":{"name":"Llama-3.1-405B"},"engine":"llama.cpp"}`)
	require.Equal(t, "iq2_xs", namedQuant)
	fits, _, expl = fixtureAnswer(t, PlanSharding, machine, `{"model":{"name":"Llama-3.1-405B"}}`)
	require.False(t, fits)
	assert.Empty(t, lowerLevelLine(expl), "%q", expl)
}
