package engine

import (
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
