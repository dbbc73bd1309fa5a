package plan

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/precision"
	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// detectedCUDA is an NVIDIA GPU as detection reports it: its precision list
// filled from its compute capability (precision.CUDA of internal/precision), as
// nvidia-smi's compute_cap or the PCI id table gives it.
func detectedCUDA(name string, memBytes int64, cc string) registry.Device {
	d := gpu(registry.KindCUDA, 0, name, memBytes, cc)
	d.Vendor = "nvidia"
	d.Quantizations = precision.CUDA(cc)
	return d
}

// olderGPUs are GPUs whose precision list has no int4 (compute capability
// below 7.5), on which llama.cpp's CUDA backend runs every GGUF type: Volta,
// Pascal with dp4a (6.1) and the P100 (6.0, no dp4a: dequantize + cuBLAS).
var olderGPUs = []registry.Device{
	detectedCUDA("Tesla V100-PCIE-32GB", 32<<30, "7.0"),
	detectedCUDA("Tesla P40", 24<<30, "6.1"),
	detectedCUDA("Tesla P100-PCIE-16GB", 16<<30, "6.0"),
	detectedCUDA("NVIDIA GeForce GTX 1080", 8<<30, "6.1"),
}

// TestLlamaCPPRunsGGUFOnOlderGPUs: llama.cpp plans Q4_K_M on a V100, a P40,
// a P100 and a GTX 1080, whose precision lists have no int4; the engine
// answers from the compute capability, not from the list.
func TestLlamaCPPRunsGGUFOnOlderGPUs(t *testing.T) {
	for _, d := range olderGPUs {
		t.Run(d.Name, func(t *testing.T) {
			require.NotContains(t, d.Quantizations, "int4", "the fixture must be a GPU the list refuses int4 on")
			for _, body := range []string{
				`{"model":{"name":"Llama-3.1-8B"},"engine":"llama.cpp","quant":"q4_k_m"}`,
				`{"model":{"name":"Llama-3.1-8B"},"engine":"llama.cpp","quant":"int4"}`,
			} {
				a := shard(t, request(t, body, reg(t, []registry.Device{d})))
				require.True(t, a.Fits.Yes(), "%s: %s", body, dump(t, a.Levels))
				assert.Equal(t, "q4_k_m", a.Quant)
				assert.Nil(t, a.Refusal)
			}
		})
	}
}

// TestLlamaCPPRefusesKepler: below compute capability 5.0 (a Tesla K80,
// 3.7) llama.cpp's CUDA builds have no kernels, whatever the level, and the
// refusal says so.
func TestLlamaCPPRefusesKepler(t *testing.T) {
	k80 := detectedCUDA("Tesla K80", 12<<30, "3.7")
	a := shard(t, request(t, `{"model":{"name":"Llama-3.2-1B"},"engine":"llama.cpp","quant":"fp16"}`, reg(t, []registry.Device{k80})))
	require.False(t, a.Fits.Yes())
	require.NotNil(t, a.Refusal)
	assert.Equal(t, RefusalUnsupported, a.Refusal.Code)
	require.Len(t, a.Levels, 1)
	assert.Contains(t, a.Levels[0].Reason, "compute capability 5.0")
	assert.Contains(t, a.Levels[0].Reason, "3.7")
}

// TestVLLMAWQNeedsTuring: vLLM's AWQ kernels need compute capability 7.5;
// Llama-3.1-8B's published int4 checkpoint is AWQ, so a V100 (7.0) refuses it
// with vLLM's reason, and a T4 (7.5) plans it.
func TestVLLMAWQNeedsTuring(t *testing.T) {
	body := `{"model":{"name":"Llama-3.1-8B"},"engine":"vllm","quant":"int4"}`
	v100 := detectedCUDA("Tesla V100-PCIE-32GB", 32<<30, "7.0")
	a := shard(t, request(t, body, reg(t, []registry.Device{v100})))
	require.False(t, a.Fits.Yes())
	require.NotNil(t, a.Refusal)
	assert.Equal(t, RefusalUnsupported, a.Refusal.Code)
	require.Len(t, a.Levels, 1)
	assert.Contains(t, a.Levels[0].Reason, "AWQ")
	assert.Contains(t, a.Levels[0].Reason, "7.5")
	assert.Contains(t, a.Levels[0].Reason, "awq.py")

	t4 := detectedCUDA("Tesla T4", 15<<30, "7.5")
	a = shard(t, request(t, body, reg(t, []registry.Device{t4})))
	assert.True(t, a.Fits.Yes(), dump(t, a.Levels))
}

// TestVLLMGPTQLeftToDeviceList: vLLM has no rule of its own for GPTQ (its
// newer releases run GPTQ through Marlin, from 7.5), so a V100's precision
// list, which has no int4, refuses Llama-3.1-70B's named GPTQ checkpoint
// with the planner's sentence.
func TestVLLMGPTQLeftToDeviceList(t *testing.T) {
	v100 := func(i int) registry.Device {
		d := detectedCUDA("Tesla V100-SXM2-32GB", 32<<30, "7.0")
		d.ID, d.Index = registry.DeviceID(registry.KindCUDA, i), i
		return d
	}
	body := `{"model":{"name":"hugging-quants/Meta-Llama-3.1-70B-Instruct-GPTQ-INT4"},"engine":"vllm","quant":"int4","context_length":4096}`
	a := shard(t, request(t, body, reg(t, []registry.Device{v100(0), v100(1)})))
	require.False(t, a.Fits.Yes())
	require.Len(t, a.Levels, 1)
	assert.Equal(t, "cuda_gpu (nvidia) devices do not support int4", a.Levels[0].Reason)
}

// TestVLLMFP8ByCapability: vLLM's fp8 method needs compute capability 8.0
// and runs weights-only with its Marlin kernel below 8.9: an A100 (8.0),
// whose precision list has no fp8, plans fp8 with vLLM; a V100 refuses it
// with vLLM's reason; llama.cpp, which has no fp8 type, still refuses it on
// the A100.
func TestVLLMFP8ByCapability(t *testing.T) {
	a100 := detectedCUDA("NVIDIA A100-SXM4-80GB", 80<<30, "8.0")
	require.NotContains(t, a100.Quantizations, "fp8")
	a := shard(t, request(t, `{"model":{"name":"Llama-3.1-8B"},"engine":"vllm","quant":"fp8"}`, reg(t, []registry.Device{a100})))
	require.True(t, a.Fits.Yes(), dump(t, a.Levels))
	assert.Equal(t, "fp8", a.Quant)
	assert.Contains(t, strings.Join(a.Explanation, "\n"), "vLLM runs fp8 weight-only", "the plan says what vLLM does on a GPU without FP8 tensor cores")
	h100 := detectedCUDA("NVIDIA H100 80GB HBM3", 80<<30, "9.0")
	a = shard(t, request(t, `{"model":{"name":"Llama-3.1-8B"},"engine":"vllm","quant":"fp8"}`, reg(t, []registry.Device{h100})))
	require.True(t, a.Fits.Yes())
	assert.NotContains(t, strings.Join(a.Explanation, "\n"), "weight-only")

	v100 := detectedCUDA("Tesla V100-PCIE-32GB", 32<<30, "7.0")
	a = shard(t, request(t, `{"model":{"name":"Llama-3.1-8B"},"engine":"vllm","quant":"fp8"}`, reg(t, []registry.Device{v100})))
	require.False(t, a.Fits.Yes())
	require.Len(t, a.Levels, 1)
	assert.Contains(t, a.Levels[0].Reason, "8.0")
	assert.Contains(t, a.Levels[0].Reason, "fp8.py")

	a = shard(t, request(t, `{"model":{"name":"Llama-3.1-8B"},"engine":"llama.cpp","quant":"fp8"}`, reg(t, []registry.Device{a100})))
	require.False(t, a.Fits.Yes())
	require.Len(t, a.Levels, 1)
	assert.Contains(t, a.Levels[0].Reason, "llama.cpp has no fp8")
}

// TestEngineWithoutRuleKeepsDeviceList: where an engine has no rule of its
// own (vLLM's bf16 on CUDA), the device's precision list decides, with the
// planner's sentence.
func TestEngineWithoutRuleKeepsDeviceList(t *testing.T) {
	v100 := detectedCUDA("Tesla V100-PCIE-32GB", 32<<30, "7.0")
	a := shard(t, request(t, `{"model":{"name":"Llama-3.1-8B"},"engine":"vllm","quant":"bf16"}`, reg(t, []registry.Device{v100})))
	require.False(t, a.Fits.Yes())
	require.Len(t, a.Levels, 1)
	assert.Equal(t, "cuda_gpu (nvidia) devices do not support bf16", a.Levels[0].Reason)
}

// TestSGLangQuantFloors: SGLang's fp8 needs compute capability 8.0: fp8
// plans on an A100 and is refused on a T4 (7.5) with SGLang's fp8 reason;
// Llama-3.1-8B's AWQ checkpoint (AWQ kernels from 7.5, as vLLM's) plans on
// the T4. A V100 (7.0) is below SGLang itself (7.5), which is the reason
// its fp8 and AWQ rows give.
func TestSGLangQuantFloors(t *testing.T) {
	a100 := detectedCUDA("NVIDIA A100-SXM4-80GB", 80<<30, "8.0")
	t4 := detectedCUDA("Tesla T4", 15<<30, "7.5")
	v100 := detectedCUDA("Tesla V100-PCIE-32GB", 32<<30, "7.0")
	a := shard(t, request(t, `{"model":{"name":"Llama-3.1-8B"},"engine":"sglang","quant":"fp8"}`, reg(t, []registry.Device{a100})))
	require.True(t, a.Fits.Yes(), dump(t, a.Levels))

	a = shard(t, request(t, `{"model":{"name":"Llama-3.1-8B"},"engine":"sglang","quant":"fp8"}`, reg(t, []registry.Device{t4})))
	require.False(t, a.Fits.Yes())
	require.Len(t, a.Levels, 1)
	assert.Contains(t, a.Levels[0].Reason, "SGLang's fp8 kernels need compute capability 8.0")
	assert.Contains(t, a.Levels[0].Reason, "Tesla T4 has 7.5")
	a = shard(t, request(t, `{"model":{"name":"Llama-3.1-8B"},"engine":"sglang","quant":"int4"}`, reg(t, []registry.Device{t4})))
	assert.True(t, a.Fits.Yes(), dump(t, a.Levels))

	for _, quant := range []string{"fp8", "int4"} {
		a = shard(t, request(t, `{"model":{"name":"Llama-3.1-8B"},"engine":"sglang","quant":"`+quant+`"}`, reg(t, []registry.Device{v100})))
		require.False(t, a.Fits.Yes(), quant)
		require.Len(t, a.Levels, 1)
		assert.Contains(t, a.Levels[0].Reason, "SGLang needs compute capability 7.5")
		assert.Contains(t, a.Levels[0].Reason, "Tesla V100-PCIE-32GB has 7.0")
	}
}

// TestDefaultEngineBelowVLLMFloor: with no engine named, a Pascal GPU (below
// vLLM's compute capability 7.0) is planned with llama.cpp, a V100 (7.0)
// with vLLM; vLLM named on the Pascal GPU is refused at every level with
// vLLM's requirement, and SGLang named on the V100 (below its 7.5) with
// SGLang's.
func TestDefaultEngineBelowVLLMFloor(t *testing.T) {
	p40 := detectedCUDA("Tesla P40", 24<<30, "6.1")
	a := shard(t, request(t, `{"model":{"name":"Llama-3.1-8B"}}`, reg(t, []registry.Device{p40})))
	require.True(t, a.Fits.Yes(), dump(t, a.Levels))
	assert.Contains(t, a.EngineArgs, "llama.cpp")
	assert.NotContains(t, a.EngineArgs, "vllm")

	v100 := detectedCUDA("Tesla V100-PCIE-32GB", 32<<30, "7.0")
	a = shard(t, request(t, `{"model":{"name":"Llama-3.1-8B"}}`, reg(t, []registry.Device{v100})))
	require.True(t, a.Fits.Yes(), dump(t, a.Levels))
	assert.Contains(t, a.EngineArgs, "vllm")

	a = shard(t, request(t, `{"model":{"name":"Llama-3.1-8B"},"engine":"vllm"}`, reg(t, []registry.Device{p40})))
	require.False(t, a.Fits.Yes())
	require.NotNil(t, a.Refusal)
	assert.Equal(t, RefusalUnsupported, a.Refusal.Code)
	require.NotEmpty(t, a.Levels)
	for _, l := range a.Levels {
		assert.Contains(t, l.Reason, "vLLM needs compute capability 7.0", l.Quant)
		assert.Contains(t, l.Reason, "Tesla P40 has 6.1", l.Quant)
	}

	a = shard(t, request(t, `{"model":{"name":"Llama-3.1-8B"},"engine":"sglang","quant":"fp16"}`, reg(t, []registry.Device{v100})))
	require.False(t, a.Fits.Yes())
	require.Len(t, a.Levels, 1)
	assert.Contains(t, a.Levels[0].Reason, "SGLang needs compute capability 7.5")
	assert.Contains(t, a.Levels[0].Reason, "Tesla V100-PCIE-32GB has 7.0")
}

// TestDefaultEngineSplitsMixedGPUs: on a machine with an A100 and a P40 and
// no engine named, the two GPUs are claimed by different engines (vLLM,
// llama.cpp below vLLM's floor), so they are planned as two pools: the
// model fits on one of them with its own engine instead of the P40 refusing
// vLLM's levels for both.
func TestDefaultEngineSplitsMixedGPUs(t *testing.T) {
	a100 := detectedCUDA("NVIDIA A100-SXM4-80GB", 80<<30, "8.0")
	p40 := detectedCUDA("Tesla P40", 24<<30, "6.1")
	p40.ID, p40.Index = registry.DeviceID(registry.KindCUDA, 1), 1
	a := shard(t, request(t, `{"model":{"name":"Llama-3.1-8B"}}`, reg(t, []registry.Device{a100, p40})))
	require.True(t, a.Fits.Yes(), dump(t, a.Levels))
	assert.Contains(t, a.EngineArgs, "vllm", "the A100, with the most usable memory, is planned first")
	require.Len(t, a.Shards, 1)
	assert.Equal(t, "cuda:0", a.Shards[0].DeviceID)
}

// TestTrainingOnMixedGPUsLeavesOutTheOlder: bf16 training on an A100 and a
// P40 (no bf16: compute capability 6.1) trains on the A100 and says the P40
// is left out. The two formed one pool, which the P40 made fail as a
// whole, and the run was planned on host RAM ("cuda_gpu (nvidia) devices
// do not run bf16: skipped no accelerator runs bf16: estimating on host
// RAM"), with an A100 in the machine.
func TestTrainingOnMixedGPUsLeavesOutTheOlder(t *testing.T) {
	a100 := detectedCUDA("NVIDIA A100-SXM4-80GB", 80<<30, "8.0")
	p40 := detectedCUDA("Tesla P40", 24<<30, "6.1")
	p40.ID, p40.Index = registry.DeviceID(registry.KindCUDA, 1), 1
	r := trainGPUs(t, 0, 0)
	r.Devices = append(r.Devices, a100, p40)
	a := estimate(t, trainRequest(t, `{"model":{"name":"Llama-3.1-8B"},"training":{"method":"lora"}}`, r))
	require.True(t, a.Fits.Yes(), strings.Join(a.Explanation, "\n"))
	require.Len(t, a.Devices, 1)
	assert.Equal(t, "cuda:0", a.Devices[0].DeviceID)
	why := strings.Join(a.Explanation, "\n")
	assert.Contains(t, why, "cuda:1 (Tesla P40) does not run bf16: left out")
	assert.NotContains(t, why, "host RAM")

	// fp16, which both run, trains on both.
	a = estimate(t, trainRequest(t, `{"model":{"name":"Llama-3.1-8B"},"training":{"method":"lora","precision":"fp16"}}`, r))
	assert.Len(t, a.Devices, 2)
}

// TestMixedGPUsRefusalNamesTheDevice: where the default engines split one
// kind of GPU into two pools (an A100 for vLLM, a P40 for llama.cpp), a
// pool's refusal by the precision list names its devices: "cuda_gpu
// (nvidia) devices do not support bf16" stood beside the A100's refusal
// for memory, as if the A100 ran no bf16.
func TestMixedGPUsRefusalNamesTheDevice(t *testing.T) {
	a100 := detectedCUDA("NVIDIA A100-SXM4-80GB", 80<<30, "8.0")
	p40 := detectedCUDA("Tesla P40", 24<<30, "6.1")
	p40.ID, p40.Index = registry.DeviceID(registry.KindCUDA, 1), 1
	a := shard(t, request(t, `{"model":{"name":"Llama-3.1-70B"},"quant":"bf16"}`, reg(t, []registry.Device{a100, p40})))
	require.False(t, a.Fits.Yes())
	require.Len(t, a.Levels, 1)
	assert.Contains(t, a.Levels[0].Reason, "cuda:1 (Tesla P40) does not support bf16")
	assert.NotContains(t, a.Levels[0].Reason, "cuda_gpu (nvidia) devices do not support bf16")

	// One pool of one kind keeps the kind's wording.
	a = shard(t, request(t, `{"model":{"name":"Llama-3.1-8B"},"quant":"bf16"}`, reg(t, []registry.Device{p40})))
	require.Len(t, a.Levels, 1)
	assert.Contains(t, a.Levels[0].Reason, "cuda_gpu (nvidia) devices do not support bf16")
}

// TestSGLangRunsFloat16BelowAmpere: below compute capability 8.0 SGLang's
// ModelRunner.load_model sets the dtype to float16 whatever --dtype says
// ("Compute capability below sm80. Use float16 due to lack of bfloat16
// support.", python/sglang/srt/model_executor/model_runner.py). A T4 plan
// at fp32 printed --dtype float32 and sized 4-byte weights SGLang never
// loads; it is refused with SGLang's reason, fp16 plans, and so does fp32
// on an A100.
func TestSGLangRunsFloat16BelowAmpere(t *testing.T) {
	t4 := detectedCUDA("Tesla T4", 15<<30, "7.5")
	a := shard(t, request(t, `{"model":{"name":"Qwen2.5-1.5B"},"engine":"sglang","quant":"fp32"}`, reg(t, []registry.Device{t4})))
	require.False(t, a.Fits.Yes(), "%s", dump(t, a.EngineArgs))
	require.NotNil(t, a.Refusal)
	assert.Equal(t, RefusalUnsupported, a.Refusal.Code)
	require.Len(t, a.Levels, 1)
	assert.Contains(t, a.Levels[0].Reason, "float16")
	assert.Contains(t, a.Levels[0].Reason, "model_runner.py")
	assert.Contains(t, a.Levels[0].Reason, "7.5")

	a = shard(t, request(t, `{"model":{"name":"Qwen2.5-1.5B"},"engine":"sglang","quant":"fp16"}`, reg(t, []registry.Device{t4})))
	require.True(t, a.Fits.Yes(), dump(t, a.Levels))
	assert.Contains(t, strings.Join(a.EngineArgs["sglang"], " "), "--dtype float16")

	a100 := detectedCUDA("NVIDIA A100-SXM4-80GB", 80<<30, "8.0")
	a = shard(t, request(t, `{"model":{"name":"Qwen2.5-1.5B"},"engine":"sglang","quant":"fp32"}`, reg(t, []registry.Device{a100})))
	require.True(t, a.Fits.Yes(), dump(t, a.Levels))
	assert.Contains(t, strings.Join(a.EngineArgs["sglang"], " "), "--dtype float32")
}

// TestNamedVLLMLeavesOutGPUsBelowItsFloor: on a machine with an A100 and a
// P40, "engine": "vllm" put both GPUs in one pool (one kind, one vendor,
// one engine), and vLLM's floor (compute capability 7.0) refused the pool at
// every level for the P40: "does not fit: vLLM needs compute capability 7.0
// or higher ...; Tesla P40 has 6.1", an answer that sends the user away from
// an A100 vLLM runs on. As with no engine named (the P40 is llama.cpp's
// then) and as training does, a GPU the named engine runs nothing on is a
// pool of its own: the plan is the A100's and the P40 is named as left out.
func TestNamedVLLMLeavesOutGPUsBelowItsFloor(t *testing.T) {
	a100 := detectedCUDA("NVIDIA A100-PCIE-40GB", 40<<30, "8.0")
	p40 := detectedCUDA("Tesla P40", 24<<30, "6.1")
	p40.ID, p40.Index = registry.DeviceID(registry.KindCUDA, 1), 1
	r := reg(t, []registry.Device{a100, p40})
	a := shard(t, request(t, `{"model":{"name":"Qwen2.5-7B"},"engine":"vllm"}`, r))
	require.True(t, a.Fits.Yes(), "%s", dump(t, a.Explanation))
	require.Len(t, a.Shards, 1)
	assert.Equal(t, "cuda:0", a.Shards[0].DeviceID)
	assert.Equal(t, "bf16", a.Quant)
	idle := strings.Join(a.Explanation, "\n")
	assert.Contains(t, idle, "cuda:1 (Tesla P40) runs nothing under vllm: vLLM needs compute capability 7.0", "the idle line says why the P40 is left out")
	assert.NotContains(t, idle, "replicas (data parallel) would serve more sequences on them", "no layout of vLLM uses the P40")

	// Naming the A100 plans the same (what the docs told users to do).
	a = shard(t, request(t, `{"model":{"name":"Qwen2.5-7B"},"engine":"vllm","devices":["cuda:0"]}`, r))
	assert.True(t, a.Fits.Yes(), dump(t, a.Levels))

	// Asked for the P40 alone, vLLM still refuses it with its reason.
	a = shard(t, request(t, `{"model":{"name":"Qwen2.5-7B"},"engine":"vllm","devices":["cuda:1"]}`, r))
	require.False(t, a.Fits.Yes())
	require.NotNil(t, a.Refusal)
	assert.Contains(t, a.Refusal.Text, "vLLM needs compute capability 7.0")
}

// TestRejectedLineNamesEachPool: with no engine named, an A100 (vLLM's) and
// a P40 (llama.cpp's) are two pools, and a level neither holds was rejected
// with both pools' reasons joined, "fp16 needs 134.3 GiB on one device (...;
// largest 36.0 GiB free) and does not fit split over the 1 cuda_gpu (nvidia)
// device (36.0 GiB in all); doesn't fit: fp16 needs 131.6 GiB ... (23.1 GiB
// in all)": two figures for one level and no word of which GPU or engine
// each is. Where pools give different reasons, each is now named by its
// GPUs and engine.
func TestRejectedLineNamesEachPool(t *testing.T) {
	a100 := detectedCUDA("NVIDIA A100-PCIE-40GB", 40<<30, "8.0")
	p40 := detectedCUDA("Tesla P40", 24<<30, "6.1")
	p40.ID, p40.Index = registry.DeviceID(registry.KindCUDA, 1), 1
	a := shard(t, request(t, `{"model":{"name":"Llama-3.1-70B"}}`, reg(t, []registry.Device{a100, p40})))
	require.False(t, a.Fits.Yes())
	var fp16 LevelRow
	for _, r := range a.Levels {
		if r.Quant == "fp16" {
			fp16 = r
		}
	}
	require.NotEmpty(t, fp16.Reason)
	assert.True(t, strings.HasPrefix(fp16.Reason, "cuda:0 (NVIDIA A100-PCIE-40GB) under vLLM: fp16 needs "), fp16.Reason)
	assert.Contains(t, fp16.Reason, "; cuda:1 (Tesla P40) under llama.cpp: fp16 needs ")
	assert.NotContains(t, fp16.Reason, LevelMisfitPrefix)
	assert.Contains(t, a.Explanation, RejectedLine("fp16", fp16.Reason))

	// One pool, or pools giving the same reason: the reason alone.
	a = shard(t, request(t, `{"model":{"name":"Llama-3.1-70B"},"devices":["cuda:0"]}`, reg(t, []registry.Device{a100, p40})))
	for _, r := range a.Levels {
		assert.NotContains(t, r.Reason, " under vLLM: ", r.Quant)
	}
}
