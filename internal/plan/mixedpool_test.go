package plan

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// A GPU below llama.cpp's CUDA floor (a Tesla K80, compute capability 3.7)
// runs nothing under it, whatever its memory: DeepSeek-R1 with llama.cpp
// named on 4 H100s beside a K80 of known memory was refused unsupported at
// every level ("no kernels below compute capability 5.0 ... Tesla K80"),
// the K80 in the H100s' pool refusing it for them, while with the K80's
// memory unknown (left out) it fits the H100s. The K80 is a pool of its own
// (engine.DeviceFloor, as under vLLM and SGLang), and the idle line says
// why it stays unused.
func TestLlamaCPPBelowFloorGPUIsAPoolOfItsOwn(t *testing.T) {
	const body = `{"model":{"name":"DeepSeek-R1"},"engine":"llama.cpp"}`
	unknown := shard(t, request(t, body, h100sBesideK80(t, 0)))
	require.Equal(t, FitYes, unknown.Fits, "the premise: with the K80 left out for its memory, the H100s hold it")

	a := shard(t, request(t, body, h100sBesideK80(t, 12<<30)))
	require.Equal(t, FitYes, a.Fits, "%s", dump(t, a))
	assert.Equal(t, unknown.Quant, a.Quant, "the K80's memory changes nothing: it runs no level")
	for _, sh := range a.Shards {
		assert.NotEqual(t, "cuda:4", sh.DeviceID)
	}
	assert.Contains(t, a.IdleDevices, "cuda:4")
	idle := lineStarting(a.Explanation, "idle:")
	assert.Contains(t, idle, "cuda:4 (Tesla K80) runs nothing under llama.cpp")
	assert.Contains(t, idle, "compute capability 5.0")
}

// lineStarting is the first line of lines that starts with prefix, "" when
// none does.
func lineStarting(lines []string, prefix string) string {
	for _, l := range lines {
		if strings.HasPrefix(l, prefix) {
			return l
		}
	}
	return ""
}

// v100AndH100 is a Tesla V100 (compute capability 7.0, no bf16) beside an
// H100 of known memory, each as detection reports it.
func v100AndH100(t *testing.T) *registry.Registry {
	v100 := detectedCUDA("Tesla V100-SXM2-32GB", 32<<30, "7.0")
	h := detectedCUDA("NVIDIA H100 80GB HBM3", 81559<<20, "9.0")
	h.ID, h.Index = registry.DeviceID(registry.KindCUDA, 1), 1
	return reg(t, []registry.Device{v100, h})
}

// A bf16 request on a V100 beside an H100 was refused unsupported,
// "cuda_gpu (nvidia) devices do not support bf16", though the H100 alone
// runs and holds Llama-3.1-8B at bf16: both were one pool, and a pool runs
// a level only where every device does. The level is planned on the
// devices that run it (levelPool), and the idle line says why the V100 is
// left out. Under auto the plan was fp16 on the H100 alone; bf16 on that
// same GPU is the better level, so auto takes it.
func TestBF16IsPlannedOnTheGPUsThatRunIt(t *testing.T) {
	for _, body := range []string{
		`{"model":{"name":"Llama-3.1-8B"},"quant":"bf16"}`,
		`{"model":{"name":"Llama-3.1-8B"}}`,
	} {
		a := shard(t, request(t, body, v100AndH100(t)))
		require.Equal(t, FitYes, a.Fits, "%s: %s", body, dump(t, a))
		assert.Equal(t, "bf16", a.Quant, body)
		require.Len(t, a.Shards, 1, body)
		assert.Equal(t, "cuda:1", a.Shards[0].DeviceID, body)
		idle := lineStarting(a.Explanation, "idle:")
		assert.Contains(t, idle, "cuda:0 (Tesla V100-SXM2-32GB) does not run bf16 under vLLM", body)
		assert.NotContains(t, idle, "replicas", "%s: no replica of a bf16 plan runs on the V100", body)
	}
}

// Where the devices that run the better level do not hold the model, auto
// takes the next level every device runs: Mixtral-8x7B-v0.1 (93 GB at 16
// bits) fits neither GPU alone, the V100 and the H100 together at fp16. Its
// bf16 row says it does not fit the H100, the device that runs bf16.
func TestLevelEveryGPURunsWhereTheOthersDoNotHoldIt(t *testing.T) {
	a := shard(t, request(t, `{"model":{"name":"Mixtral-8x7B-v0.1"},"context_length":4096}`, v100AndH100(t)))
	require.Equal(t, FitYes, a.Fits, "%s", dump(t, a))
	assert.Equal(t, "fp16", a.Quant)
	assert.Len(t, a.Shards, 2)
	require.NotEmpty(t, a.Levels)
	assert.Equal(t, "bf16", a.Levels[0].Quant)
	assert.Equal(t, FitNo, a.Levels[0].Fits)
	assert.Contains(t, a.Levels[0].Reason, "left out: cuda:0 (Tesla V100-SXM2-32GB) does not run bf16 under vLLM")
}
