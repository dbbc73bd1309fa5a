package cli

import (
	"bytes"
	"strings"
	"testing"

	json "github.com/goccy/go-json"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/plan"
	"github.com/ai-hwaccel/ai-hwaccel/internal/rent"
)

// A rent answer whose cheapest choice fits only at a GGUF type nobody
// publishes (Qwen3-Coder-480B-A35B-Instruct on one H200: iq2_xxs) and whose
// next one runs a published file (q2_k on a B200): the text said "no
// command" under the headline only, and the ranking listed both alike.
// Every ranked choice without a command now says so, and the best one
// whose command runs as printed is named.
func TestRentSaysWhichChoicesHaveNoCommand(t *testing.T) {
	price, tps := 4.59, 128.0
	a := rent.Answer{Model: "Qwen3-Coder-480B-A35B-Instruct", Sort: rent.SortCost, NotFit: []rent.Rejected{}, Warnings: []string{},
		Choices: []rent.Choice{
			{Provider: "runpod", Type: "1x H200", Accelerator: "NVIDIA H200 SXM 141GB", Count: 1, Nodes: 1, PricePerHour: &price, DecodeTokensPerS: &tps,
				Strategy: "none", Quant: "iq2_xxs", TPSize: 1, PPSize: 1, Engine: "llama.cpp", EngineArgs: []string{"-ngl", "63"},
				Load:      &plan.Load{GGUFType: "IQ2_XXS"},
				NoCommand: "no published IQ2_XXS GGUF of this model is known; give its file to get the command"},
			{Provider: "runpod", Type: "1x B200", Accelerator: "NVIDIA B200 SXM", Count: 1, Nodes: 1, PricePerHour: &price, DecodeTokensPerS: &tps,
				Strategy: "none", Quant: "q2_k", TPSize: 1, PPSize: 1, Engine: "llama.cpp", EngineArgs: []string{"-ngl", "63"},
				Load: &plan.Load{Repo: "unsloth/Qwen3-Coder-480B-A35B-Instruct-GGUF", GGUFType: "Q2_K", File: "Q2_K"}},
		}}
	b, err := json.Marshal(a)
	require.NoError(t, err)
	var out bytes.Buffer
	require.NoError(t, WriteRent(&out, b, AnswerInfo{}))
	text := out.String()
	assert.Contains(t, text, "  no command: no published IQ2_XXS GGUF of this model is known")
	assert.Contains(t, text, "  The best choice whose command runs as printed: 2. runpod 1x B200 (1 x NVIDIA B200 SXM), q2_k:\n  llama-server -hf unsloth/Qwen3-Coder-480B-A35B-Instruct-GGUF:Q2_K -ngl 63\n")
	var ranked []string
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(l, "   1. ") || strings.HasPrefix(l, "   2. ") {
			ranked = append(ranked, l)
		}
	}
	require.Len(t, ranked, 2, text)
	assert.True(t, strings.HasSuffix(ranked[0], "; iq2_xxs, one device; no command: no published IQ2_XXS GGUF of this model is known; give its file to get the command"), ranked[0])
	assert.True(t, strings.HasSuffix(ranked[1], "; q2_k, one device"), ranked[1])
}
