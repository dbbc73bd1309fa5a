package plan

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/cputime"
	"github.com/ai-hwaccel/ai-hwaccel/internal/errs"
	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// Hostile but well-formed inputs are rejected or answered quickly, keeping
// the invariants.
func TestHostileShapesAreBounded(t *testing.T) {
	for _, b := range []string{
		`{"model":{"config":{"num_hidden_layers":2000000000,"hidden_size":64,"num_attention_heads":1,"vocab_size":10,"intermediate_size":64}}}`,
		// 16 Mi tokens x 1 Mi sequences: zettabytes of KV cache, which
		// int64 byte counts would overflow into a "fitting" plan.
		`{"model":{"params":1e14},"context_length":16777216,"batch_size":1048576}`,
	} {
		_, err := decode([]byte(b))
		require.Error(t, err, b)
		assert.Equal(t, errs.InvalidArgument, errs.CodeOf(err))
	}

	var devs []registry.Device
	for i := 0; i < 4096; i++ {
		devs = append(devs, gpu(registry.KindCUDA, i, "X", int64(1+i%7)*gibBytes, "9.0"))
	}
	all := make([]string, len(devs))
	for i := range devs {
		all[i] = devs[i].ID
	}
	r := reg(t, devs, link(registry.LinkNVSwitch, 900, all...))
	bodies := []string{
		`{"model":{"config":{"num_hidden_layers":60000,"hidden_size":8192,"num_attention_heads":64,"vocab_size":32000,"intermediate_size":28672}}}`,
		// llama.cpp's ladder reaches the 1-2-bit i-quant mixes, whose
		// ffn_down rule counted tensors per tensor: minutes at this depth.
		`{"model":{"config":{"num_hidden_layers":60000,"hidden_size":8192,"num_attention_heads":64,"vocab_size":32000,"intermediate_size":28672}},"engine":"llama.cpp"}`,
		`{"model":{"config":{"num_hidden_layers":4000,"hidden_size":1024,"num_attention_heads":16,"vocab_size":32000,"intermediate_size":4096}}}`,
		`{"model":{"params":1e14},"context_length":16777216}`,
		`{"model":{"name":"llama-3.1-8b"},"context_length":131072,"batch_size":1048576}`,
		`{"model":{"params_b":3000},"engine":"vllm"}`,
		`{"model":{"params_b":3000},"engine":"llama.cpp"}`,
	}
	for _, b := range bodies {
		before, start := cputime.Process(t), time.Now()
		a := shard(t, request(t, b, r))
		checkInvariants(t, a)
		cpu := cputime.Process(t) - before
		assert.Less(t, cpu, hostileCPUBound, b)
		t.Logf("%v CPU, %v wall: fits=%v %s tp=%d pp=%d", cpu, time.Since(start), a.Fits, a.Strategy, a.TPSize, a.PPSize)
	}
}

// hostileCPUBound bounds the CPU time (user and system, the whole process)
// one hostile request may take: generous, -race runs several times slower.
// CPU time, not wall time: a clean-clone CI run on a loaded 2-core machine
// took 13.1 s of wall time for the 60000-layer request, which takes 5-6 s
// on an idle one (2026-11-29), and wall time measured the machine's load,
// not the planner. The test runs alone (not t.Parallel), so the process's
// CPU time is its own and the garbage collector's.
const hostileCPUBound = 10 * time.Second
