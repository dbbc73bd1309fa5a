package quant

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/ggml"
	"github.com/ai-hwaccel/ai-hwaccel/internal/model"
)

// catalogGGUF is the catalog's GGUF checkpoint of entry name at quant q
// made by other rules than mainline's (size_mix).
func catalogGGUF(t *testing.T, name, q string) model.Checkpoint {
	t.Helper()
	for _, e := range model.Catalog() {
		if e.Name != name {
			continue
		}
		for _, ck := range e.Checkpoints {
			if ck.IsGGUF() && ck.Quant == q && ck.SizeMix != "" {
				return ck
			}
		}
	}
	require.Failf(t, "no checkpoint", "%s has no GGUF checkpoint at %s", name, q)
	return model.Checkpoint{}
}

// bartowski's MiniMax-M2.7 Q6_K file (197.05 GB by Koda's changelog) is
// made by the quant_types branch (0af41bf15), which raises the
// ffn_down_exps of the use_more_bits tensors, 30 of the 62 (the first 7,
// the last 8 and every third between), from Q6_K to Q8_0 and leaves
// ffn_gate_exps and ffn_up_exps at the base type: its routed experts are
// mainline's Q6_K experts plus 30 x 256 experts x 1536 x 3072 weights at
// 8.5 - 6.5625 bits, and the published file holds that much more than
// the derived weights (FileExtraBytes: 9.3 GB, of which the other tensors
// the branch raises, attention among them, hold the rest).
func TestFileRoutedExpertsQuantTypesMiniMaxQ6K(t *testing.T) {
	m := model.Lookup("MiniMax-M2.7")
	require.NotNil(t, m)
	ck := catalogGGUF(t, "MiniMax-M2.7", "q6_k")
	require.Equal(t, MixExpertsQuantTypes, ck.SizeMixExperts)
	mainline, ok := RoutedExpertBytes(m, "q6_k")
	require.True(t, ok)
	file, ok := FileRoutedExperts(m, "q6_k", ck)
	require.True(t, ok)
	const raised, experts, inter, hidden = 30, 256.0, 1536.0, 3072.0
	perLayer := experts * inter * hidden * (ggml.Q8_0.BitsPerWeight() - ggml.Q6_K.BitsPerWeight()) / 8
	assert.InEpsilon(t, raised*perLayer, file.Total()-mainline.Total(), 1e-9)
	assert.InEpsilon(t, mainline.Gate, file.Gate, 1e-12)
	assert.InEpsilon(t, mainline.Up, file.Up, 1e-12)
	assert.Less(t, file.Total()-mainline.Total(), float64(FileExtraBytes(m, "q6_k", ck)), "the file holds the experts' raise")
	for i, l := range file.ByLayer {
		grew := l.Down - mainline.ByLayer[i].Down
		if useMoreBits(i, m.Layers) {
			assert.InEpsilon(t, perLayer, grew, 1e-9, "layer %d", i)
		} else {
			assert.Zero(t, grew, "layer %d", i)
		}
	}
}

// Its IQ2_XXS file (60.85 GB): the branch types the ffn_down_exps of the
// first and last eighth of the tensors IQ2_XS (j < 62/8 or j > 7*62/8:
// 0-6 and 55-61), where mainline raises the first eighth of ffn_down to
// Q2_K; the experts then hold less than mainline's, and the other tensors
// the whole extra and more.
func TestFileRoutedExpertsQuantTypesMiniMaxIQ2XXS(t *testing.T) {
	m := model.Lookup("MiniMax-M2.7")
	require.NotNil(t, m)
	file, ok := FileRoutedExperts(m, "iq2_xxs", catalogGGUF(t, "MiniMax-M2.7", "iq2_xxs"))
	require.True(t, ok)
	tensor := 256.0 * 1536 * 3072 / 8
	for i, l := range file.ByLayer {
		want := ggml.IQ2_XXS.BitsPerWeight()
		if i < 7 || i > 54 {
			want = ggml.IQ2_XS.BitsPerWeight()
		}
		assert.InEpsilon(t, tensor*want, l.Down, 1e-9, "layer %d", i)
		assert.InEpsilon(t, tensor*ggml.IQ2_XXS.BitsPerWeight(), l.Up, 1e-9, "layer %d", i)
	}
}

// GLM-4.7-Flash's Q4_K_M file (bartowski, a312ac950): 46 MoE layers after
// one dense one; the branch raises use_more_bits of the index among the
// ffn_down_exps tensors (22 of 46), mainline use_more_bits of the layer
// (22 of layers 1-46): as many Q6_K tensors either way, so the file's
// extra lies in the tensors the catalog note names (attention, shared
// experts), not in the routed experts.
func TestFileRoutedExpertsQuantTypesGLM47FlashQ4KM(t *testing.T) {
	m := model.Lookup("GLM-4.7-Flash")
	require.NotNil(t, m)
	mainline, ok := RoutedExpertBytes(m, "q4_k_m")
	require.True(t, ok)
	file, ok := FileRoutedExperts(m, "q4_k_m", catalogGGUF(t, "GLM-4.7-Flash", "q4_k_m"))
	require.True(t, ok)
	assert.InEpsilon(t, mainline.Total(), file.Total(), 1e-12)
}

// Laguna-S-2.1's Q4_K_M file (96 GB, "imatrix-quantized routed experts and
// a Q8_0 signal path"): the other tensors at Q8_0's types hold 1.5 GB more
// than mainline's Q4_K_M mix gives them, the experts the rest of the 25.2
// GB; every layer's experts grow by the same factor, their types not
// being stated.
func TestFileRoutedExpertsSignalPathLagunaQ4KM(t *testing.T) {
	m := model.Lookup("Laguna-S-2.1")
	require.NotNil(t, m)
	ck := catalogGGUF(t, "Laguna-S-2.1", "q4_k_m")
	require.Equal(t, "q8_0", ck.SizeMixOther)
	mainline, ok := RoutedExpertBytes(m, "q4_k_m")
	require.True(t, ok)
	q8, ok := RoutedExpertBytes(m, "q8_0")
	require.True(t, ok)
	file, ok := FileRoutedExperts(m, "q4_k_m", ck)
	require.True(t, ok)
	other := func(l Level, e RoutedExperts) float64 { return float64(WeightsBytes(m, l)) - e.Total() }
	otherExtra := other("q8_0", q8) - other("q4_k_m", mainline)
	assert.InDelta(t, 1.5e9, otherExtra, 0.1e9)
	extra := float64(FileExtraBytes(m, "q4_k_m", ck))
	assert.InEpsilon(t, extra-otherExtra, file.Total()-mainline.Total(), 1e-9)
	grow := file.Total() / mainline.Total()
	for i, l := range file.ByLayer {
		assert.InEpsilon(t, mainline.ByLayer[i].Total()*grow+1, l.Total()+1, 1e-9, "layer %d", i)
	}
}

// Its Q8_0 file (129 GB, "routed experts quantized to Q8_0 and the signal
// path kept in BF16"): the experts are mainline's Q8_0 experts, the extra
// lies in the other tensors.
func TestFileRoutedExpertsMainlineExpertsLagunaQ80(t *testing.T) {
	m := model.Lookup("Laguna-S-2.1")
	require.NotNil(t, m)
	mainline, ok := RoutedExpertBytes(m, "q8_0")
	require.True(t, ok)
	file, ok := FileRoutedExperts(m, "q8_0", catalogGGUF(t, "Laguna-S-2.1", "q8_0"))
	require.True(t, ok)
	assert.Equal(t, mainline.Total(), file.Total())
}

// A file whose rules are not known by part spreads its extra over the
// experts and the rest in proportion to their derived bytes; a file of
// mainline's rules has no file experts.
func TestFileRoutedExpertsInProportionWithoutRules(t *testing.T) {
	m := model.Lookup("Laguna-S-2.1")
	require.NotNil(t, m)
	ck := catalogGGUF(t, "Laguna-S-2.1", "q4_k_m")
	ck.SizeMixOther = ""
	mainline, _ := RoutedExpertBytes(m, "q4_k_m")
	file, ok := FileRoutedExperts(m, "q4_k_m", ck)
	require.True(t, ok)
	share := mainline.Total() / float64(WeightsBytes(m, "q4_k_m"))
	assert.InEpsilon(t, share*float64(FileExtraBytes(m, "q4_k_m", ck)), file.Total()-mainline.Total(), 1e-9)
	ck.SizeMix = ""
	_, ok = FileRoutedExperts(m, "q4_k_m", ck)
	assert.False(t, ok)
}
