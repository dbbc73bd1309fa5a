package modelio

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/model"
	"github.com/ai-hwaccel/ai-hwaccel/internal/quant"
)

// TestLayoutFromPublishedConfigs: the quantization_config of published
// config.json files (testdata/configs/SOURCES.md) says which parts of the
// model are quantized and how: compressed-tensors' config group and
// ignore list (Kimi-K2.5's in its text_config; Laguna's FP8 blocks),
// transformers' fp8 with modules_to_not_convert (Qwen3-30B-A3B-FP8, whose
// list names norms and routers only: every linear layer but the head is
// FP8), and DeepSeek's fp8 (e4m3, weight_block_size [128, 128], no ignore
// list: a float32 weight_scale_inv per 128x128 tile of every linear layer
// but the head).
func TestLayoutFromPublishedConfigs(t *testing.T) {
	cases := []struct {
		file string
		want model.WeightLayout
	}{
		{"kimi-k2.5.json", model.WeightLayout{Quant: "int4", Bits: 4, Strategy: "group", GroupSize: 32, ScaleBits: 16,
			Quantized: []string{model.PartRoutedExperts, model.PartMixer}}},
		{"laguna-xs.2-fp8.json", model.WeightLayout{Quant: "fp8", Bits: 8, Strategy: "block", BlockSize: 128, ScaleBits: 16,
			Quantized: []string{model.PartDenseMLP, model.PartSharedExperts, model.PartRoutedExperts, model.PartMixer}}},
		{"laguna-s-2.1-fp8.json", model.WeightLayout{Quant: "fp8", Bits: 8, Strategy: "block", BlockSize: 128, ScaleBits: 16,
			Quantized: []string{model.PartRoutedExperts, model.PartMixer}}},
		{"qwen3-30b-a3b-fp8.json", model.WeightLayout{Quant: "fp8", Bits: 8, Strategy: "block", BlockSize: 128, ScaleBits: 32,
			Quantized: []string{model.PartAttention, model.PartDenseMLP, model.PartSharedExperts, model.PartRoutedExperts, model.PartMixer}}},
		{"deepseek-v3.json", model.WeightLayout{Quant: "fp8", Bits: 8, Strategy: "block", BlockSize: 128, ScaleBits: 32,
			Quantized: []string{model.PartAttention, model.PartDenseMLP, model.PartSharedExperts, model.PartRoutedExperts, model.PartMixer}}},
		{"deepseek-r1.json", model.WeightLayout{Quant: "fp8", Bits: 8, Strategy: "block", BlockSize: 128, ScaleBits: 32,
			Quantized: []string{model.PartAttention, model.PartDenseMLP, model.PartSharedExperts, model.PartRoutedExperts, model.PartMixer}}},
	}
	for _, c := range cases {
		cfg, _ := loadFixtureConfig(t, c.file)
		m, err := model.FromConfig(cfg)
		require.NoError(t, err, c.file)
		assert.Equal(t, c.want, m.Layout, c.file)
	}
	// A config without quantization_config has no layout.
	cfg, _ := loadFixtureConfig(t, "qwen3.5-35b-a3b.json")
	m, err := model.FromConfig(cfg)
	require.NoError(t, err)
	assert.True(t, m.Layout.IsZero())
}

// TestCatalogLayoutsAreTheirConfigs: the layouts the catalog records on
// checkpoints whose config copy lacks quantization_config are what the
// published configs say, and a model read from the config with it weighs
// what the catalog's does at the checkpoint's level.
func TestCatalogLayoutsAreTheirConfigs(t *testing.T) {
	for file, name := range map[string]string{
		"kimi-k2.5.json":        "Kimi-K2.5",
		"laguna-xs.2-fp8.json":  "Laguna-XS.2",
		"laguna-s-2.1-fp8.json": "Laguna-S-2.1",
		"deepseek-v3.json":      "DeepSeek-V3",
		"deepseek-r1.json":      "DeepSeek-R1",
	} {
		cfg, _ := loadFixtureConfig(t, file)
		fromConfig, err := model.FromConfig(cfg)
		require.NoError(t, err, file)
		catalog := model.Lookup(name)
		require.NotNil(t, catalog, name)
		ck := catalog.NativeCheckpoint()
		require.NotNil(t, ck, name)
		recorded := ck.Layout
		recorded.Source = ""
		read := fromConfig.Layout
		// A model without recurrent mixers has no mixer part to record.
		read.Quantized = without(read.Quantized, model.PartMixer)
		assert.Equal(t, read, recorded, name)

		l := quant.Level(ck.Quant)
		bare := *catalog
		bare.Checkpoints, bare.Layout = nil, fromConfig.Layout
		assert.Equal(t, quant.WeightsBytes(catalog, l), quant.WeightsBytes(&bare, l), name)
	}
}

func without(l []string, s string) []string {
	var out []string
	for _, x := range l {
		if x != s {
			out = append(out, x)
		}
	}
	return out
}
