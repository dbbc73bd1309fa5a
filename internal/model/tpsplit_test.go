package model

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The FFN widths tensor parallelism splits, as the models' config.json
// files state them: Qwen3-30B-A3B's experts (moe_intermediate_size 768;
// its intermediate_size 6144 is no layer's, every layer routes),
// MiniMax-M2.5's (intermediate_size 1536, no moe_intermediate_size),
// DeepSeek-V3's three dense layers (18432), experts (2048) and one shared
// expert of the experts' width, Qwen3-Next's shared expert
// (shared_expert_intermediate_size 512, the experts' 512 too), a dense
// model's intermediate_size.
func TestTPSplitWidths(t *testing.T) {
	for name, want := range map[string][]int{
		"Qwen3-30B-A3B":               {768},
		"MiniMax-M2.5":                {1536},
		"DeepSeek-V3":                 {18432, 2048},
		"Qwen3-Next-80B-A3B-Instruct": {512},
		"Qwen3-8B":                    {12288},
	} {
		m := Lookup(name)
		require.NotNil(t, m, name)
		assert.ElementsMatch(t, want, m.TPSplitWidths(), name)
	}
}
