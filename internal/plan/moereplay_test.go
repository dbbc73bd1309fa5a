package plan

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// moeDecodeAt is the planner's decode estimate of request body on r with
// the experts of the first n layers on the host (--n-cpu-moe n), the split
// the published row ran, and the n the planner itself chose.
func moeDecodeAt(t *testing.T, r *registry.Registry, body string, n int) (float64, int) {
	t.Helper()
	req := planningOf(t, request(t, body, r))
	ch, err := choose(req)
	require.NoError(t, err)
	pl := ch.Plan
	require.True(t, pl.Fits)
	require.Positive(t, pl.CPUMoE, "the planner offloads experts, not layers")
	chosen := pl.CPUMoE
	gp, hp := moeSplitParts(pl.Costs, n)
	pl.Stages = []stage{pl.Stages[0], pl.Stages[1]}
	pl.Stages[0].Part, pl.Stages[1].Part, pl.Stages[1].End, pl.CPUMoE = gp, hp, n, n
	return estimateThroughput(&pl, req, 0).DecodeTokensPerS, chosen
}

// Replays the --n-cpu-moe row of internal/calibration/data/offload_decode.json
// through the planner's own placement: Qwen3-30B-A3B-Instruct-2507 Q4_K_M
// on an RTX 2080 (8 GB) with an i9-10900X (quad-channel DDR4, ~102 GB/s
// measured, 10 cores), -ngl 99 --n-cpu-moe 36, 36.7 tok/s
// (https://github.com/AlexsJones/llmfit/pull/755). The RTX 2080 is not in
// the datasheet table: 448 GB/s is NVIDIA's figure
// (https://www.techpowerup.com/gpu-specs/geforce-rtx-2080.c3224). The fit
// program replays every offload row of that file (TestOffloadReplay in
// internal/calibration/fit); this test checks that a plan the planner makes
// itself gives the same figure within 25 %. Before the GPU-CPU hand-over of
// each offloaded layer was charged (calibration.Fitted.OffloadHandoverSeconds)
// the estimate was 43 % above the measurement.
func TestMoEOffloadReplay(t *testing.T) {
	g := gpu(registry.KindCUDA, 0, "NVIDIA GeForce RTX 2080", 8<<30, "7.5")
	g.Vendor, g.MemoryBandwidthGBs = "nvidia", 448
	h := host(62 << 30)
	h.Name, h.MemoryBandwidthGBs, h.Cores = "Intel(R) Core(TM) i9-10900X CPU @ 3.70GHz", 102, 10
	r := reg(t, []registry.Device{g, h})
	got, chosen := moeDecodeAt(t, r, `{"model":{"name":"Qwen3-30B-A3B"},"quant":"q4_k_m","engine":"llama.cpp","cpu_offload":true,"context_length":4096}`, 36)
	const measured = 36.7
	rel := got/measured - 1
	t.Logf("Qwen3-30B-A3B Q4_K_M, RTX 2080 + i9-10900X, --n-cpu-moe 36: %.1f tok/s predicted, %.1f measured (%+.0f%%); the planner chose --n-cpu-moe %d", got, measured, rel*100, chosen)
	assert.Less(t, math.Abs(rel), 0.25)
}
