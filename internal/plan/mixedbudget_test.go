package plan

import (
	"slices"
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
	require.True(t, a.Fits.Yes())
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

// TestMixedGPUsGGUFBudgetNamesEachDevicesDefault: with no engine named and
// a GGUF quant, the H200 and the P40 form one llama.cpp pool, but only the
// H200's default (vLLM) was overridden: the P40's own default is
// llama.cpp. The budget followed the pool's first device: "chosen for the
// GGUF quant q2_k over vllm, the default for cuda_gpu devices", and with
// the P40 listed first, "llama.cpp, the default for cuda_gpu devices" with
// no engine_chosen_for at all. Llama-3.1-405B at q2_k needs both GPUs.
func TestMixedGPUsGGUFBudgetNamesEachDevicesDefault(t *testing.T) {
	r := h200WithP40(t)
	a := shard(t, request(t, `{"model":{"name":"Llama-3.1-405B"},"quant":"q2_k","context_length":4096}`, r))
	require.True(t, a.Fits.Yes(), a.Explanation)
	require.Len(t, a.Shards, 2)
	require.NotNil(t, a.Budget)
	assert.Equal(t, "the GGUF quant q2_k", a.Budget.EngineChosenFor)
	assert.Equal(t, []string{"cuda:0"}, a.Budget.EngineChosenOn)
	want := "no engine named: llama.cpp, the default for cuda:1 (Tesla P40), chosen for the GGUF quant q2_k over vllm, the default for cuda:0 (NVIDIA H200),"
	assert.Contains(t, a.Budget.Source, want)
	assert.NotEmpty(t, explanationWith(a.Explanation, "budget: "+want), "%q", a.Explanation)

	// The P40 first: the same budget, the devices named as they are.
	swapped := *r
	swapped.Devices = append([]registry.Device(nil), r.Devices...)
	for i := range swapped.Devices {
		switch swapped.Devices[i].Name {
		case "Tesla P40":
			swapped.Devices[i].ID, swapped.Devices[i].Index = registry.DeviceID(registry.KindCUDA, 0), 0
		case "NVIDIA H200":
			swapped.Devices[i].ID, swapped.Devices[i].Index = registry.DeviceID(registry.KindCUDA, 1), 1
		}
	}
	slices.SortStableFunc(swapped.Devices, func(x, y registry.Device) int { return strings.Compare(x.ID, y.ID) })
	b := shard(t, request(t, `{"model":{"name":"Llama-3.1-405B"},"quant":"q2_k","context_length":4096}`, &swapped))
	require.True(t, b.Fits.Yes(), b.Explanation)
	require.NotNil(t, b.Budget)
	assert.Equal(t, "the GGUF quant q2_k", b.Budget.EngineChosenFor)
	assert.Equal(t, []string{"cuda:1"}, b.Budget.EngineChosenOn)
	assert.Contains(t, b.Budget.Source, "no engine named: llama.cpp, the default for cuda:0 (Tesla P40), chosen for the GGUF quant q2_k over vllm, the default for cuda:1 (NVIDIA H200),")

	// Named engine, or every device of one default: nothing changes.
	c := shard(t, request(t, `{"model":{"name":"Llama-3.1-405B"},"quant":"q2_k","engine":"llama.cpp","context_length":4096}`, r))
	require.NotNil(t, c.Budget)
	assert.Empty(t, c.Budget.EngineChosenOn)
	assert.Empty(t, c.Budget.EngineChosenFor)
}
