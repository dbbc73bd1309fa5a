package plan

import (
	"slices"
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
	return deepSeekR1Asking(t, `{"model":{"name":"DeepSeek-R1"},"engine":"llama.cpp","cpu_offload":true}`, r, types...)
}

// deepSeekR1Asking is the request body (DeepSeek-R1 by name) on r with
// deepSeekR1WithGGUFs's checkpoints.
func deepSeekR1Asking(t *testing.T, body string, r *registry.Registry, types ...string) *Request {
	req := request(t, body, r)
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
// the devices alone (keepDropped): on one H100 with 200 GiB of
// host RAM llama.cpp's auto with cpu_offload planned iq2_m, of which no
// GGUF is published (no command), while unsloth publishes Q2_K, which fits
// offloaded (q3_k_m, 298.5 GiB, does not). Without a Q2_K file no published
// file fits and the answer is the best level that does, iq3_m, with q2_k
// left out. (Found on a DGX Spark's registry, whose offload counted the
// GB10's memory twice: TestOffloadBesideUnifiedMemoryCountsItOnce.)
func TestOffloadPlansALeftOutLevelOnlyAPublishedFileRuns(t *testing.T) {
	a := shard(t, deepSeekR1WithGGUFs(t, h100Beside200GiB(t), "q2_k", "q3_k_m", "q4_k_m", "q5_k_m", "q6_k", "q8_0", "bf16"))
	require.True(t, a.Fits.Yes(), a.Explanation)
	assert.Equal(t, StrategyOffload, a.Strategy)
	assert.Equal(t, "q2_k", a.Quant)
	assert.Equal(t, "r/DeepSeek-R1-GGUF", a.Load[engineLlamaCPP].Repo, "its command runs the published file")
	assert.NotEmpty(t, explanationWith(a.Explanation, "q2_k: iq2_m would be smaller and better but no published file runs it"), "%q", a.Explanation)
	assert.NotEmpty(t, lineOfLevel(a.Levels, "q2_k"), "the levels table lists the level planned")

	a = shard(t, deepSeekR1WithGGUFs(t, h100Beside200GiB(t), "q3_k_m", "q4_k_m", "bf16"))
	require.True(t, a.Fits.Yes(), a.Explanation)
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

// unslothR1Types is the GGUF types of unsloth/DeepSeek-R1-GGUF the catalog
// lists (https://huggingface.co/unsloth/DeepSeek-R1-GGUF): no IQ1_S.
var unslothR1Types = []string{"q8_0", "q6_k", "q5_k_m", "q4_k_m", "q3_k_m", "q2_k", "bf16"}

// With cpu_offload asked, a level a published checkpoint runs offloaded
// wins over an on-device level nothing published runs: on the h200-vm
// fixture (one H200 beside 125.9 GiB of host RAM) llama.cpp's auto planned
// iq1_s on the GPU alone (no published IQ1_S file: no command, mean KL
// divergence 2.255), while offloaded q2_k, which unsloth publishes, fits
// with the host's RAM.
func TestOffloadPublishedBeatsUnpublishedOnDevice(t *testing.T) {
	a := shard(t, deepSeekR1WithGGUFs(t, h200BesideHostRAM(t), unslothR1Types...))
	require.True(t, a.Fits.Yes(), a.Explanation)
	assert.Equal(t, StrategyOffload, a.Strategy)
	assert.Equal(t, "q2_k", a.Quant)
	assert.Equal(t, "r/DeepSeek-R1-GGUF", a.Load[engineLlamaCPP].Repo, "its command runs the published file")
	assert.NotEmpty(t, explanationWith(a.Explanation, "published: iq1_s ("), "the on-device level passed over is named: %q", a.Explanation)
	assert.NotEmpty(t, lineOfLevel(a.Levels, "q2_k"), "the levels table lists the level planned")
	assert.Empty(t, explanationWith(a.Explanation, "cpu_offload: no level fits on the accelerators alone"), "iq1_s fits there: %q", a.Explanation)

	s, err := SuggestQuant(deepSeekR1WithGGUFs(t, h200BesideHostRAM(t), unslothR1Types...))
	require.NoError(t, err)
	assert.Equal(t, "q2_k", s.Quant, "suggest chooses as plan does")
}

// The rule is narrow: a published on-device fit keeps today's answer
// (offload only when nothing fits), and without cpu_offload or with an
// explicit quant nothing changes.
func TestOffloadPublishedLeavesOtherAnswers(t *testing.T) {
	withIQ1S := append(slices.Clone(unslothR1Types), "iq1_s")
	a := shard(t, deepSeekR1WithGGUFs(t, h200BesideHostRAM(t), withIQ1S...))
	require.True(t, a.Fits.Yes(), a.Explanation)
	assert.Equal(t, "iq1_s", a.Quant, "a published level fits on the GPU alone")
	assert.NotEqual(t, StrategyOffload, a.Strategy)

	a = shard(t, deepSeekR1Asking(t, `{"model":{"name":"DeepSeek-R1"},"engine":"llama.cpp"}`, h200BesideHostRAM(t), unslothR1Types...))
	require.True(t, a.Fits.Yes(), a.Explanation)
	assert.Equal(t, "iq1_s", a.Quant, "without cpu_offload")
	assert.NotEqual(t, StrategyOffload, a.Strategy)

	a = shard(t, deepSeekR1Asking(t, `{"model":{"name":"DeepSeek-R1"},"engine":"llama.cpp","cpu_offload":true,"quant":"iq1_s"}`, h200BesideHostRAM(t), unslothR1Types...))
	require.True(t, a.Fits.Yes(), a.Explanation)
	assert.Equal(t, "iq1_s", a.Quant, "an explicit quant")
	assert.NotEqual(t, StrategyOffload, a.Strategy)
}

// h200BesideHostRAM is the h200-vm fixture's devices
// (testdata/machines/h200-vm): one H200 (143771 MiB) beside 131981020 kB
// of host RAM.
func h200BesideHostRAM(t *testing.T) *registry.Registry {
	d := gpu(registry.KindCUDA, 0, "NVIDIA H200", 143771<<20, "9.0")
	d.Vendor = "nvidia"
	return reg(t, []registry.Device{host(131981020 << 10), d})
}

// The offloaded plan a published checkpoint runs is not taken over one on
// the devices alone that uses more accelerators: vLLM offloads on one GPU,
// and on eight H100s with 2 TiB of host RAM DeepSeek-R1 under vLLM with
// cpu_offload went from int4 over all eight (no published int4
// checkpoint) to its FP8 release on one GPU with about 560 GiB in host
// RAM, seven GPUs idle.
func TestOffloadPublishedKeepsTheAcceleratorsInUse(t *testing.T) {
	req := request(t, `{"model":{"name":"DeepSeek-R1"},"engine":"vllm","cpu_offload":true}`, eightH100(t, true))
	m := *req.Model
	m.Checkpoints = []model.Checkpoint{{Quant: "fp8", Repo: "deepseek-ai/DeepSeek-R1"}}
	req.Model = &m
	a := shard(t, req)
	require.True(t, a.Fits.Yes(), a.Explanation)
	assert.NotEqual(t, StrategyOffload, a.Strategy, "%s on %d shards", a.Quant, len(a.Shards))
	assert.Len(t, a.Shards, 8)
}
