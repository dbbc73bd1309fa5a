package plan

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// suggest named a level whose plan prints no command without saying so:
// DeepSeek-R1 with --engine sglang on 8 H100s (testdata/machines/dgx-h100)
// answered "fits ... at int4 ...; plan it: ... --quant int4", while plan
// said "no command: needs a checkpoint of DeepSeek-R1 stored at int4
// (AWQ, GPTQ or compressed-tensors)" and fit marked the row "int4 (no
// checkpoint)". suggest's explanation now has plan's reason; a level a
// published checkpoint runs gets no such line.
func TestSuggestSaysItsLevelHasNoCommand(t *testing.T) {
	r := eightH100(t, true)
	body := `{"model":{"name":"DeepSeek-R1"},"engine":"sglang"}`
	s, err := SuggestQuant(request(t, body, r))
	require.NoError(t, err)
	require.True(t, s.Fits.Yes(), s.Explanation)
	p := shard(t, request(t, body, r))
	require.Equal(t, p.Quant, s.Quant)
	require.NotEmpty(t, p.Load["sglang"].Needs, "the plan withholds the command")
	text := strings.Join(s.Explanation, "\n")
	assert.Contains(t, text, "no command: a plan at "+s.Quant+" under SGLang prints none: it needs a checkpoint of DeepSeek-R1 stored at int4")

	ok, err := SuggestQuant(request(t, `{"model":{"name":"Llama-3.1-70B"},"engine":"sglang"}`, r))
	require.NoError(t, err)
	require.True(t, ok.Fits.Yes())
	assert.NotContains(t, strings.Join(ok.Explanation, "\n"), "no command:")
}
