package plan

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A vLLM cpu_offload plan runs on one GPU (--cpu-offload-gb is per GPU and
// not combined with tensor parallelism or replicas, streamedOffloadAt). On
// testdata/machines/dgx-h100 (8 H100s, 2 TB of host RAM) Kimi-K2.5 with
// --cpu-offload said "idle: cuda:1, ..., cuda:7 of the 9 present cuda_gpu
// (nvidia) devices stay unused: the plan needs 2; replicas (data parallel)
// would serve more sequences on them": the host's cpu:0 counted as a GPU,
// and --replicas 2 with --cpu-offload does not fit there. The line counts
// the GPUs and says the offload keeps to one.
func TestIdleLineOfAStreamedOffloadCountsTheGPUs(t *testing.T) {
	r := eightH100(t, true)
	a := shard(t, request(t, `{"model":{"name":"Kimi-K2.5"},"engine":"vllm","cpu_offload":true}`, r))
	require.True(t, a.Fits.Yes(), a.Explanation)
	require.Equal(t, StrategyOffload, a.Strategy)
	var line string
	for _, l := range a.Explanation {
		if strings.HasPrefix(l, "idle: ") {
			line = l
		}
	}
	require.NotEmpty(t, line, a.Explanation)
	assert.Contains(t, line, "of the 8 present cuda_gpu (nvidia) devices stay unused: the plan needs 1;")
	assert.NotContains(t, line, "replicas (data parallel) would serve more sequences")
	assert.NotContains(t, line, "tensor_parallel_size")
	assert.Contains(t, line, "cpu_offload")

	two := shard(t, request(t, `{"model":{"name":"Kimi-K2.5"},"engine":"vllm","cpu_offload":true,"replicas":2}`, r))
	assert.False(t, two.Fits.Yes(), "replicas with the offload would be a hint: %s", two.Explanation)
}
