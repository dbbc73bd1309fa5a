package api

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// vLLM and SGLang load a checkpoint whose weights are fp8 in 128x128
// blocks (quantization_config weight_block_size [128, 128]) only where
// each tensor-parallel rank's share of an FFN matrix is whole blocks:
// Fp8MoEMethod.create_weights raises "The output_size of gate's and up's
// weight = 192 is not divisible by weight quantization block_n = 128"
// (vllm/model_executor/layers/quantization/fp8.py of ROCm/vllm @
// f8c9a385), which vLLM's MiniMax-M2.5 recipe states as "Pure TP8 is not
// supported" (vllm-project/recipes models/MiniMaxAI/MiniMax-M2.5.yaml @
// 8959cf64: intermediate_size / 8 = 192). A plan at fp8 on the dgx-h100
// fixture's eight H100s must not print a tensor-parallel size the
// checkpoint's experts refuse.
func TestFP8BlockCheckpointKeepsWholeBlocksPerRank(t *testing.T) {
	for _, c := range []struct {
		model  string
		expert int // the routed expert's FFN width (moe_intermediate_size)
	}{
		{"Qwen3-235B-A22B", 1536}, // Qwen/Qwen3-235B-A22B-FP8
		{"Qwen3-30B-A3B", 768},    // Qwen/Qwen3-30B-A3B-FP8
		{"MiniMax-M2.5", 1536},    // MiniMaxAI/MiniMax-M2.5 (its native fp8)
		// Qwen/Qwen3-Next-80B-A3B-Instruct-FP8: experts and shared expert
		// 512 wide; at TP 8 SGLang refuses it with "The output_size of
		// gate's and up's weight = 64 is not divisible by weight
		// quantization block_n = 128" (sgl-project/sglang issue 10852).
		{"Qwen3-Next-80B-A3B-Instruct", 512},
	} {
		for _, e := range []string{"vllm", "sglang"} {
			t.Run(c.model+"/"+e, func(t *testing.T) {
				a := fullPlan(t, "dgx-h100", fmt.Sprintf(`{"model":{"name":%q},"engine":%q,"quant":"fp8"}`, c.model, e))
				require.Equal(t, true, a["fits"], "%v", a["explanation"])
				tp := int(a["tp_size"].(float64))
				assert.Zero(t, c.expert/tp%128, "TP %d gives each rank %d of the %d-wide experts, not whole 128-wide blocks", tp, c.expert/tp, c.expert)
			})
		}
	}
}

// The plan says why it stops short of the domain's eight ranks, and a
// tensor-parallel size asked for that breaks the blocks is refused at fp8
// with the size that does not.
func TestFP8BlockTPIsExplained(t *testing.T) {
	a := fullPlan(t, "dgx-h100", `{"model":{"name":"MiniMax-M2.5"},"engine":"vllm"}`)
	assert.Contains(t, explanation(a), `tensor parallel: size 8 not planned: a rank would hold 192 columns of the model's 1536-wide FFN, not whole 128x128 blocks of the checkpoint's fp8 weights`)

	forced := fullPlan(t, "dgx-h100", `{"model":{"name":"MiniMax-M2.5"},"engine":"vllm","quant":"fp8","tensor_parallel_size":8}`)
	assert.Equal(t, false, forced["fits"])
	assert.Contains(t, forced["refusal"].(map[string]any)["text"], `tensor_parallel_size 8 gives each rank 192 columns of the model's 1536-wide FFN`)
	assert.Contains(t, forced["refusal"].(map[string]any)["text"], `tensor_parallel_size 4 splits it whole`)

	// A block known from an engine's refusal (the catalog's split_block,
	// no layout recorded) rules the same way.
	next := fullPlan(t, "dgx-h100", `{"model":{"name":"Qwen3-Next-80B-A3B-Instruct"},"engine":"sglang","quant":"fp8","tensor_parallel_size":8}`)
	assert.Equal(t, false, next["fits"])
	assert.Contains(t, next["refusal"].(map[string]any)["text"], `tensor_parallel_size 8 gives each rank 64 columns of the model's 512-wide FFN`)
}
