package plan

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
