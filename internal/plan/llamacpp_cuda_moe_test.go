package plan

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/calibration"
	"github.com/ai-hwaccel/ai-hwaccel/internal/quant"
	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// h200MoELog reads the GPU and host rows of llama.cpp's exit table in
// the Qwen3-30B-A3B log of the H200 named by its suffix
// (internal/calibration/data/llamacpp-cuda-h200-memory, its README), and
// the names of every row.
func h200MoELog(t *testing.T, suffix string) (gpu, host calibration.LlamaCPPMemoryRow, rows []string) {
	t.Helper()
	p := filepath.Join("..", "calibration", "data", "llamacpp-cuda-h200-memory", "Qwen3-30B-A3B-Q4_K_M-c4096-faon-f16-"+suffix+".log")
	f, err := os.Open(p)
	require.NoError(t, err)
	defer f.Close()
	table, err := calibration.ReadLlamaCPPMemoryTable(f)
	require.NoError(t, err, p)
	for _, r := range table {
		rows = append(rows, r.Device)
		switch {
		case r.Total > 0:
			gpu = r
		case r.Device == "Host":
			host = r
		}
	}
	require.Positive(t, gpu.Total, p)
	return gpu, host, rows
}

// TestLlamaCPPCUDAExpertOffloadReplay lays Qwen3-30B-A3B Q4_K_M (4096
// tokens, flash attention, f16 cache) out as the planner's expert offload
// does for --n-cpu-moe N (moeSplitParts on the costs of a llama.cpp pool
// of the H200 the logs ran on) and sets each part beside llama.cpp's own
// table of the same run on that H200 (llama.cpp 34af94cd, 2026-11-28):
//
//   - the GPU: weights against CUDA0 model, KV against context,
//     activations against compute, overhead against unaccounted, and the
//     total against self + unaccounted within the bounds of
//     TestLlamaCPPCUDAMemoryReplay (internal/api);
//   - the host: the experts the plan moves against what llama.cpp moved,
//     the CUDA0 model buffer of --n-cpu-moe 0 less that of N (the logs'
//     Host "model" is the mapped span of the file, token_embd to the last
//     expert on the CPU, GPU tensors in between included: 17424 MiB for
//     both --n-cpu-moe 48 and -ot of layers 24-47, which move 16740 and
//     8370 MiB), within 1 %;
//   - the host holds the experts once: llama.cpp's table has no CPU_REPACK
//     row (moeHostPart charges none);
//   - the -ot run (the experts of layers 24-47, the last 24, where
//     --n-cpu-moe 24 moves the first 24) holds what --n-cpu-moe 24 holds on
//     the GPU: all MoE layers of Qwen3-30B-A3B are of one size.
func TestLlamaCPPCUDAExpertOffloadReplay(t *testing.T) {
	h200 := gpu(registry.KindCUDA, 0, "NVIDIA H200", 143771<<20, "9.0")
	h200.Vendor = "nvidia"
	req := planningOf(t, request(t, `{"model":{"name":"Qwen3-30B-A3B"},"quant":"q4_k_m","context_length":4096,"engine":"llama.cpp","flash_attention":true}`,
		reg(t, []registry.Device{h200, host(128 << 30)})))
	var p *pool
	for _, q := range registryPools(req, nil) {
		if q.Kind == registry.KindCUDA {
			p = q
		}
	}
	require.NotNil(t, p)
	l := quant.Level("q4_k_m")
	b, ok := estimateSaneOn(req, p, l, 4096, 1)
	require.True(t, ok)
	c := newCosts(req.Model, b, l).on(p)
	require.True(t, moeOffloadable(p, c))

	base, _, _ := h200MoELog(t, "ncmoe0")
	mib := func(b int64) float64 { return float64(b) / (1 << 20) }
	out := []string{"| log | plan --n-cpu-moe | GPU planned / llama.cpp MiB | error | weights / model | KV / context | activations / compute | overhead / unaccounted | experts moved to host, planned / llama.cpp MiB |",
		"|---|---|---|---|---|---|---|---|---|"}
	for _, run := range []struct {
		log string
		n   int
	}{{"ncmoe0", 0}, {"ncmoe24", 24}, {"ncmoe48", 48}, {"ot", 24}} {
		g, h, rows := h200MoELog(t, run.log)
		gp, hp := moeSplitParts(c, run.n)
		theirs := float64(g.Self + g.Unaccounted)
		e := mib(gp.total())/theirs - 1
		assert.GreaterOrEqual(t, e, llamaCUDABelowMaxPlan, "%s: GPU", run.log)
		assert.LessOrEqual(t, e, llamaCUDAWorstErrMaxPlan, "%s: GPU", run.log)
		assert.LessOrEqual(t, int64(g.Unaccounted)<<20, gp.Overhead, "%s: unaccounted within the engine's overhead", run.log)
		moved := float64(base.Model - g.Model)
		planned := mib(hp.Weights)
		if run.n == 0 {
			assert.Zero(t, hp.Weights, run.log)
			assert.Zero(t, moved, run.log)
		} else {
			assert.InEpsilon(t, moved, planned, 0.01, "%s: experts on the host", run.log)
		}
		assert.Equal(t, []string{"CUDA0 (H200)", "Host"}, rows, "%s: no other buffer type (no CPU_REPACK copy)", run.log)
		assert.Equal(t, int64(quant.HostOverheadBytes), hp.Overhead, "%s: no CPU_REPACK copy charged", run.log)
		assert.Equal(t, 12, h.Compute, run.log)
		out = append(out, fmt.Sprintf("| %s | %d | %.0f / %.0f | %+.1f %% | %.0f / %d | %.0f / %d | %.0f / %d | %.0f / %d | %.0f / %.0f |", run.log, run.n,
			mib(gp.total()), theirs, 100*e, mib(gp.Weights), g.Model, mib(gp.KV), g.Context, mib(gp.Activations), g.Compute,
			mib(gp.Overhead), g.Unaccounted, planned, moved))
	}
	t.Logf("Qwen3-30B-A3B Q4_K_M on the H200, the planner's expert offload vs llama.cpp's table:\n%s", strings.Join(out, "\n"))
	gp24, _ := moeSplitParts(c, 24)
	ot, _, _ := h200MoELog(t, "ot")
	n24, _, _ := h200MoELog(t, "ncmoe24")
	assert.Equal(t, n24.Model, ot.Model, "the last 24 layers' experts weigh what the first 24 do")
	assert.LessOrEqual(t, math.Abs(mib(gp24.Weights)/float64(ot.Model)-1), 0.01)
}

// The bounds of TestLlamaCPPCUDAMemoryReplay (internal/api): the planned
// GPU memory never more than 2 % below llama.cpp's, at most 6 % above.
const (
	llamaCUDABelowMaxPlan    = -0.02
	llamaCUDAWorstErrMaxPlan = 0.06
)
