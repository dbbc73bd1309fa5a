package engine

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/model"
	"github.com/ai-hwaccel/ai-hwaccel/internal/quant"
	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// Every name of every catalog entry (catalog name, hf_id, aliases, its
// instruct repository and ollama tags, each checkpoint's repository),
// planned at bf16, fp8, int8 and int4 with vLLM, SGLang and llama.cpp,
// serves a checkpoint of the release the request named, or its Load
// carries the warning that names the switch. On main the first
// checkpoint of a level was served whichever release it belonged to:
// meta-llama/Llama-3.1-405B-Instruct at fp8 loaded the pretrained
// meta-llama/Llama-3.1-405B-FP8, and Qwen/Qwen2.5-72B-Instruct-AWQ at bf16
// the pretrained Qwen/Qwen2.5-72B, both silently.
func TestPlanServesTheNamedRelease(t *testing.T) {
	entries := model.Catalog()
	releaseOf := releaseRepos(entries)
	engines := []Engine{vllm{}, sglang{}, llamaCPP{}}
	levels := []quant.Level{quant.BF16, quant.FP8, quant.INT8, quant.INT4}
	served, switched := 0, 0
	for _, e := range entries {
		for name, want := range namedReleases(e) {
			m, err := model.FromName(name, nil)
			require.NoError(t, err, name)
			for _, eng := range engines {
				for _, l := range levels {
					ld, _ := eng.Load(&Placement{Model: m, Level: l, Kind: registry.KindCUDA})
					at := name + " " + string(l) + " " + eng.Name()
					if ld == nil || ld.Repo == "" {
						if ld != nil {
							assert.Empty(t, ld.Switch, at)
						}
						continue
					}
					served++
					got, ok := releaseOf[strings.ToLower(ld.Repo)]
					require.True(t, ok, "%s serves %s, a repository of no catalog release", at, ld.Repo)
					if strings.EqualFold(got, want) {
						assert.Empty(t, ld.Switch, "%s serves %s, of the release named", at, ld.Repo)
						continue
					}
					switched++
					assert.Contains(t, ld.Switch, ld.Repo, "%s serves %s, of release %s, not the named %s, without the warning", at, ld.Repo, got, want)
					assert.Contains(t, ld.Switch, want, at)
					assert.Contains(t, ld.Switch, got, at)
				}
			}
		}
	}
	assert.Positive(t, served)
	assert.Positive(t, switched, "some level is published by one release only (Llama-3.1-8B's int4)")
}

// The cases the lead's probe found, each with the repository served and
// whether the answer warns of a switch of release.
func TestNamedReleaseCases(t *testing.T) {
	for _, c := range []struct {
		name   string
		level  quant.Level
		engine Engine
		repo   string
		warns  string // what the switch warning says; "" for none
	}{
		{"meta-llama/Llama-3.1-405B-Instruct", quant.FP8, vllm{}, "meta-llama/Llama-3.1-405B-Instruct-FP8", ""},
		{"Llama-3.1-405B", quant.FP8, vllm{}, "meta-llama/Llama-3.1-405B-FP8", ""},
		{"meta-llama/Llama-3.1-8B", quant.INT4, vllm{}, "hugging-quants/Meta-Llama-3.1-8B-Instruct-AWQ-INT4", "serves hugging-quants/Meta-Llama-3.1-8B-Instruct-AWQ-INT4, the instruction-tuned release's"},
		{"Llama-3.1-8B", quant.INT4, sglang{}, "hugging-quants/Meta-Llama-3.1-8B-Instruct-AWQ-INT4", "serves hugging-quants/Meta-Llama-3.1-8B-Instruct-AWQ-INT4, the instruction-tuned release's"},
		{"Qwen/Qwen2.5-72B-Instruct", quant.INT4, vllm{}, "Qwen/Qwen2.5-72B-Instruct-AWQ", ""},
		{"hugging-quants/Meta-Llama-3.1-8B-Instruct-AWQ-INT4", quant.BF16, vllm{}, "meta-llama/Llama-3.1-8B-Instruct", ""},
		{"hugging-quants/Meta-Llama-3.1-8B-Instruct-AWQ-INT4", quant.FP8, vllm{}, "meta-llama/Llama-3.1-8B-Instruct", ""},
		{"Qwen/Qwen2.5-72B-Instruct-AWQ", quant.BF16, sglang{}, "Qwen/Qwen2.5-72B-Instruct", ""},
		{"ggml-org/gemma-3-27b-it-GGUF", quant.BF16, vllm{}, "google/gemma-3-27b-it", ""},
		{"gemma3:27b", quant.INT4, llamaCPP{}, "ggml-org/gemma-3-27b-it-GGUF", ""},
		{"Gemma-3-27B", quant.INT4, llamaCPP{}, "ggml-org/gemma-3-27b-it-GGUF", "serves ggml-org/gemma-3-27b-it-GGUF, the instruction-tuned release's"},
		{"Gemma-3-27B", quant.BF16, vllm{}, "google/gemma-3-27b-pt", ""},
		// A bare tuned name of an entry without an instruct release is
		// the entry's own release (no repository is made up from the
		// name: variantRepo); its id (org/name) is served as given.
		{"Qwen3-8B-Instruct", quant.FP8, vllm{}, "Qwen/Qwen3-8B-FP8", ""},
		{"Qwen3-8B-Instruct", quant.INT4, vllm{}, "Qwen/Qwen3-8B-AWQ", ""},
		{"someorg/Qwen3-8B-Instruct", quant.BF16, vllm{}, "someorg/Qwen3-8B-Instruct", ""},
	} {
		at := c.name + " " + string(c.level) + " " + c.engine.Name()
		m, err := model.FromName(c.name, nil)
		require.NoError(t, err, at)
		ld, _ := c.engine.Load(&Placement{Model: m, Level: c.level, Kind: registry.KindCUDA})
		require.NotNil(t, ld, at)
		assert.Equal(t, c.repo, ld.Repo, at)
		if c.warns == "" {
			assert.Empty(t, ld.Switch, at)
		} else {
			assert.Contains(t, ld.Switch, c.warns, at)
		}
	}
	// Qwen2.5-72B-Instruct publishes its own config (32768 positions, the
	// base model 131072): its GPTQ and AWQ checkpoints do not stand in for
	// the base model, whose plan may exceed what their config.json allows;
	// the Load names the checkpoint the base model would need instead.
	for _, l := range []quant.Level{quant.INT8, quant.INT4} {
		m, err := model.FromName("Qwen2.5-72B", nil)
		require.NoError(t, err)
		ld, _ := vllm{}.Load(&Placement{Model: m, Level: l, Kind: registry.KindCUDA})
		require.NotNil(t, ld, l)
		assert.Empty(t, ld.Repo, l)
		assert.Contains(t, ld.Needs, string(l), l)
		assert.Contains(t, ld.Needs, "the catalog knows Qwen/Qwen2.5-72B-Instruct-", l)
	}
	m, err := model.FromName("meta-llama/Llama-3.1-8B", nil)
	require.NoError(t, err)
	ld, _ := vllm{}.Load(&Placement{Model: m, Level: quant.INT4, Kind: registry.KindCUDA})
	require.NotNil(t, ld)
	assert.Equal(t, "no int4 checkpoint of meta-llama/Llama-3.1-8B is published; serves hugging-quants/Meta-Llama-3.1-8B-Instruct-AWQ-INT4, the instruction-tuned release's (meta-llama/Llama-3.1-8B-Instruct): another release's weights of the same architecture", ld.Switch)
}

// namedReleases maps each name of catalog entry e to the repository of
// the release it names: the instruct repository and an ollama tag (which
// ollama builds from the tuned release) name the tuned release, a
// checkpoint's repository that checkpoint's, the catalog name, hf_id and
// other aliases the entry's own (releaseRepo).
func namedReleases(e model.CatalogEntry) map[string]string {
	own := ownRepo(e)
	names := map[string]string{e.Name: own}
	for _, a := range append([]string{e.HFID}, e.Aliases...) {
		if a == "" {
			continue
		}
		names[a] = own
		if model.OllamaTag(a) && e.Instruct.Repo != "" {
			names[a] = e.Instruct.Repo
		}
	}
	for _, ck := range e.Checkpoints {
		names[ck.Repo] = releaseRepo(e, ck)
	}
	if r := e.Instruct.Repo; r != "" {
		names[r] = r
		for _, tag := range e.Instruct.Ollama {
			names[tag] = r
		}
	}
	return names
}

// releaseRepos maps every repository the catalog names (lower case) to
// the repository of the release it is of.
func releaseRepos(entries []model.CatalogEntry) map[string]string {
	out := map[string]string{}
	for _, e := range entries {
		out[strings.ToLower(ownRepo(e))] = ownRepo(e)
		if r := e.Instruct.Repo; r != "" {
			out[strings.ToLower(r)] = r
		}
		for _, ck := range e.Checkpoints {
			out[strings.ToLower(ck.Repo)] = releaseRepo(e, ck)
		}
	}
	return out
}

// ownRepo is the repository of e's own release: its hf_id, else its
// first checkpoint's.
func ownRepo(e model.CatalogEntry) string {
	if e.HFID != "" || len(e.Checkpoints) == 0 {
		return e.HFID
	}
	return e.Checkpoints[0].Repo
}

// releaseRepo is the repository of the release of e that ck stores, read
// from the catalog data alone: its base_model where recorded, else, for
// an entry with an instruct release, the tuned release when the
// repository's words hold instruct, chat or it; the entry's own
// otherwise.
func releaseRepo(e model.CatalogEntry, ck model.Checkpoint) string {
	if ck.BaseModel != "" {
		return ck.BaseModel
	}
	if e.Instruct.Repo != "" && !strings.EqualFold(ck.Repo, e.HFID) {
		for _, w := range strings.FieldsFunc(strings.ToLower(ck.Repo[strings.LastIndex(ck.Repo, "/")+1:]), func(r rune) bool {
			return (r < 'a' || r > 'z') && (r < '0' || r > '9')
		}) {
			if w == "instruct" || w == "chat" || w == "it" {
				return e.Instruct.Repo
			}
		}
	}
	return ownRepo(e)
}
