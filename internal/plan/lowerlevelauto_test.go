package plan

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/model"
	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// dgxSpark is testdata/machines/dgx-spark-gb10 as ai-hwaccel detects it:
// a GB10 GPU whose memory is the host's 128501256192 bytes, shared.
func dgxSpark(t *testing.T) *registry.Registry {
	d := gpu(registry.KindCUDA, 0, "NVIDIA GB10", 128501256192, "12.1")
	d.Vendor, d.MemoryShared, d.MemoryUsableBytes = "nvidia", true, 128501256192
	cpu := host(128501256192)
	cpu.Name, cpu.Vendor = "", ""
	return reg(t, []registry.Device{cpu, d})
}

// qwen3_235BWithGGUFs is a request for Qwen3-235B-A22B whose GGUF
// checkpoints are types (one repository's files, folders named by type,
// as unsloth/Qwen3-235B-A22B-GGUF's), built here so the test does not move
// with the catalog's list.
func qwen3_235BWithGGUFs(t *testing.T, types ...string) *Request {
	req := request(t, `{"model":{"name":"Qwen3-235B-A22B"}}`, dgxSpark(t))
	m := *req.Model
	m.Checkpoints = []model.Checkpoint{{Quant: "bf16", Repo: "Qwen/Qwen3-235B-A22B"}}
	for _, ty := range types {
		m.Checkpoints = append(m.Checkpoints, model.Checkpoint{Quant: ty, Repo: "r/Qwen3-235B-A22B-GGUF", Method: "gguf", File: ty})
	}
	req.Model = &m
	return req
}

// The refusal under the default engine (llama.cpp, whose Q4_K_M file the
// GPU does not hold) names the level llama.cpp's own plan under quant auto
// chooses: with Q2_K published and no Q3_K_M, that plan is q2_k (the best
// level a published file runs), and the line named q3_k_m, whose plan has
// no command. With Q3_K_M published both are q3_k_m.
func TestLowerLevelLineNamesTheEnginesAutoPlan(t *testing.T) {
	for _, c := range []struct {
		types []string
		want  string
		also  bool
	}{
		{[]string{"q2_k", "iq4_xs", "q5_k_m", "q6_k"}, "q2_k", true},
		{[]string{"q2_k", "q3_k_m", "iq4_xs", "q5_k_m", "q6_k"}, "q3_k_m", false},
	} {
		a := shard(t, qwen3_235BWithGGUFs(t, c.types...))
		require.False(t, a.Fits.Yes(), a.Explanation)
		line := explanationWith(a.Explanation, "engine llama.cpp fits it at a lower level")
		require.NotEmpty(t, line, "%q", a.Explanation)

		named := qwen3_235BWithGGUFs(t, c.types...)
		named.Engine = engineLlamaCPP
		auto := shard(t, named)
		require.True(t, auto.Fits.Yes(), auto.Explanation)
		assert.Equal(t, c.want, auto.Quant, "llama.cpp's own auto")
		assert.Contains(t, line, "engine llama.cpp fits it at a lower level: "+c.want+" on cuda:0 (mean KL divergence")
		assert.Contains(t, line, `plan it with "engine": "llama.cpp" and "quant": "`+c.want+`"`)
		if c.also {
			assert.Contains(t, line, "; q3_k_m also fits but no published file runs it;")
		} else {
			assert.NotContains(t, line, "also fits")
		}
	}
}
