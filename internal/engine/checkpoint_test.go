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

// Given bf16 weights (a folder) of a model whose catalog entry publishes an
// AWQ int4 checkpoint, an int4 plan loads that checkpoint and the command
// serves it, not the folder; a bf16 or fp8 plan serves the folder.
func TestGivenWeightsAtAnotherLevelServeThePublishedCheckpoint(t *testing.T) {
	m := &model.Model{Name: "m", FileQuant: "bf16", NamedCheckpoint: -1, Checkpoints: []model.Checkpoint{
		{Quant: "bf16", Repo: "org/m"}, {Quant: "int4", Repo: "org/m-AWQ", Method: "awq"}}}
	for _, e := range []Engine{vllm{}, sglang{}} {
		ld, note := e.Load(&Placement{Model: m, Level: quant.INT4, Kind: registry.KindCUDA})
		require.NotNil(t, ld, e.Name())
		assert.Equal(t, "org/m-AWQ", ld.Repo, e.Name())
		assert.Contains(t, ld.Needs, "org/m-AWQ (int4); the given weights are stored as bf16", e.Name())
		assert.Contains(t, note, "needs org/m-AWQ", e.Name())
		cmd := e.Command(Served{Dir: "/models/m", Load: *ld})
		assert.Equal(t, "org/m-AWQ", cmd[len(cmd)-1], e.Name())

		for _, l := range []quant.Level{quant.BF16, quant.FP16, quant.FP8} {
			ld, _ = e.Load(&Placement{Model: m, Level: l, Kind: registry.KindCUDA})
			require.NotNil(t, ld, "%s %s", e.Name(), l)
			assert.Empty(t, ld.Needs, "%s %s", e.Name(), l)
			cmd = e.Command(Served{Dir: "/models/m", Load: *ld})
			assert.Equal(t, "/models/m", cmd[len(cmd)-1], "%s %s", e.Name(), l)
		}
	}
}

// Given int4 weights, a bf16 plan needs a 16-bit checkpoint: engines do
// not dequantize a pre-quantized checkpoint to serve it at 16 bits. With
// none published the command is withheld (nil).
func TestGivenWeightsWithoutAPublishedCheckpointWithholdTheCommand(t *testing.T) {
	m := &model.Model{Name: "m", FileQuant: "int4", NamedCheckpoint: -1}
	for _, e := range []Engine{vllm{}, sglang{}} {
		ld, _ := e.Load(&Placement{Model: m, Level: quant.BF16, Kind: registry.KindCUDA})
		require.NotNil(t, ld, e.Name())
		assert.Equal(t, "a checkpoint of this model stored at bf16; the given weights are stored as int4", ld.Needs, e.Name())
		assert.Nil(t, e.Command(Served{Dir: "/models/m", Load: *ld}), e.Name())

		ld, _ = e.Load(&Placement{Model: m, Level: quant.INT4, Kind: registry.KindCUDA})
		assert.Nil(t, ld, "at its own level the folder is served: %s", e.Name())
		assert.Equal(t, "/models/m", e.Command(Served{Dir: "/models/m"})[len(e.Command(Served{Dir: "/models/m"}))-1])
	}
	// Weights of no named level (packed integer storage) are not judged.
	assert.Empty(t, givenWeightsNeed(&model.Model{FileQuant: "i32"}, quant.INT4, false, nil))
}

// llama.cpp runs a GGUF file at its stored type: a BF16 file planned at
// Q4_K_M needs a Q4_K_M file, and `llama-server -m` of the BF16 file is
// withheld; at its own type the file is served.
func TestLlamaCPPGivenFileAtAnotherType(t *testing.T) {
	m := &model.Model{Name: "m", FileQuant: "bf16", NamedCheckpoint: -1}
	e := llamaCPP{}
	ld, note := e.Load(&Placement{Model: m, Level: "q4_k_m", Kind: registry.KindCUDA})
	require.NotNil(t, ld)
	assert.Equal(t, "a GGUF file of this model of type Q4_K_M (llama-quantize writes one); the given weights are stored as bf16", ld.Needs)
	assert.Contains(t, note, "llama.cpp: needs a GGUF file")
	assert.Nil(t, e.Command(Served{File: "/m/m-bf16.gguf", Load: *ld}))

	ld, _ = e.Load(&Placement{Model: m, Level: quant.BF16, Kind: registry.KindCUDA})
	require.NotNil(t, ld)
	assert.Empty(t, ld.Needs)
	assert.Equal(t, []string{"llama-server", "-m", "/m/m-bf16.gguf"}, e.Command(Served{File: "/m/m-bf16.gguf", Load: *ld}))
}

// A catalog model with an official GGUF repository is loaded from it with
// -hf REPO:TYPE, the type llama.cpp picks the file by (issue 27 item 5):
// Qwen3-32B's Q4_K_M and Q8_0 from ggml-org/Qwen3-32B-GGUF, Qwen3-8B's from
// Qwen's own repository. Never a MODEL-TYPE.gguf placeholder there.
func TestLlamaCPPLoadsTheOfficialGGUFRepository(t *testing.T) {
	e := llamaCPP{}
	for _, c := range []struct {
		model string
		level quant.Level
		want  string
	}{
		{"Qwen3-32B", "q4_k_m", "ggml-org/Qwen3-32B-GGUF:Q4_K_M"},
		{"Qwen3-32B", "q8_0", "ggml-org/Qwen3-32B-GGUF:Q8_0"},
		{"Qwen3-32B", quant.FP16, "ggml-org/Qwen3-32B-GGUF:F16"},
		// int4 planned for another engine's sake means Q4_K_M here.
		{"Qwen3-32B", quant.INT4, "ggml-org/Qwen3-32B-GGUF:Q4_K_M"},
		{"Qwen3-8B", "q4_k_m", "Qwen/Qwen3-8B-GGUF:Q4_K_M"},
		{"Qwen3-30B-A3B", "q8_0", "Qwen/Qwen3-30B-A3B-GGUF:Q8_0"},
		// The file's name says mxfp4, its type MXFP4_MOE: named whole.
		{"gpt-oss-20b", quant.MXFP4, "ggml-org/gpt-oss-20b-GGUF --hf-file gpt-oss-20b-mxfp4.gguf"},
		// Repositories and types added from cited listings (catalog.json).
		{"Qwen3-235B-A22B", "q4_k_m", "Qwen/Qwen3-235B-A22B-GGUF:Q4_K_M"},
		{"Qwen3-Next-80B-A3B-Instruct", "q8_0", "Qwen/Qwen3-Next-80B-A3B-Instruct-GGUF:Q8_0"},
		{"Qwen3-4B", "q4_k_m", "Qwen/Qwen3-4B-GGUF:Q4_K_M"},
		{"Qwen2-7B-Instruct", "q5_k_m", "Qwen/Qwen2-7B-Instruct-GGUF:Q5_K_M"},
		{"Qwen2-0.5B-Instruct", "q4_0", "Qwen/Qwen2-0.5B-Instruct-GGUF:Q4_0"},
		{"Qwen3-0.6B", "q4_0", "ggml-org/Qwen3-0.6B-GGUF:Q4_0"},
		{"Qwen3-0.6B", "q8_0", "Qwen/Qwen3-0.6B-GGUF:Q8_0"},
		{"Devstral-Small-2507", "q4_k_m", "mistralai/Devstral-Small-2507_gguf:Q4_K_M"},
		{"LFM2-1.2B", "q4_k_m", "LiquidAI/LFM2-1.2B-GGUF:Q4_K_M"},
		{"Qwen3-14B", "q6_k", "Qwen/Qwen3-14B-GGUF:Q6_K"},
		{"Qwen3-30B-A3B", "q4_k_m", "Qwen/Qwen3-30B-A3B-GGUF:Q4_K_M"},
		{"Qwen3-1.7B", "q8_0", "Qwen/Qwen3-1.7B-GGUF:Q8_0"},
	} {
		m := model.Lookup(c.model)
		require.NotNil(t, m, c.model)
		ld, note := e.Load(&Placement{Model: m, Level: c.level, Kind: registry.KindCUDA})
		require.NotNil(t, ld, "%s %s", c.model, c.level)
		assert.Empty(t, note)
		assert.Equal(t, append([]string{"llama-server", "-hf"}, strings.Fields(c.want)...), e.Command(Served{Load: *ld}), "%s %s", c.model, c.level)
	}
}

// Where the official repository does not publish the planned type, the
// plan says which types it does publish and how to make the planned one
// from its 16-bit file; a model with no GGUF repository gets no such note.
func TestLlamaCPPTypeTheOfficialRepositoryLacks(t *testing.T) {
	e := llamaCPP{}
	p := &Placement{Model: model.Lookup("Qwen3-32B"), Level: "iq4_xs", Kind: registry.KindCUDA, Layers: 64,
		Stages: []Stage{{Start: 0, End: 64, Devices: []PlacedDevice{{ID: "cuda:0", Dev: &registry.Device{Kind: registry.KindCUDA}}}}}}
	ld, _ := e.Load(p)
	require.NotNil(t, ld)
	assert.Empty(t, ld.Repo)
	_, notes, ok := e.Args(p)
	require.True(t, ok)
	all := strings.Join(notes, "\n")
	assert.Contains(t, all, "the catalog knows ggml-org/Qwen3-32B-GGUF at Q4_K_M, Q8_0, F16; Qwen/Qwen3-32B-GGUF at Q6_K, Q5_K_M, not IQ4_XS")
	assert.Contains(t, all, "make the file with llama-quantize Qwen3-32B-F16.gguf Qwen3-32B-IQ4_XS.gguf IQ4_XS (from a 16-bit GGUF; --imatrix IMATRIX.gguf")

	p.Model = model.Lookup("Llama-3.1-8B")
	_, notes, _ = e.Args(p)
	assert.NotContains(t, strings.Join(notes, "\n"), "publishes")
}

// A type missing from the GGUF repositories of the other release, whose
// config differs, is not "a type the repository lacks": the base
// Qwen2.5-32B (131072 positions) at Q4_K_M has no GGUF of its own, and
// Qwen/Qwen2.5-32B-Instruct-GGUF, which publishes Q4_K_M, is the
// instruction-tuned release's (32768 positions), which the plan does not
// serve (pickCheckpoint). The note said "Qwen/Qwen2.5-32B-Instruct-GGUF
// publishes Q8_0, ..., Q4_K_M, ..., not Q4_K_M".
func TestLlamaCPPTypeOfTheOtherReleaseIsNotMissing(t *testing.T) {
	m, err := model.FromName("Qwen2.5-32B", nil)
	require.NoError(t, err)
	require.True(t, m.Releases.ConfigsDiffer)
	e := llamaCPP{}
	p := &Placement{Model: m, Level: "q4_k_m", Kind: registry.KindCUDA, Layers: m.Layers,
		Stages: []Stage{{Start: 0, End: m.Layers, Devices: []PlacedDevice{{ID: "cuda:0", Dev: &registry.Device{Kind: registry.KindCUDA}}}}}}
	ld, _ := e.Load(p)
	require.NotNil(t, ld)
	require.Empty(t, ld.Repo, "the instruct release's GGUF does not stand in")
	_, notes, ok := e.Args(p)
	require.True(t, ok)
	all := strings.Join(notes, "\n")
	assert.NotContains(t, all, "not Q4_K_M")
	assert.Contains(t, all, "the catalog knows no Q4_K_M GGUF of this release; it knows Qwen/Qwen2.5-32B-Instruct-GGUF, the GGUF repository of the other release, whose config differs (name that release to plan it)")
	assert.Contains(t, all, "llama-quantize Qwen2.5-32B-F16.gguf Qwen2.5-32B-Q4_K_M.gguf Q4_K_M")
}

// Every GGUF repository of the catalog names where its types were read (a
// URL a reader can open) and lists at least one type llama.cpp's -hf
// REPO:TYPE can pick; a listed file names its type, so the tag and the
// file agree; and one repository is official for one model only.
func TestCatalogGGUFRepositoriesHaveSourcesAndTypes(t *testing.T) {
	owner := map[string]string{}
	types := map[string]int{}
	for _, e := range model.Catalog() {
		for _, ck := range e.Checkpoints {
			if !ck.IsGGUF() {
				continue
			}
			assert.True(t, strings.HasPrefix(ck.Source, "https://"), "%s %s %s: source %q", e.Name, ck.Repo, ck.Quant, ck.Source)
			l, err := quant.Parse(ck.Quant)
			if assert.NoError(t, err, "%s %s", e.Name, ck.Repo) && assert.NotEmpty(t, l.GGUFType(), "%s %s %s", e.Name, ck.Repo, ck.Quant) {
				types[ck.Repo]++
			}
			if ck.File != "" && l != quant.MXFP4 {
				assert.Contains(t, strings.ToUpper(ck.File), l.GGUFType(), "%s %s: file %s", e.Name, ck.Repo, ck.File)
			}
			if o, seen := owner[ck.Repo]; seen {
				assert.Equal(t, o, e.Name, "%s is listed for two models", ck.Repo)
			}
			owner[ck.Repo] = e.Name
		}
	}
	require.NotEmpty(t, owner)
	for repo := range owner {
		assert.Positive(t, types[repo], repo)
	}
}

// A catalog model whose release is float16 (Llama 2) planned at bf16 is
// served from that release with --dtype converting it, as a bf16 release
// serves fp16: both Hugging Face engines convert between float levels on
// load, so the answer names the repository, not "needs a checkpoint".
func TestFloatReleaseServesTheOtherFloatLevels(t *testing.T) {
	m := model.Lookup("Llama-2-7B")
	require.NotNil(t, m)
	require.Equal(t, "fp16", m.Checkpoints[0].Quant)
	for _, e := range []Engine{vllm{}, sglang{}} {
		for _, l := range []quant.Level{quant.BF16, quant.FP16, quant.FP32, quant.FP8} {
			ld, _ := e.Load(&Placement{Model: m, Level: l, Kind: registry.KindCUDA})
			require.NotNil(t, ld, "%s %s", e.Name(), l)
			assert.Empty(t, ld.Needs, "%s %s", e.Name(), l)
			assert.Equal(t, "meta-llama/Llama-2-7b-hf", ld.Repo, "%s %s", e.Name(), l)
		}
	}
}

// A named GGUF repository of several types is what llama.cpp loads at
// each of its types, before a file of another repository of the same
// release listed earlier; at a type it lacks the plan loads the other
// repository's file and says the one named lacks it and what it holds,
// and with no file of the type at all the note names the repository.
func TestNamedGGUFRepositoryServesEachOfItsTypes(t *testing.T) {
	m := &model.Model{Name: "X", NamedCheckpoint: 3, Checkpoints: []model.Checkpoint{
		{Quant: "bf16", Repo: "org/X"},
		{Quant: "q8_0", Repo: "b/X-GGUF", Method: "gguf"},
		{Quant: "q6_k", Repo: "b/X-GGUF", Method: "gguf"},
		{Quant: "q4_k_m", Repo: "gg/X-GGUF", Method: "gguf"},
		{Quant: "q8_0", Repo: "gg/X-GGUF", Method: "gguf"},
	}}
	for l, repo := range map[quant.Level]string{quant.Level("q8_0"): "gg/X-GGUF", quant.Level("q4_k_m"): "gg/X-GGUF", quant.Level("q6_k"): "b/X-GGUF"} {
		ld, _ := llamaCPP{}.Load(&Placement{Model: m, Level: l, Kind: registry.KindCUDA})
		require.NotNil(t, ld, l)
		assert.Equal(t, repo, ld.Repo, l)
		lacks := namedRepoLacksNote(m, ld)
		if repo == "gg/X-GGUF" {
			assert.Empty(t, lacks, l)
			continue
		}
		assert.Equal(t, "llama.cpp: the catalog knows gg/X-GGUF, the repository named, at Q4_K_M, Q8_0, not Q6_K: the plan loads the Q6_K GGUF of b/X-GGUF instead", lacks)
	}
	ld, _ := llamaCPP{}.Load(&Placement{Model: m, Level: quant.Level("q5_k_m"), Kind: registry.KindCUDA})
	require.NotNil(t, ld)
	assert.Empty(t, ld.Repo)
	assert.Empty(t, namedRepoLacksNote(m, ld), "unpublishedTypeNote says it")
	assert.Contains(t, unpublishedTypeNote(m, "q5_k_m", "Q5_K_M"), "llama.cpp: the catalog knows b/X-GGUF at Q8_0, Q6_K; gg/X-GGUF, the repository named, at Q4_K_M, Q8_0, not Q5_K_M")

	// Named as the model, the first repository listed at a type serves it.
	m.NamedCheckpoint = -1
	ld, _ = llamaCPP{}.Load(&Placement{Model: m, Level: quant.Level("q8_0"), Kind: registry.KindCUDA})
	require.NotNil(t, ld)
	assert.Equal(t, "b/X-GGUF", ld.Repo)
}
