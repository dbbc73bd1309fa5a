package plan

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/model"
	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// deepSeekR1WithGGUFs is a llama.cpp request with cpu_offload for
// DeepSeek-R1 on r whose GGUF checkpoints are types (folders named by type,
// as unsloth/DeepSeek-R1-GGUF's), built here so the test does not move with
// the catalog's list.
func deepSeekR1WithGGUFs(t *testing.T, r *registry.Registry, types ...string) *Request {
	req := request(t, `{"model":{"name":"DeepSeek-R1"},"engine":"llama.cpp","cpu_offload":true}`, r)
	m := *req.Model
	m.Checkpoints = []model.Checkpoint{{Quant: "fp8", Repo: "deepseek-ai/DeepSeek-R1"}}
	for _, ty := range types {
		m.Checkpoints = append(m.Checkpoints, model.Checkpoint{Quant: ty, Repo: "r/DeepSeek-R1-GGUF", Method: "gguf", File: "DeepSeek-R1-" + ty})
	}
	req.Model = &m
	return req
}

// The level the ladder leaves out (q2_k: worse than iq2_m and not smaller
// on this shape) is planned with cpu_offload too where a published file
// runs it and none runs the better, smaller levels that fit, as it is on
// the devices alone (keepPublishedDropped): on one H100 with 200 GiB of
// host RAM llama.cpp's auto with cpu_offload planned iq2_m, of which no
// GGUF is published (no command), while unsloth publishes Q2_K, which fits
// offloaded (q3_k_m, 298.5 GiB, does not). Without a Q2_K file no published
// file fits and the answer is the best level that does, iq3_m, with q2_k
// left out. (Found on a DGX Spark's registry, whose offload counted the
// GB10's memory twice: TestOffloadBesideUnifiedMemoryCountsItOnce.)
func TestOffloadPlansALeftOutLevelOnlyAPublishedFileRuns(t *testing.T) {
	a := shard(t, deepSeekR1WithGGUFs(t, h100Beside200GiB(t), "q2_k", "q3_k_m", "q4_k_m", "q5_k_m", "q6_k", "q8_0", "bf16"))
	require.True(t, a.Fits, a.Explanation)
	assert.Equal(t, StrategyOffload, a.Strategy)
	assert.Equal(t, "q2_k", a.Quant)
	assert.Equal(t, "r/DeepSeek-R1-GGUF", a.Load[engineLlamaCPP].Repo, "its command runs the published file")
	assert.NotEmpty(t, explanationWith(a.Explanation, "q2_k: iq2_m would be smaller and better but no published file runs it"), "%q", a.Explanation)
	assert.NotEmpty(t, lineOfLevel(a.Levels, "q2_k"), "the levels table lists the level planned")

	a = shard(t, deepSeekR1WithGGUFs(t, h100Beside200GiB(t), "q3_k_m", "q4_k_m", "bf16"))
	require.True(t, a.Fits, a.Explanation)
	assert.Equal(t, StrategyOffload, a.Strategy)
	assert.Equal(t, "iq3_m", a.Quant)
	assert.Empty(t, lineOfLevel(a.Levels, "q2_k"), "a left-out level no published file runs is not listed")
}

// h100Beside200GiB is one H100 80GB beside 200 GiB of host RAM.
func h100Beside200GiB(t *testing.T) *registry.Registry {
	d := gpu(registry.KindCUDA, 0, "NVIDIA H100 80GB HBM3", 85520809984, "9.0")
	d.Vendor = "nvidia"
	return reg(t, []registry.Device{host(200 << 30), d})
}

// lineOfLevel is the levels table's row of level l, nil when none.
func lineOfLevel(rows []LevelRow, l string) *LevelRow {
	for i := range rows {
		if rows[i].Quant == l {
			return &rows[i]
		}
	}
	return nil
}
