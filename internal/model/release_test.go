package model

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Every checkpoint of the catalog has one release (checkpointRelease
// returns no error), and one whose base_model the catalog records has the
// release that base_model names: the entry's hf_id its own, the instruct
// repository the tuned one. The name rule agrees with the catalog's
// releases themselves: each instruct repository reads as tuned, each
// hf_id of an entry with one as its own, so that a checkpoint named after
// either is given its release.
func TestEveryCheckpointHasItsRelease(t *testing.T) {
	checked, withBase := 0, 0
	for _, e := range Catalog() {
		if r := e.Instruct.Repo; r != "" {
			assert.True(t, tunedName(r), "%s: instruct repo %s has no instruct, chat or it word", e.Name, r)
			assert.False(t, tunedName(e.HFID), "%s: hf_id %s reads as a tuned release", e.Name, e.HFID)
		}
		for _, ck := range e.Checkpoints {
			r, err := e.checkpointRelease(ck)
			require.NoError(t, err, e.Name)
			checked++
			switch {
			case ck.BaseModel == "":
			case strings.EqualFold(ck.BaseModel, e.Instruct.Repo):
				withBase++
				assert.Equal(t, TunedRelease, r, "%s %s", e.Name, ck.Repo)
			default:
				withBase++
				assert.Equal(t, e.HFID, ck.BaseModel, "%s %s: base_model names neither release", e.Name, ck.Repo)
				assert.Equal(t, OwnRelease, r, "%s %s", e.Name, ck.Repo)
			}
			if e.Instruct.Repo == "" {
				assert.Equal(t, OwnRelease, r, "%s has one release: %s", e.Name, ck.Repo)
			}
		}
	}
	assert.Positive(t, checked)
	assert.Positive(t, withBase, "Qwen/Qwen2.5-72B-Instruct-AWQ records its base_model")
}

// The releases of the checkpoints the lead's probe served across
// releases, read from catalog.json.
func TestCheckpointReleasesOfTheProbe(t *testing.T) {
	want := map[string]Release{
		"meta-llama/Llama-3.1-405B":                            OwnRelease,
		"meta-llama/Llama-3.1-405B-FP8":                        OwnRelease,
		"meta-llama/Llama-3.1-405B-Instruct":                   TunedRelease,
		"meta-llama/Llama-3.1-405B-Instruct-FP8":               TunedRelease,
		"hugging-quants/Meta-Llama-3.1-8B-Instruct-AWQ-INT4":   TunedRelease,
		"hugging-quants/Meta-Llama-3.1-70B-Instruct-GPTQ-INT4": TunedRelease,
		"Qwen/Qwen2.5-72B-Instruct-AWQ":                        TunedRelease,
		"Qwen/Qwen2.5-72B-Instruct-GPTQ-Int8":                  TunedRelease,
		"ggml-org/gemma-3-27b-it-GGUF":                         TunedRelease,
		"google/gemma-3-27b-pt":                                OwnRelease,
		"deepseek-ai/DeepSeek-V2-Lite":                         OwnRelease,
		// One release only: the entry is the instruct model.
		"bartowski/Llama-3.3-70B-Instruct-GGUF": OwnRelease,
	}
	found := 0
	for _, e := range Catalog() {
		for _, ck := range e.Checkpoints {
			w, ok := want[ck.Repo]
			if !ok {
				continue
			}
			found++
			r, err := e.checkpointRelease(ck)
			require.NoError(t, err, ck.Repo)
			assert.Equal(t, w, r, ck.Repo)
		}
	}
	assert.GreaterOrEqual(t, found, len(want))
}

// A base_model that names neither release, or contradicts the
// repository's name, is an error: the catalog cannot give a checkpoint two
// releases.
func TestCheckpointReleaseRefusesAContradiction(t *testing.T) {
	e := CatalogEntry{Name: "X-7B", HFID: "org/X-7B", Instruct: InstructRelease{Repo: "org/X-7B-Instruct"}}
	_, err := e.checkpointRelease(Checkpoint{Repo: "q/X-7B-AWQ", BaseModel: "org/X-7B-Instruct"})
	assert.ErrorContains(t, err, "names the instruction-tuned release, the repository's name the entry's own release")
	_, err = e.checkpointRelease(Checkpoint{Repo: "q/X-7B-Instruct-AWQ", BaseModel: "other/Y"})
	assert.ErrorContains(t, err, "neither the entry's hf_id nor its instruct repo")
	r, err := e.checkpointRelease(Checkpoint{Repo: "q/X-7B-Instruct-AWQ", BaseModel: "org/X-7B-Instruct"})
	require.NoError(t, err)
	assert.Equal(t, TunedRelease, r)
}

// The release a request names: an ollama tag, the instruct id, a tuned
// name and a tuned checkpoint name the tuned release; the catalog name,
// hf_id and a checkpoint of the pretrained model the entry's own. A tuned
// request whose release lists no float checkpoint is given its
// repository at the entry's float level.
func TestRequestNamesARelease(t *testing.T) {
	for name, want := range map[string]Release{
		"Llama-3.1-8B":                        OwnRelease,
		"meta-llama/Llama-3.1-8B":             OwnRelease,
		"meta-llama-3.1-8b":                   OwnRelease,
		"llama3.1:8b":                         TunedRelease,
		"meta-llama/Llama-3.1-8B-Instruct":    TunedRelease,
		"Meta-Llama-3.1-8B-Instruct-AWQ-INT4": TunedRelease,
		"meta-llama/Llama-3.1-405B-FP8":       OwnRelease,
		"gemma-3-27b-it":                      TunedRelease,
		"ggml-org/gemma-3-27b-it-GGUF":        TunedRelease,
		"Qwen/Qwen2.5-72B-Instruct-AWQ":       TunedRelease,
		"Qwen3-8B":                            OwnRelease,
		"Qwen/Qwen3-8B-GGUF":                  OwnRelease,
	} {
		m, err := FromName(name, nil)
		require.NoError(t, err, name)
		assert.Equal(t, want, m.Releases.Named, name)
	}
	m, err := FromName("ggml-org/gemma-3-27b-it-GGUF", nil)
	require.NoError(t, err)
	// The float checkpoint given is a safetensors repository; a 16-bit
	// GGUF of the release (bartowski's BF16 file) does not count, as in
	// tunedFloat.
	var floats []string
	for _, ck := range m.Checkpoints {
		if ck.Release == TunedRelease && !ck.IsGGUF() && floatQuant(ck.Quant) {
			floats = append(floats, ck.Repo)
		}
	}
	assert.Equal(t, []string{"google/gemma-3-27b-it"}, floats)
	assert.Equal(t, "ggml-org/gemma-3-27b-it-GGUF", m.NativeCheckpoint().Repo, "the named checkpoint stays the native one")
	// The repository holds several types, each listed: the request names
	// every one of them.
	var types []string
	for i, ck := range m.Checkpoints {
		if ck.Repo == "ggml-org/gemma-3-27b-it-GGUF" {
			assert.True(t, m.Named(i), ck.Quant)
			types = append(types, ck.Quant)
		}
	}
	assert.GreaterOrEqual(t, len(types), 2, "the catalog lists several types of ggml-org/gemma-3-27b-it-GGUF: %v", types)
}

// TrainingNote turns the note that says which release is served when the
// catalog knows no other tuned release into what a training run trains.
func TestTrainingNoteOfTheUntunedNote(t *testing.T) {
	e := CatalogEntry{Name: "Llama-3.1-8B"}
	note := untunedNote("llama-3.1-8b-chat", e, "meta-llama/Llama-3.1-8B")
	require.Contains(t, note, "which is served")
	assert.Equal(t, "llama-3.1-8b-chat: the catalog knows no instruction-tuned release of Llama-3.1-8B apart from meta-llama/Llama-3.1-8B, which is trained; give a Hugging Face id (org/name) to train another repository", TrainingNote(note))
	assert.Equal(t, "vision tower", TrainingNote("vision tower"))
}

// An entry that lists only GGUF files keeps its publisher's checkpoint
// (defaultCheckpoint), listed first: the GGUF files are llama.cpp's, and
// vLLM and SGLang serve the Hugging Face repository. When a catalog
// change gave four entries their first checkpoints as GGUF files, vLLM and
// SGLang lost their command for them (Qwen2.5-VL-7B-Instruct, Qwen3.5-9B,
// the two Qwen3-4B 2507 releases).
func TestEntryOfGGUFFilesOnlyKeepsItsPublishersCheckpoint(t *testing.T) {
	e := CatalogEntry{Name: "Probe", HFID: "org/Probe", Config: Catalog()[0].Config,
		Checkpoints: []Checkpoint{{Quant: "q4_k_m", Repo: "org/Probe-GGUF", Method: "gguf", Source: "https://example.org"}}}
	m, err := entryModel(e)
	require.NoError(t, err)
	require.Len(t, m.Checkpoints, 2)
	assert.Equal(t, "org/Probe", m.Checkpoints[0].Repo)
	assert.False(t, m.Checkpoints[0].IsGGUF())
	assert.Equal(t, "org/Probe-GGUF", m.Checkpoints[1].Repo)
}

// A GGUF repository is listed as one checkpoint per type it holds; a
// request that names it names all of them (Model.Named), its first listed
// being NamedCheckpoint. Two repositories of one name, or a Hugging Face
// repository listed twice, name no one checkpoint.
func TestNamedGGUFRepositoryOfSeveralTypes(t *testing.T) {
	cks := []Checkpoint{
		{Quant: "bf16", Repo: "org/X-it"},
		{Quant: "q4_k_m", Repo: "gg/X-it-GGUF", Method: "gguf"},
		{Quant: "q8_0", Repo: "gg/X-it-GGUF", Method: "gguf"},
		{Quant: "fp16", Repo: "gg/X-it-GGUF", Method: "gguf"},
		{Quant: "q6_k", Repo: "other/X-it-GGUF-imatrix", Method: "gguf"},
	}
	m := &Model{Checkpoints: cks, NamedCheckpoint: namedCheckpoint(cks, "gg/X-it-GGUF")}
	assert.Equal(t, 1, m.NamedCheckpoint)
	for i, want := range []bool{false, true, true, true, false} {
		assert.Equal(t, want, m.Named(i), cks[i].Quant)
	}
	assert.Equal(t, 1, namedCheckpoint(cks, "X-it-GGUF"), "without its organisation")

	twoRepos := append(append([]Checkpoint(nil), cks...), Checkpoint{Quant: "q5_k_m", Repo: "b/X-it-GGUF", Method: "gguf"})
	assert.Equal(t, -1, namedCheckpoint(twoRepos, "X-it-GGUF"), "two repositories of one name")
	hfTwice := []Checkpoint{{Quant: "bf16", Repo: "org/X"}, {Quant: "fp8", Repo: "org/X"}}
	assert.Equal(t, -1, namedCheckpoint(hfTwice, "org/X"))
	one := &Model{Checkpoints: hfTwice[:1], NamedCheckpoint: 0}
	assert.True(t, one.Named(0))
	none := &Model{Checkpoints: cks, NamedCheckpoint: -1}
	assert.False(t, none.Named(1))
}

// A release whose config differs from the entry's only in torch_dtype
// shares the entry's shapes and positions: its checkpoints stand in for the
// named release's (allenai/OLMo-2-1124-13B is float32, its -Instruct
// bfloat16; Ai2's -Instruct-GGUF files are the only OLMo-2 13B GGUFs the
// catalog knows). A config that differs in positions does not (the base
// Qwen2.5-32B's 131072 against the instruct release's 32768).
func TestReleasesDifferingInDtypeAloneShareCheckpoints(t *testing.T) {
	m, err := FromName("OLMo-2-1124-13B", nil)
	require.NoError(t, err)
	assert.False(t, m.Releases.ConfigsDiffer, "torch_dtype alone")
	m, err = FromName("Qwen2.5-32B", nil)
	require.NoError(t, err)
	assert.True(t, m.Releases.ConfigsDiffer, "max_position_embeddings")
}

// A GGUF repository named with its organisation is that repository, where
// another publisher's has the same name: Qwen/Qwen3-8B-GGUF and
// unsloth/Qwen3-8B-GGUF are both Qwen3-8B checkpoints, and naming either
// named none, so a llama.cpp plan of Qwen/Qwen3-8B-GGUF loaded
// unsloth/Qwen3-8B-GGUF's BF16 file.
func TestNamedRepositoryWithItsOrganisation(t *testing.T) {
	cks := []Checkpoint{
		{Quant: "bf16", Repo: "org/X-it"},
		{Quant: "q4_k_m", Repo: "gg/X-it-GGUF", Method: "gguf"},
		{Quant: "q8_0", Repo: "gg/X-it-GGUF", Method: "gguf"},
		{Quant: "q5_k_m", Repo: "b/X-it-GGUF", Method: "gguf"},
	}
	assert.Equal(t, 1, namedCheckpoint(cks, "gg/X-it-GGUF"))
	assert.Equal(t, 1, namedCheckpoint(cks, "GG/x-it-gguf"), "in any case, as every catalog name")
	assert.Equal(t, 3, namedCheckpoint(cks, "b/X-it-GGUF"))
	assert.Equal(t, -1, namedCheckpoint(cks, "X-it-GGUF"), "without an organisation it is still two repositories")
	assert.Equal(t, -1, namedCheckpoint(cks, "c/X-it-GGUF"), "an organisation the catalog does not list")

	for _, repo := range []string{"Qwen/Qwen3-8B-GGUF", "unsloth/Qwen3-8B-GGUF"} {
		m, err := FromName(repo, nil)
		require.NoError(t, err)
		require.GreaterOrEqual(t, m.NamedCheckpoint, 0, repo)
		assert.Equal(t, repo, m.NativeCheckpoint().Repo)
	}
}
