package model

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestIgnoredMatchesAsTheLoadersDo: an ignore-list entry with "re:" is a
// regular expression matched from the start of the module name
// (compressed-tensors); any other matches a name that contains it (vLLM's
// is_layer_skipped_awq, transformers' modules_to_not_convert). The
// entries are those of the published configs in
// internal/modelio/testdata/configs.
func TestIgnoredMatchesAsTheLoadersDo(t *testing.T) {
	kimi := []string{"lm_head", "re:.*self_attn.*", "re:.*shared_experts.*", `re:.*mlp\.(gate|up|gate_up|down)_proj.*`}
	assert.True(t, ignored(kimi, "language_model.lm_head"))
	assert.True(t, ignored(kimi, "language_model.model.layers.3.self_attn.kv_b_proj"))
	assert.True(t, ignored(kimi, "language_model.model.layers.3.mlp.shared_experts.down_proj"))
	assert.True(t, ignored(kimi, "language_model.model.layers.0.mlp.gate_proj"))
	assert.False(t, ignored(kimi, "language_model.model.layers.3.mlp.experts.17.gate_proj"))

	laguna := []string{`re:.*\.self_attn\.q_proj$`, `re:.*\.mlp\.gate$`}
	assert.True(t, ignored(laguna, "model.layers.1.self_attn.q_proj"))
	assert.False(t, ignored(laguna, "model.layers.1.self_attn.q_proj.weight"), "$ anchors the end")
	assert.True(t, ignored(laguna, "model.layers.1.mlp.gate"))
	assert.False(t, ignored(laguna, "model.layers.1.mlp.gate_proj"))
	assert.False(t, ignored([]string{`re:self_attn`}, "model.layers.1.self_attn.q_proj"), "re.match anchors the start")

	// modules_to_not_convert: a name that contains the entry.
	assert.True(t, ignored([]string{"model.layers.0.mlp.gate"}, "model.layers.0.mlp.gate_proj"))
	assert.False(t, ignored([]string{"model.layers.0.mlp.gate"}, "model.layers.1.mlp.gate_proj"))
	assert.False(t, ignored([]string{"", "re:("}, "lm_head"), "an empty entry or a bad expression matches nothing")
}

// TestQuantizedExceptNeedsEveryName: a part is left out only when the
// ignore list matches all its module names: Qwen3-30B-A3B-FP8 lists each
// layer's router (mlp.gate), which is no part, and its dense-MLP name
// mlp.gate_proj contains "model.layers.0.mlp.gate", but not up_proj or
// down_proj.
func TestQuantizedExceptNeedsEveryName(t *testing.T) {
	qwen := []string{"lm_head", "model.layers.0.input_layernorm", "model.layers.0.mlp.gate", "model.layers.1.mlp.gate"}
	assert.Equal(t, []string{PartAttention, PartDenseMLP, PartSharedExperts, PartRoutedExperts, PartMixer}, quantizedExcept(qwen, false))
	assert.Equal(t, []string{PartAttention, PartDenseMLP, PartSharedExperts, PartRoutedExperts, PartMixer, PartHead}, quantizedExcept(nil, true))
	lagunaS := []string{"lm_head", "model.layers.0.mlp.gate_proj", "model.layers.0.mlp.up_proj", "model.layers.0.mlp.down_proj",
		`re:.*\.mlp\.shared_expert\.gate_proj$`, `re:.*\.mlp\.shared_expert\.up_proj$`, `re:.*\.mlp\.shared_expert\.down_proj$`}
	assert.Equal(t, []string{PartAttention, PartRoutedExperts, PartMixer}, quantizedExcept(lagunaS, true))
}
