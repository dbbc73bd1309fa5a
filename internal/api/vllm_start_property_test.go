package api

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	json "github.com/goccy/go-json"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/model"
)

// servingSample is the catalog sample the serving property tests plan: the
// headline models named here (dense, GQA, sliding-window, MoE, MLA) and
// every catalogStride-th catalog entry besides.
var servingSample = func() []string {
	names := []string{"Llama-3.1-8B", "Llama-3.3-70B-Instruct", "gemma-2-27b", "Mixtral-8x7B-v0.1",
		"gpt-oss-20b", "DeepSeek-V2-Lite", "Qwen2.5-32B"}
	const catalogStride = 17
	for i, e := range model.Catalog() {
		if i%catalogStride == 0 {
			names = append(names, e.Name)
		}
	}
	return names
}()

// servingVariants are the context and batch asked of each sample model, one
// per (machine, model) pair in turn: no context (the plan chooses one),
// a short one at a batch, a long one.
var servingVariants = []string{``, `,"context_length":4096,"batch_size":16`, `,"context_length":32768`, `,"context_length":131072,"batch_size":4`}

// TestFittingVLLMPlansStart: on every fixture machine, a vLLM plan of the
// catalog sample that fits is one vLLM's own start-up accounting starts
// (engine_expect.vllm carries no warning that one sequence does not fit the
// KV cache vLLM leaves), at the context it emits.
func TestFittingVLLMPlansStart(t *testing.T) {
	machines, err := os.ReadDir(filepath.Join("..", "..", "testdata", "machines"))
	require.NoError(t, err)
	fitting := 0
	for mi, m := range machines {
		if !m.IsDir() || goldenSkip[m.Name()] {
			continue
		}
		for i, name := range servingSample {
			v := servingVariants[(mi+i)%len(servingVariants)]
			body := fmt.Sprintf(`{"model":{"name":%q},"engine":"vllm"%s}`, name, v)
			a := servingPlan(t, m.Name(), body)
			if a["fits"] != true {
				continue
			}
			ex, _ := a["engine_expect"].(map[string]any)
			x, ok := ex["vllm"].(map[string]any)
			if !ok {
				continue // offloaded, or on no accelerator
			}
			fitting++
			assert.NotContains(t, x, "warning", "%s on %s: %v", body, m.Name(), x["warning"])
		}
	}
	require.Greater(t, fitting, 50, "the sample must hold fitting vLLM plans to check")
}

// servingPlan is fullPlan's answer, nil where the request is refused as
// invalid (a context past a sample model's maximum).
func servingPlan(t *testing.T, machine, request string) map[string]any {
	t.Helper()
	detect := fixtureDetect(t, machine)
	out := PlanSharding(context.Background(), []byte(request[:len(request)-1]+`,"detect":`+detect+`}`), NoEnv)
	var a map[string]any
	require.NoError(t, json.Unmarshal(out, &a), "%s", out)
	if e, ok := a["error"].(map[string]any); ok {
		require.Equal(t, "invalid_argument", e["code"], "%s", out)
		return nil
	}
	return a
}

// TestFittingSGLangPlansHoldOneSequence: on every fixture machine, an
// SGLang plan of the catalog sample that fits leaves SGLang a pool of at
// least one full context (engine_expect.sglang.max_total_num_tokens at
// least --context-length), at the layout's own --mem-fraction-static and
// after its process groups.
func TestFittingSGLangPlansHoldOneSequence(t *testing.T) {
	machines, err := os.ReadDir(filepath.Join("..", "..", "testdata", "machines"))
	require.NoError(t, err)
	fitting, parallel := 0, 0
	for mi, m := range machines {
		if !m.IsDir() || goldenSkip[m.Name()] {
			continue
		}
		for i, name := range servingSample {
			v := servingVariants[(mi+i)%len(servingVariants)]
			body := fmt.Sprintf(`{"model":{"name":%q},"engine":"sglang"%s}`, name, v)
			a := servingPlan(t, m.Name(), body)
			if a["fits"] != true {
				continue
			}
			ex, _ := a["engine_expect"].(map[string]any)
			x, ok := ex["sglang"].(map[string]any)
			if !ok {
				continue
			}
			args := argsOf(a, "sglang")
			ctx := 0
			for j := 0; j+1 < len(args); j++ {
				if args[j] == "--context-length" {
					_, err := fmt.Sscan(args[j+1], &ctx)
					require.NoError(t, err)
				}
			}
			require.Positive(t, ctx, "%s on %s: %v", body, m.Name(), args)
			fitting++
			if tp, _ := a["tp_size"].(float64); tp > 1 {
				parallel++
			}
			tokens, _ := x["max_total_num_tokens"].(float64)
			assert.GreaterOrEqual(t, tokens, float64(ctx), "%s on %s (tp %v): %v", body, m.Name(), a["tp_size"], x)
		}
	}
	require.Greater(t, fitting, 50, "the sample must hold fitting SGLang plans to check")
	require.Greater(t, parallel, 5, "and tensor-parallel ones")
}
