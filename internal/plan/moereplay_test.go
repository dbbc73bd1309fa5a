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

// Replays the H200 VM's --n-cpu-moe rows of
// internal/calibration/data/offload_decode.json (this project's device run
// of 2026-11-28, llama.cpp 34af94cd, llama-bench tg128 at 16 threads:
// Qwen3-30B-A3B Q4_K_M, 71.5 tok/s with --n-cpu-moe 24, 40.3 with 48)
// through the planner's own placement, as TestMoEOffloadReplay does: the
// H200 as detected there (NVIDIA H200, 143771 MiB, compute capability 9.0,
// PCIe 5.0 x16 at 63.02 GB/s per direction) with 12 GiB of it free, as
// scripts/device/h200-run.sh imitated cards for llama-fit-params (a 17.5 GB
// model does not make the planner offload on 140 GiB), and the VM's 16
// cores; their memory bandwidth, which detection does not report there, is
// the row's 358.4 GB/s: Emerald Rapids' 8 DDR5-5600 channels, the socket's
// peak and so an upper bound on the VM's share (host_figures_source of the
// row). The fit program replays the same rows (TestOffloadReplay): this
// test checks that a plan the planner makes itself gives the same figure
// within 25 %.
func TestMoEOffloadReplayH200(t *testing.T) {
	g := gpu(registry.KindCUDA, 0, "NVIDIA H200", 143771<<20, "9.0")
	g.Vendor = "nvidia"
	free := int64(12 << 30)
	g.MemoryFreeBytes = &free
	g.PCIe = &registry.PCIe{CurrentSpeedGTs: 32, CurrentWidth: 16, BandwidthGBs: 63.02}
	h := host(128 << 30)
	h.Name, h.MemoryBandwidthGBs, h.Cores = "Intel(R) Xeon(R) Processor", 358.4, 16
	r := reg(t, []registry.Device{g, h})
	for _, row := range []struct {
		n        int
		measured float64
	}{{24, 71.461087}, {48, 40.347299}} {
		got, chosen := moeDecodeAt(t, r, `{"model":{"name":"Qwen3-30B-A3B"},"quant":"q4_k_m","engine":"llama.cpp","cpu_offload":true,"context_length":4096}`, row.n)
		rel := got/row.measured - 1
		t.Logf("Qwen3-30B-A3B Q4_K_M, H200 (12 GiB free) + 16 Xeon cores, --n-cpu-moe %d: %.1f tok/s predicted, %.1f measured (%+.0f%%); the planner chose --n-cpu-moe %d", row.n, got, row.measured, rel*100, chosen)
		assert.Less(t, math.Abs(rel), 0.25)
	}
}
