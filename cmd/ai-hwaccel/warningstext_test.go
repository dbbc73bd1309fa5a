package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/cli"
)

// A text plan hides no warning its JSON answer has: every member of
// warnings is printed under Warnings (in the CLI's words for options), and
// every engine_expect warning, which the text does not print, is one of
// them or joins several with "; " (vLLM's short pool and old release).
// Each engine on the h200-vm fixture and on the eight-GPU dgx-h100, with a
// request that draws a warning from it: vLLM's old release (in warnings
// and engine_expect.vllm), SGLang's fraction above its own default (in
// both), llama.cpp's release switch, an estimated shape under engine none
// and under the default engine.
func TestTextPlanShowsEveryJSONWarning(t *testing.T) {
	cases := [][]string{
		{"--model", "Qwen3-32B", "--engine", "vllm", "--engine-version", "0.5.0"},
		{"--model", "Qwen3-32B", "--engine", "sglang", "--memory-fraction", "0.95"},
		{"--model", "Llama-3.1-8B", "--engine", "llama.cpp", "--quant", "bf16"},
		{"--model", "70b", "--engine", "none"},
		{"--model", "70b"},
	}
	for _, fx := range []string{"h200-vm", "dgx-h100"} {
		for _, args := range cases {
			name := fx + " " + strings.Join(args, " ")
			obj, _ := runJSON(t, withFixture(t, fx, append(append([]string{"plan"}, args...), "--json")...)...)
			r := runCLI(t, withFixture(t, fx, append([]string{"plan"}, args...)...)...)
			require.Equal(t, 0, r.code, "%s: %s", name, r.stderr)
			_, printed, ok := strings.Cut(r.stdout, "\nWarnings:\n")
			require.True(t, ok, "%s: no Warnings section:\n%s", name, r.stdout)

			var warnings []string
			for _, w := range obj["warnings"].([]any) {
				warnings = append(warnings, w.(string))
			}
			require.NotEmpty(t, warnings, "%s: the request draws a warning", name)
			for _, w := range warnings {
				assert.Contains(t, printed, "  - "+cli.Text(cli.Plurals(cli.OptionWords.Replace(w))), "%s: warning not printed", name)
			}
			expect, _ := obj["engine_expect"].(map[string]any)
			for e, x := range expect {
				if w, _ := x.(map[string]any)["warning"].(string); w != "" {
					assert.True(t, joinsWarnings(w, warnings), "%s: engine_expect.%s.warning %q is not among the warnings %q", name, e, w, warnings)
				}
			}
		}
	}
}

// joinsWarnings reports whether w is one of warnings or several of them
// joined with "; ".
func joinsWarnings(w string, warnings []string) bool {
	for _, v := range warnings {
		if w == v {
			return true
		}
		if rest, ok := strings.CutPrefix(w, v+"; "); ok && joinsWarnings(rest, warnings) {
			return true
		}
	}
	return false
}
