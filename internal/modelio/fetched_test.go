package modelio

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"

	json "github.com/goccy/go-json"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/errs"
	"github.com/ai-hwaccel/ai-hwaccel/internal/model"
)

// graniteRepo holds ibm-granite/granite-3.1-1b-a400m-instruct's config.json
// and model.safetensors.index.json as published (testdata/hub/SOURCES.md).
var graniteRepo = filepath.Join("..", "..", "testdata", "hub", "ibm-granite--granite-3.1-1b-a400m-instruct")

func graniteFiles(t *testing.T) (cfg, index map[string]any) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(graniteRepo, "config.json"))
	require.NoError(t, err)
	cfg, err = DecodeConfig(b)
	require.NoError(t, err)
	b, err = os.ReadFile(filepath.Join(graniteRepo, "model.safetensors.index.json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &index))
	return cfg, index
}

func TestSafetensorsIndexTotalSizeIsTheWeights(t *testing.T) {
	cfg, index := graniteFiles(t)
	m, err := Resolve(model.Spec{Config: cfg, SafetensorsIndex: index})
	require.NoError(t, err)
	// torch_dtype float32: total_size is 4 bytes for each parameter.
	assert.Equal(t, "fp32", m.FileQuant)
	assert.Equal(t, int64(5338513408), m.FileWeightBytes)
	assert.Equal(t, "config.json + safetensors index (weights: metadata.total_size, fp32)", m.Source)
	// The shape read from config.json agrees with the checkpoint within 1 %.
	assert.InEpsilon(t, 5338513408/4, float64(m.Params), 0.01)
}

func TestSafetensorsIndexOfAQuantizedCheckpointIsANote(t *testing.T) {
	cfg, index := graniteFiles(t)
	cfg["quantization_config"] = map[string]any{"quant_method": "fp8"}
	m, err := Resolve(model.Spec{Config: cfg, SafetensorsIndex: index})
	require.NoError(t, err)
	assert.Zero(t, m.FileWeightBytes)
	assert.Empty(t, m.FileQuant)
	require.NotEmpty(t, m.Notes)
	assert.Contains(t, m.Notes[len(m.Notes)-1], "5338513408 bytes")
}

func TestSafetensorsIndexTotalParameters(t *testing.T) {
	cfg, index := graniteFiles(t)
	index["metadata"].(map[string]any)["total_parameters"] = float64(1334628352)
	m, err := Resolve(model.Spec{Config: cfg, SafetensorsIndex: index})
	require.NoError(t, err)
	assert.Equal(t, int64(1334628352), m.Params)
	assert.Contains(t, m.Source, "metadata.total_parameters")
}

func TestFetchedGGUFHeaderBytes(t *testing.T) {
	var w bytes.Buffer
	u32 := func(v uint32) { _ = binary.Write(&w, binary.LittleEndian, v) }
	u64 := func(v uint64) { _ = binary.Write(&w, binary.LittleEndian, v) }
	str := func(s string) { u64(uint64(len(s))); w.WriteString(s) }
	u32(ggufMagic)
	u32(3)
	u64(1)
	u64(1)
	str("general.architecture")
	u32(gString)
	str("llama")
	str("token_embd.weight")
	u32(2)
	u64(64)
	u64(100)
	u32(1) // F16
	u64(0)
	whole := w.Bytes()

	m, err := Resolve(model.Spec{GGUFHeader: base64.StdEncoding.EncodeToString(whole)})
	require.NoError(t, err)
	assert.Equal(t, int64(6400), m.Params)
	assert.Equal(t, "gguf header", m.Source)

	_, err = Resolve(model.Spec{GGUFHeader: base64.StdEncoding.EncodeToString(whole[:len(whole)-10])})
	require.Error(t, err)
	assert.Equal(t, errs.ModelFile, errs.CodeOf(err))
	assert.Contains(t, errs.MessageOf(err), "give more of the file's start")
}

func TestFetchedKeysCombine(t *testing.T) {
	cfg, index := graniteFiles(t)
	one := 1.0
	for _, tc := range []struct {
		name string
		spec model.Spec
		says string
	}{
		{"index without config", model.Spec{SafetensorsIndex: index}, "need the repository's config.json"},
		{"index and header", model.Spec{Config: cfg, SafetensorsIndex: index, SafetensorsHeader: "AAAA"}, "not both"},
		{"gguf with config", model.Spec{Config: cfg, GGUFHeader: "AAAA"}, "stands alone"},
		{"with a name", model.Spec{Name: "x", SafetensorsIndex: index}, "go with config only"},
		{"with params", model.Spec{Params: &one, GGUFHeader: "AAAA"}, "go with config only"},
		{"not base64", model.Spec{GGUFHeader: "@@@"}, "not standard base64"},
		{"index without weight_map", model.Spec{Config: cfg, SafetensorsIndex: map[string]any{"metadata": map[string]any{}}}, "weight_map"},
		{"too large", model.Spec{GGUFHeader: strings.Repeat("A", maxGGUFHeaderBytes/3*4+8)}, "larger than"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Resolve(tc.spec)
			require.Error(t, err)
			assert.Contains(t, errs.MessageOf(err), tc.says)
		})
	}
}
