package model

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// An ollama tag names the instruction-tuned release: ollama's library
// builds gemma3:27b from google/gemma-3-27b-it, llama3.1:8b from
// Llama-3.1-8B-Instruct, mistral:7b from Mistral-7B-Instruct-v0.3. Reached
// by its normalized key, gemma3:27b served the catalog entry's pretrained
// checkpoint, google/gemma-3-27b-pt, and mistral:7b the v0.1 base.
func TestOllamaTagServesTheInstructRelease(t *testing.T) {
	for tag, want := range map[string]struct{ name, repo string }{
		"gemma3:27b":      {"Gemma-3-27B", "google/gemma-3-27b-it"},
		"gemma2:9b":       {"Gemma-2-9B", "google/gemma-2-9b-it"},
		"gemma:2b":        {"gemma-2b", "google/gemma-2b-it"},
		"llama2:7b":       {"Llama-2-7B", "meta-llama/Llama-2-7b-chat-hf"},
		"llama3:8b":       {"Meta-Llama-3-8B", "meta-llama/Meta-Llama-3-8B-Instruct"},
		"llama3.1:8b":     {"Llama-3.1-8B", "meta-llama/Llama-3.1-8B-Instruct"},
		"llama3.2:3b":     {"Llama-3.2-3B", "meta-llama/Llama-3.2-3B-Instruct"},
		"qwen2.5:7b":      {"Qwen2.5-7B", "Qwen/Qwen2.5-7B-Instruct"},
		"olmo2:7b":        {"OLMo-2-1124-7B", "allenai/OLMo-2-1124-7B-Instruct"},
		"deepseek-v2:16b": {"DeepSeek-V2-Lite", "deepseek-ai/DeepSeek-V2-Lite-Chat"},
		"mistral:7b":      {"Mistral-7B-v0.3", "mistralai/Mistral-7B-Instruct-v0.3"},
		"mixtral:8x7b":    {"Mixtral-8x7B-Instruct-v0.1", "mistralai/Mixtral-8x7B-Instruct-v0.1"},
		"mixtral:8x22b":   {"Mixtral-8x22B-Instruct-v0.1", "mistralai/Mixtral-8x22B-Instruct-v0.1"},
		// Already instruction-tuned (or hybrid thinking) entries are unchanged.
		"qwen3:30b":    {"Qwen3-30B-A3B", "Qwen/Qwen3-30B-A3B"},
		"llama3.3:70b": {"Llama-3.3-70B-Instruct", "meta-llama/Llama-3.3-70B-Instruct"},
		"phi4:14b":     {"Phi-4", "microsoft/phi-4"},
	} {
		m, err := FromName(tag, nil)
		require.NoError(t, err, tag)
		assert.Equal(t, want.name, m.Name, tag)
		i := m.NamedCheckpoint
		if i < 0 {
			i = 0
		}
		require.NotEmpty(t, m.Checkpoints, tag)
		assert.Equal(t, want.repo, m.Checkpoints[i].Repo, tag)
	}
	// The catalog's own names still serve the release they name.
	for name, repo := range map[string]string{"Gemma-3-27B": "google/gemma-3-27b-pt", "mistral-7b": "mistralai/Mistral-7B-v0.1", "Llama-3.1-8B": "meta-llama/Llama-3.1-8B"} {
		m, err := FromName(name, nil)
		require.NoError(t, err, name)
		assert.Equal(t, repo, m.Checkpoints[max(m.NamedCheckpoint, 0)].Repo, name)
	}
}

// ollama's own names come without a size as often as with one ("ollama run
// llama3.1" is its :latest tag); the catalog cannot know which size
// :latest is, so the answer names the family's tags it does know, each of
// which resolves. Tried as a new user, "llama3.1" suggested
// "Llama-3.3-70B-Instruct, Llama-3.2-1B, Llama-3.2-3B" and "qwen2.5:latest"
// gave only "give params, config or path instead".
func TestOllamaFamilyWithoutSizeNamesItsTags(t *testing.T) {
	for typed, want := range map[string]string{
		"llama3.1":        "llama3.1:8b, llama3.1:70b, llama3.1:405b",
		"llama3.1:latest": "llama3.1:8b, llama3.1:70b, llama3.1:405b",
		"qwen2.5":         "qwen2.5:0.5b, qwen2.5:1.5b, qwen2.5:3b, qwen2.5:7b, qwen2.5:14b, qwen2.5:32b",
	} {
		_, err := FromName(typed, nil)
		require.Error(t, err, typed)
		assert.Contains(t, err.Error(), "an ollama name takes its size tag: "+want, typed)
	}
	for _, tag := range []string{"llama3.1:8b", "llama3.1:70b", "llama3.1:405b", "qwen2.5:0.5b", "qwen2.5:1.5b", "qwen2.5:32b"} {
		_, err := FromName(tag, nil)
		assert.NoError(t, err, "every tag named resolves: %s", tag)
	}
	// Not a family: the usual suggestions.
	_, err := FromName("mistrall-7b", nil)
	require.Error(t, err)
	assert.NotContains(t, err.Error(), "ollama")
}
