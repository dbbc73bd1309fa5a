package plan

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// h200WithP40 is the h200-vm fixture's detected registry (its golden
// detect answer) with a Tesla P40 added as cuda:1: vLLM claims the H200,
// llama.cpp the P40, below vLLM's compute-capability floor of 7.0.
func h200WithP40(t *testing.T) *registry.Registry {
	r := *h200Detected(t)
	p40 := detectedCUDA("Tesla P40", 24<<30, "6.1")
	p40.ID, p40.Index = registry.DeviceID(registry.KindCUDA, 1), 1
	r.Devices = append(r.Devices, p40)
	require.NoError(t, r.Validate())
	return &r
}

// TestMixedGPUsBudgetLinesNameTheirDevices: on the H200 with a P40 added
// and no engine named, vLLM plans the H200 and llama.cpp the P40; the
// explanation's budget lines say which engine plans which devices. The one
// budget line named only vLLM, "the default for cuda_gpu devices", though
// the P40's rows were planned for llama.cpp.
func TestMixedGPUsBudgetLinesNameTheirDevices(t *testing.T) {
	for _, body := range []string{`{"model":{"name":"Llama-3.1-8B"}}`, `{"model":{"name":"Llama-3.1-70B"},"quant":"bf16"}`} {
		a := shard(t, request(t, body, h200WithP40(t)))
		var budget []string
		for _, l := range a.Explanation {
			if strings.HasPrefix(l, "budget: ") {
				budget = append(budget, l)
			}
		}
		require.Len(t, budget, 2, body)
		assert.Contains(t, budget[0], "no engine named: vllm, the default for cuda:0 (NVIDIA H200", body)
		assert.Contains(t, budget[1], "no engine named: llama.cpp, the default for cuda:1 (Tesla P40", body)
		assert.NotContains(t, strings.Join(budget, "\n"), "the default for cuda_gpu devices", body)
	}

	// One engine for every device keeps the one line by kind.
	a := shard(t, request(t, `{"model":{"name":"Llama-3.1-8B"},"engine":"llama.cpp"}`, h200WithP40(t)))
	n := 0
	for _, l := range a.Explanation {
		if strings.HasPrefix(l, "budget: ") {
			n++
			assert.Contains(t, l, "engine llama.cpp plans")
		}
	}
	assert.Equal(t, 1, n)
}

// TestMixedGPUsIdleHintStaysInItsPool: the H200's vLLM plan leaves the P40
// idle, but no tensor_parallel_size or vLLM replica would use a P40 (below
// vLLM's floor): the idle line says which engine the P40 is planned by,
// not "tensor_parallel_size 2 or replicas would use them".
func TestMixedGPUsIdleHintStaysInItsPool(t *testing.T) {
	a := shard(t, request(t, `{"model":{"name":"Llama-3.1-8B"}}`, h200WithP40(t)))
	require.True(t, a.Fits)
	require.Contains(t, a.EngineArgs, "vllm")
	assert.Equal(t, []string{"cuda:1"}, a.IdleDevices)
	var idle string
	for _, l := range a.Explanation {
		if strings.HasPrefix(l, "idle: ") {
			idle = l
		}
	}
	assert.NotContains(t, idle, "tensor_parallel_size")
	assert.NotContains(t, idle, "replicas")
	assert.Contains(t, idle, "cuda:1 (Tesla P40) is planned by llama.cpp, not vllm")
}
