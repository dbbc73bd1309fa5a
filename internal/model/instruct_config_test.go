package model

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// An instruction-tuned release's own config values sit over the entry's:
// Qwen/Qwen2.5-7B-Instruct's config.json says max_position_embeddings
// 32768 where Qwen/Qwen2.5-7B's says 131072 (the entry's instruct.config
// and its config_source); every other key is the entry's, held once.
func TestReleaseConfigOfTheInstructRelease(t *testing.T) {
	base, err := ReleaseConfig("Qwen/Qwen2.5-7B")
	require.NoError(t, err)
	assert.InDelta(t, 131072, base["max_position_embeddings"], 0)
	for _, name := range []string{"Qwen/Qwen2.5-7B-Instruct", "Qwen2.5-7B-Instruct", "qwen2.5:7b"} {
		cfg, err := ReleaseConfig(name)
		require.NoError(t, err, name)
		assert.InDelta(t, 32768, cfg["max_position_embeddings"], 0, name)
		for k, v := range base {
			if k != "max_position_embeddings" {
				assert.Equal(t, v, cfg[k], "%s: %s", name, k)
			}
		}
	}
	_, err = ReleaseConfig("no-such-model-anywhere")
	require.Error(t, err)
}

// A release value equal to the entry's, or one without its source, is
// refused: the fact would have two homes, or none a reader can open.
func TestInstructEntryRefusesRepeatsAndUnsourcedValues(t *testing.T) {
	e := CatalogEntry{Name: "x", Config: map[string]any{"max_position_embeddings": 131072.0, "hidden_size": 3584.0},
		Instruct: InstructRelease{Repo: "org/x-Instruct", Source: "s", ConfigSource: "c",
			Config: map[string]any{"max_position_embeddings": 32768.0}}}
	r, err := e.instructEntry()
	require.NoError(t, err)
	assert.InDelta(t, 32768, r.Config["max_position_embeddings"], 0)
	assert.InDelta(t, 131072, e.Config["max_position_embeddings"], 0, "the entry's own config is not changed")
	assert.Contains(t, r.Source, "org/x-Instruct's own config values (c)")

	repeat := e
	repeat.Instruct.Config = map[string]any{"hidden_size": 3584.0}
	_, err = repeat.instructEntry()
	require.ErrorContains(t, err, "repeats the entry's value")

	unsourced := e
	unsourced.Instruct.ConfigSource = ""
	_, err = unsourced.instructEntry()
	require.Error(t, err)
}
