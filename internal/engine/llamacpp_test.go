package engine

import (
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/model"
	"github.com/ai-hwaccel/ai-hwaccel/internal/quant"
	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// For llama.cpp an FP8-native model is planned at Q8_0 then Q4_K_M, the
// auto ladder without its fp8 row and with each GGUF type once.
func TestLlamaCPPLevels(t *testing.T) {
	e := llamaCPP{}
	got, _ := e.Levels([]quant.Level{quant.FP8, quant.INT4})
	ladder := []quant.Level{"q8_0", "q6_k", "q5_k_m", "q4_k_m", "iq4_xs", "q3_k_m", "iq3_m", "iq3_s", "iq3_xs", "iq3_xxs",
		"iq2_m", "q2_k", "iq2_s", "iq2_xs", "iq2_xxs", "iq1_m", "iq1_s"}
	assert.Equal(t, ladder, got, "auto walks the GGUF ladder")
	got, notes := e.Levels([]quant.Level{quant.BF16, quant.FP16, quant.FP8, quant.INT8, quant.INT4})
	assert.Equal(t, append([]quant.Level{quant.BF16, quant.FP16}, ladder...), got)
	assert.Contains(t, strings.Join(notes, "\n"), "iq2_xxs 0.812", "the note gives each rung's divergence")
	got, _ = e.Levels([]quant.Level{quant.BF16, quant.INT4})
	assert.Equal(t, append([]quant.Level{quant.BF16}, ladder[3:]...), got, "without int8 the ladder starts at Q4_K_M")
	got, _ = e.Levels([]quant.Level{quant.INT4})
	assert.Equal(t, []quant.Level{"q4_k_m"}, got, "a level asked alone is not a ladder")
	got, _ = e.Levels([]quant.Level{quant.FP8})
	assert.Equal(t, []quant.Level{quant.FP8}, got, "asked alone, fp8 is refused with its reason")
	assert.Equal(t, "llama.cpp has no fp8 weight format", e.CannotLoad(quant.FP8))
}

// The ladder is in quality order (mean KL divergence rising) and every rung
// is a GGUF mix the planner sizes, smaller than the rung before it on the
// reference model but for Q2_K, which is larger than IQ2_M (llamaRungs).
func TestLlamaLadderOrder(t *testing.T) {
	for i, r := range llamaRungs {
		require.True(t, r.level.IsGGUF(), r.level)
		require.NotEmpty(t, r.level.GGUFType(), r.level)
		if i == 0 {
			continue
		}
		prev := llamaRungs[i-1]
		assert.Greater(t, r.kld, prev.kld, "%s after %s", r.level, prev.level)
		if r.level == "q2_k" {
			assert.Greater(t, r.level.BitsPerWeight(), prev.level.BitsPerWeight(), "Q2_K is larger than IQ2_M")
			continue
		}
		if prev.level == "q2_k" {
			prev = llamaRungs[i-2]
		}
		assert.Less(t, r.level.BitsPerWeight(), prev.level.BitsPerWeight(), "%s after %s", r.level, prev.level)
	}
}

// --n-cpu-moe 3 is the experts of layers 0, 1 and 2 on the CPU: the -ot
// form names exactly those layers' ffn_*_exps tensors.
func TestCPUMoEOverride(t *testing.T) {
	assert.Contains(t, cpuMoEOverride(3, 0), `-ot "blk\.(0|1|2)\.ffn_(up|down|gate)_exps=CPU"`)
	assert.NotContains(t, cpuMoEOverride(3, 0), "blk\\.3")
	// A partial layer 3: its down tensor, then its gate, as --fit moves them.
	assert.Contains(t, cpuMoEOverride(3, 1), `-ot "blk\.3\.ffn_down_exps=CPU"`)
	assert.Contains(t, cpuMoEOverride(3, 2), `-ot "blk\.3\.ffn_(gate|down)_exps=CPU"`)
}

// The -ot value of a partial layer matches only that layer's routed expert
// tensors (llama.cpp std::regex_search-es the pattern in the tensor name).
func TestPartialExpertOverrideMatchesOneLayer(t *testing.T) {
	pat, buf, ok := strings.Cut(PartialExpertOverride(12, 2), "=")
	require.True(t, ok)
	assert.Equal(t, "CPU", buf)
	re := regexp.MustCompile(pat)
	for name, want := range map[string]bool{
		"blk.12.ffn_down_exps.weight":  true,
		"blk.12.ffn_gate_exps.weight":  true,
		"blk.12.ffn_up_exps.weight":    false,
		"blk.112.ffn_down_exps.weight": false,
		"blk.1.ffn_down_exps.weight":   false,
		"blk.12.ffn_down_shexp.weight": false,
		"blk.12.attn_q.weight":         false,
	} {
		assert.Equal(t, want, re.MatchString(name), name)
	}
	pat, _, _ = strings.Cut(PartialExpertOverride(12, 1), "=")
	assert.False(t, regexp.MustCompile(pat).MatchString("blk.12.ffn_gate_exps.weight"))
	assert.True(t, regexp.MustCompile(pat).MatchString("blk.12.ffn_down_exps.weight"))
}

// A multimodal model planned without --mmproj is served text-only
// (--no-mmproj): llama-server -hf would otherwise fetch and load the
// repository's projector, memory the plan does not count. With a projector
// the plan counts it and --mmproj loads it; a text model gets neither flag.
func TestProjectorFlags(t *testing.T) {
	vlm := &model.Model{Name: "vlm", Layers: 4, VisionParams: 400_000_000}
	a, notes := companionArgs(&Placement{Model: vlm, Kind: registry.KindCUDA}, nil)
	assert.Equal(t, []string{"--no-mmproj"}, a)
	require.Len(t, notes, 1)
	assert.Contains(t, notes[0], "-hf would also load the repository's vision projector")

	a, _ = companionArgs(&Placement{Model: vlm, Kind: registry.KindCUDA, Projector: &ProjectorFile{File: "mmproj.gguf", OnHost: true}}, nil)
	assert.Equal(t, []string{"--mmproj", "mmproj.gguf", "--no-mmproj-offload"}, a)

	a, notes = companionArgs(&Placement{Model: &model.Model{Name: "text", Layers: 4}, Kind: registry.KindCUDA}, nil)
	assert.Empty(t, a)
	assert.Empty(t, notes)
}

// TestHFProjectorIsTheLoadedCheckpoints: the projector -hf loads is the one
// of the file the command loads (its checkpoint's MMProj, chosen by
// llama.cpp's find_best_mmproj: PickProjector of internal/llamahf), not the
// first the repository's entries name: Qwen/Qwen3-VL-8B-Instruct-GGUF's
// Q4_K_M and Q8_0 weights take the Q8_0 projector, its F16 weights the F16
// one. Weights of another repository, or given ones, name none.
func TestHFProjectorIsTheLoadedCheckpoints(t *testing.T) {
	m := model.Lookup("Qwen3-VL-8B-Instruct")
	require.NotNil(t, m)
	const repo = "Qwen/Qwen3-VL-8B-Instruct-GGUF"
	for file, want := range map[string]string{
		"Qwen3VL-8B-Instruct-Q4_K_M.gguf": "mmproj-Qwen3VL-8B-Instruct-Q8_0.gguf",
		"Qwen3VL-8B-Instruct-Q8_0.gguf":   "mmproj-Qwen3VL-8B-Instruct-Q8_0.gguf",
		"Qwen3VL-8B-Instruct-F16.gguf":    "mmproj-Qwen3VL-8B-Instruct-F16.gguf",
	} {
		assert.Equal(t, want, hfProjector(m, &Load{Repo: repo, File: file}), file)
	}
	assert.Equal(t, "", hfProjector(m, &Load{Repo: "ggml-org/Qwen2.5-VL-7B-Instruct-GGUF", File: "Qwen2.5-VL-7B-Instruct-Q8_0.gguf"}))
	// Qwen3-VL-2B's Q4_K_M weights take the Q8_0 projector too; unsloth's
	// Ministral 3 3B weights its BF16 one, not the F32 one.
	assert.Equal(t, "mmproj-Qwen3VL-2B-Instruct-Q8_0.gguf", hfProjector(model.Lookup("Qwen3-VL-2B-Instruct"), &Load{Repo: "Qwen/Qwen3-VL-2B-Instruct-GGUF", File: "Qwen3VL-2B-Instruct-Q4_K_M.gguf"}))
	ministral := model.Lookup("Ministral-3-3B-Instruct-2512")
	for _, f := range []string{"Ministral-3-3B-Instruct-2512-Q4_K_M.gguf", "Ministral-3-3B-Instruct-2512-Q8_0.gguf"} {
		assert.Equal(t, "mmproj-BF16.gguf", hfProjector(ministral, &Load{Repo: "unsloth/Ministral-3-3B-Instruct-2512-GGUF", File: f}), f)
	}
	assert.Equal(t, "", hfProjector(m, &Load{Repo: repo, File: "Qwen3VL-8B-Instruct-Q4_K_M.gguf", Needs: "a GGUF file"}))
}
