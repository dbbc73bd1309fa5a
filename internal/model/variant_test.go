package model

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A tuned release named by its id reaches the catalog entry of its
// architecture by dropping "-it", "-chat" or "-instruct", and is the
// checkpoint served: gemma-3-27b-it, not the pretrained gemma-3-27b-pt whose
// config the entry holds. The entry's own names, aliases and listed
// checkpoints are served as listed.
func TestTunedReleaseIsTheCheckpointServed(t *testing.T) {
	for name, want := range map[string]string{
		"gemma-3-27b-it":        "google/gemma-3-27b-it",
		"google/gemma-3-4b-it":  "google/gemma-3-4b-it",
		"Llama-2-7b-chat-hf":    "meta-llama/Llama-2-7b-chat-hf",
		"Gemma-3-27B":           "google/gemma-3-27b-pt",
		"google/gemma-3-27b-pt": "google/gemma-3-27b-pt",
		"Llama-2-7B":            "meta-llama/Llama-2-7b-hf",
		"Qwen2.5-7B-Instruct":   "Qwen/Qwen2.5-7B-Instruct",
		// A bare tuned name serves the entry's tuned release, not a
		// repository made from the name (meta-llama/Llama-2-7b-chat is
		// none), and the entry's own where it lists none.
		"Llama-2-7b-chat":   "meta-llama/Llama-2-7b-chat-hf",
		"Qwen3-8B-Instruct": "Qwen/Qwen3-8B",
	} {
		m, err := FromName(name, nil)
		require.NoError(t, err, name)
		ck := m.NativeCheckpoint()
		require.NotNil(t, ck, name)
		assert.Equal(t, want, ck.Repo, name)
	}
	m, err := FromName("gemma-3-27b-it", nil)
	require.NoError(t, err)
	assert.Equal(t, "bf16", m.NativeCheckpoint().Quant)
	assert.Contains(t, m.Notes, "serves google/gemma-3-27b-it, the release named; its shape is the catalog's Gemma-3-27B (google/gemma-3-27b-pt)")
	assert.Len(t, m.Checkpoints, len(Lookup("Gemma-3-27B").Checkpoints)+1)
	assert.Equal(t, Lookup("Gemma-3-27B").Checkpoints, Lookup("gemma-3-27b-it").Checkpoints, "the catalog's checkpoints are shared, never changed")
}

// Every instruction-tuned release the catalog names (InstructRelease.Repo)
// is a model a request can name, by its id or its bare name, and is the
// checkpoint served, also when its name does not end in the tuned ending
// ("Mistral-7B-Instruct-v0.3", whose version follows "Instruct"). Before,
// that id answered unknown_model though the catalog lists it.
func TestEveryInstructReleaseIsNamedAndServed(t *testing.T) {
	for _, e := range catalog.entries {
		repo := e.Instruct.Repo
		if repo == "" {
			continue
		}
		for _, name := range []string{repo, baseName(repo)} {
			m, err := FromName(name, nil)
			require.NoError(t, err, name)
			ck := m.NativeCheckpoint()
			require.NotNil(t, ck, name)
			assert.True(t, ck.Repo == repo, "%s serves %s, not the release %s", name, ck.Repo, repo)
		}
	}
}

// A bare tuned name of an entry that lists no instruction-tuned release
// says that the entry's own checkpoint is served and how to name another.
func TestBareTunedNameWithoutReleaseSaysWhatIsServed(t *testing.T) {
	m, err := FromName("Qwen3-8B-Instruct", nil)
	require.NoError(t, err)
	assert.Contains(t, m.Notes, "Qwen3-8B-Instruct: the catalog knows no instruction-tuned release of Qwen3-8B apart from Qwen/Qwen3-8B, which is served; give a Hugging Face id (org/name) to serve another repository")
}
