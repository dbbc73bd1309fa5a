package main

import (
	"strings"
	"testing"

	json "github.com/goccy/go-json"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/model"
	"github.com/ai-hwaccel/ai-hwaccel/internal/quant"
)

// publishedGGUF is, for each level a GGUF of the catalog model name is
// published at, its -hf argument's repository:type (as the catalog lists
// them today, so that GGUF types added to the catalog move the
// expectation with them).
func publishedGGUF(t *testing.T, name string) map[string]string {
	m := model.Lookup(name)
	require.NotNil(t, m, name)
	out := map[string]string{}
	for _, ck := range m.Checkpoints {
		l, err := quant.Parse(ck.Quant)
		if ck.IsGGUF() && err == nil {
			if _, seen := out[string(l)]; !seen {
				out[string(l)] = ck.Repo + ":" + l.GGUFType()
			}
		}
	}
	return out
}

// Qwen3-8B under llama.cpp with quant auto takes the best level that fits
// and a published GGUF runs, and prints its command: on the Slimbook's
// 8 GB RTX 4060 it took q5_k_m, which fits and of which Qwen/Qwen3-8B-GGUF
// publishes no file, and printed "no command"; on a DGX H100 bf16, of
// which no GGUF is published, where Q8_0 fits. The level the plan passed
// over is named with its memory and how to get it. fit and suggest
// agree with the plan.
func TestAutoTakesAPublishedGGUFOnFixtures(t *testing.T) {
	published := publishedGGUF(t, "Qwen3-8B")
	require.NotEmpty(t, published)
	for _, c := range []struct{ fixture, passedOver, maker string }{
		{"slimbook-hero-rtx4060-igpu", "q5_k_m", "llama-quantize"},
		{"dgx-h100", "bf16", "convert_hf_to_gguf.py"},
	} {
		args := []string{"plan", "--model", "Qwen3-8B", "--engine", "llama.cpp"}
		obj, _ := runJSON(t, withFixture(t, c.fixture, append(args, "--json")...)...)
		require.Equal(t, true, obj["fits"], c.fixture)
		chosen, _ := obj["quant"].(string)
		// The chosen level is the best fitting row with a published GGUF.
		want := ""
		for _, row := range obj["levels"].([]any) {
			r := row.(map[string]any)
			if _, ok := published[r["quant"].(string)]; ok && r["fits"] == true {
				want = r["quant"].(string)
				break
			}
		}
		require.NotEmpty(t, want, c.fixture)
		assert.Equal(t, want, chosen, c.fixture)

		r := runCLI(t, withFixture(t, c.fixture, args...)...)
		require.Equal(t, 0, r.code, r.stderr)
		cmds := printedCommands(r.stdout)
		require.NotEmpty(t, cmds, c.fixture)
		assert.Contains(t, cmds[0], "llama-server -hf "+published[chosen]+" ", c.fixture)
		assert.NotContains(t, r.stdout, "no command", c.fixture)
		if _, ok := published[c.passedOver]; !ok {
			assert.Regexp(t, `published: `+c.passedOver+` \([0-9.]+ GiB at a context of [0-9]+ tokens\) also fits but no published `+
				strings.ToUpper(c.passedOver)+` GGUF of this model is known; --quant `+c.passedOver+` plans it \(`+c.maker+` writes the file\)`, r.stdout, c.fixture)
		}

		// An explicit level is planned as asked, with no command.
		if _, ok := published[c.passedOver]; !ok {
			r = runCLI(t, withFixture(t, c.fixture, append(args, "--quant", c.passedOver)...)...)
			require.Equal(t, 0, r.code, r.stderr)
			assert.Contains(t, strings.SplitN(r.stdout, "\n", 2)[0], c.passedOver+", ", c.fixture)
			assert.Contains(t, r.stdout, "no command: no published "+strings.ToUpper(c.passedOver)+" GGUF", c.fixture)
		}

		// fit's row and suggest take the same level.
		fr := runCLI(t, withFixture(t, c.fixture, "fit", "--engine", "llama.cpp", "--filter", "Qwen3-8B", "--json")...)
		require.Equal(t, 0, fr.code, fr.stderr)
		var rows []map[string]any
		require.NoError(t, json.Unmarshal([]byte(fr.stdout), &rows))
		found := false
		for _, row := range rows {
			if row["model"] == "Qwen3-8B" {
				found = true
				assert.Equal(t, chosen, row["quant"], c.fixture)
				assert.Nil(t, row["no_command"], c.fixture)
			}
		}
		assert.True(t, found, c.fixture)
		sg, _ := runJSON(t, withFixture(t, c.fixture, "suggest", "--model", "Qwen3-8B", "--engine", "llama.cpp", "--json")...)
		assert.Equal(t, chosen, sg["quant"], c.fixture)
	}
}
