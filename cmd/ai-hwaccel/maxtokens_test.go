package main

import (
	"regexp"
	"strconv"
	"strings"
	"testing"

	json "github.com/goccy/go-json"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// kTokens reads a token count as --context reads it ("39k" is 39 x 1024).
func kTokens(t *testing.T, s string) float64 {
	t.Helper()
	n, err := strconv.Atoi(strings.TrimSuffix(s, "k"))
	require.NoError(t, err, s)
	if strings.HasSuffix(s, "k") {
		return float64(n) * 1024
	}
	return float64(n)
}

// A maximum the text prints in k (the headline's "up to 7k fits", the
// fit table's CONTEXT) was rounded to the nearest 1024 tokens, so it could
// name a context that does not fit: a Q5_K_M Qwen3-235B-A22B offloaded
// with llama.cpp on the h200-vm fixture holds 6667 tokens and the headline
// said "up to 7k fits" (7168); fit said 40k (40960) for
// Qwen3-235B-A22B-Thinking-2507, whose plan holds 40624. Pasted back as
// --context (the CLI reads "7k" as 7168, docs/cli.md), such a figure is
// refused. A maximum now rounds down.
func TestPrintedMaximaDoNotRoundUp(t *testing.T) {
	ans, headline := planBoth(t, "h200-vm", "--model", "Qwen3-235B-A22B", "--quant", "q5_k_m", "--engine", "llama.cpp", "--cpu-offload")
	longest := ans["max_context_length"].(float64)
	m := regexp.MustCompile(`\(up to (\d+k?) fits\)`).FindStringSubmatch(headline)
	require.NotNil(t, m, headline)
	assert.LessOrEqual(t, kTokens(t, m[1]), longest, headline)
	assert.Greater(t, kTokens(t, m[1])+1024, longest, "within 1024 tokens of it: %s", headline)

	const model = "Qwen3-235B-A22B-Thinking-2507"
	var rows []struct {
		Model            string  `json:"model"`
		MaxContextLength float64 `json:"max_context_length"`
	}
	j := runCLI(t, withFixture(t, "h200-vm", "fit", "--filter", model, "--json")...)
	require.Equal(t, 0, j.code, j.stderr)
	require.NoError(t, json.Unmarshal([]byte(j.stdout), &rows))
	text := runCLI(t, withFixture(t, "h200-vm", "fit", "--filter", model)...)
	require.Equal(t, 0, text.code, text.stderr)
	for _, r := range rows {
		if r.Model != model {
			continue
		}
		var row string
		for _, line := range strings.Split(text.stdout, "\n") {
			if strings.HasPrefix(line, model+" ") {
				row = line
			}
		}
		f := strings.Fields(row)
		require.GreaterOrEqual(t, len(f), 8, row)
		ctx := f[len(f)-2] // CONTEXT, before TOKENS/S
		assert.LessOrEqual(t, kTokens(t, ctx), r.MaxContextLength, "%s (max_context_length %v)", row, r.MaxContextLength)
		return
	}
	t.Fatalf("no fit row for %s: %s", model, j.stdout)
}
