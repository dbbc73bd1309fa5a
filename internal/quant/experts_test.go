package quant

import (
	"os"
	"regexp"
	"strconv"
	"testing"

	json "github.com/goccy/go-json"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/model"
)

// repackBound is the bound of the CPU_REPACK check below, the one
// internal/api's TestLlamaCPPCPUMoE holds the weights of the same runs to
// (llamaCPPMoEWeightsErrMax).
const repackBound = 0.02

// cpuRepackRun is a CPU run of scripts/llamacpp-measure with a CPU_REPACK
// buffer (internal/calibration/data/llamacpp_measurements.json).
type cpuRepackRun struct {
	Model   string `json:"model"`
	Quant   string `json:"quant"`
	Buffers string `json:"model_buffers"`
	// TensorBytes is the GGUF's tensors, ModelBytes llama.cpp's model
	// buffers (CPU_Mapped + CPU_REPACK), PeakRSS the process's peak
	// resident set, KV, Compute and Output its other buffers.
	TensorBytes int64 `json:"model_tensor_bytes"`
	ModelBytes  int64 `json:"model_bytes"`
	PeakRSS     int64 `json:"peak_rss_bytes"`
	KV          int64 `json:"kv_bytes"`
	Compute     int64 `json:"compute_bytes"`
	Output      int64 `json:"output_bytes"`
}

var repackBuffer = regexp.MustCompile(`CPU_REPACK=([0-9.]+)MiB`)

// repackedOnCPU is what a CPU-only llama.cpp repacks of m at l: every
// matrix a MUL_MAT reads (all but the token embedding, which GET_ROWS
// reads) whose type RepacksOnCPU takes.
func repackedOnCPU(t *testing.T, m *model.Model, l Level) float64 {
	info, ok := levelFor(m, l)
	require.True(t, ok)
	ts, ok := tensors(m)
	require.True(t, ok)
	var b float64
	for _, x := range ts {
		if x.cat == catF32 || x.cat == catTokenEmbd || x.cols == 0 {
			continue
		}
		typ := ggufTensorType(m, info, x)
		if RepacksOnCPU(typ, int(x.elements)/x.cols) {
			b += x.elements * typ.BitsPerWeight() / 8
		}
	}
	return b
}

// The repack rule against llama.cpp's own CPU_REPACK buffer of the MoE runs
// (Qwen1.5-MoE-A2.7B Q4_K_M on an AVX2 host, 34af94cd: 5015.25 MiB), and the
// routed experts' share of it that a --n-cpu-moe plan charges to host RAM
// beside the mapped file.
func TestRepackedBytesAgainstCPURepackBuffer(t *testing.T) {
	raw, err := os.ReadFile("../calibration/data/llamacpp_measurements.json")
	require.NoError(t, err)
	var doc struct {
		Runs []cpuRepackRun `json:"runs"`
	}
	require.NoError(t, json.Unmarshal(raw, &doc))
	checked := 0
	for _, r := range doc.Runs {
		mm := repackBuffer.FindStringSubmatch(r.Buffers)
		m := model.Lookup(r.Model)
		if mm == nil || m == nil || !m.IsMoE() {
			continue
		}
		want, err := strconv.ParseFloat(mm[1], 64)
		require.NoError(t, err)
		l, err := Parse(r.Quant)
		require.NoError(t, err)
		got := repackedOnCPU(t, m, l) / (1 << 20)
		assert.InEpsilon(t, want, got, repackBound, "%s %s: CPU_REPACK %.2f MiB, ours %.2f MiB", r.Model, r.Quant, want, got)
		// Host memory is the mapped file and the repacked copy, both:
		// llama.cpp's model buffers, and the resident set less the KV
		// cache and compute buffers (a 34 % under-count without the copy).
		host := float64(r.TensorBytes) + got*(1<<20)
		assert.InEpsilon(t, float64(r.ModelBytes), host, repackBound, "%s: model buffers %d B, GGUF tensors + repack %.0f B", r.Model, r.ModelBytes, host)
		resident := float64(r.PeakRSS - r.KV - r.Compute - r.Output)
		assert.GreaterOrEqual(t, host, resident*(1-repackBound), "%s: never below the resident set", r.Model)
		assert.Less(t, float64(r.TensorBytes), resident*(1-repackBound), "%s: the mapped file alone is below it", r.Model)
		e, ok := RoutedExpertBytes(m, l)
		require.True(t, ok)
		assert.Greater(t, e.Repacked, 0.0)
		assert.Less(t, e.Repacked/(1<<20), got, "the routed experts are part of what is repacked")
		assert.LessOrEqual(t, e.Repacked, e.Total())
		t.Logf("%s %s: CPU_REPACK %.2f MiB, ours %.2f MiB, routed experts %.2f of %.2f MiB", r.Model, r.Quant, want, got, e.Repacked/(1<<20), e.Total()/(1<<20))
		checked++
	}
	require.Positive(t, checked, "a MoE run with a CPU_REPACK buffer")
}

// A Q4_K_M file keeps the expert ffn_down of some layers in Q6_K
// (use_more_bits), which the x86 CPU backend does not repack: the down
// tensors weigh more than the up ones and only part of them is repacked.
func TestRoutedExpertsPerTensor(t *testing.T) {
	m := model.Lookup("Qwen3-30B-A3B")
	require.NotNil(t, m)
	e, ok := RoutedExpertBytes(m, "q4_k_m")
	require.True(t, ok)
	assert.InDelta(t, e.Gate, e.Up, 1)
	assert.Greater(t, e.Down, e.Up)
	assert.Less(t, e.Repacked, e.Total())
	assert.Greater(t, e.Repacked, e.Gate+e.Up-1)
	// llama.cpp 34af94cd on the H200 moved 8370 MiB of experts to the host
	// under --n-cpu-moe 24, 16740 under 48 (CUDA0 model 17500.43 - 9130.43
	// and - 760.42 MiB, data/llamacpp-cuda-h200-memory): 348.75 MiB a layer.
	assert.Len(t, e.ByLayer, 48)
	assert.InDelta(t, 16740.0, e.Total()/(1<<20), 0.5)
	_, ok = RoutedExpertBytes(model.Lookup("Llama-3.1-8B"), "q4_k_m")
	assert.False(t, ok, "a dense model has no routed experts")
	_, ok = RoutedExpertBytes(m, BF16)
	assert.False(t, ok, "a contract level is not a GGUF file")
}

// Each layer's routed experts at its tensors' types: Qwen3-30B-A3B Q4_K_M
// (48 layers, 128 experts of 2048 x 768) keeps ffn_down_exps in Q6_K in
// the first and last six layers and every third between (8, 11, ..., 41),
// 373.5 MiB a layer, and in Q4_K elsewhere, 324 MiB; 16740 MiB in all,
// what llama.cpp 34af94cd's CUDA0 model buffer on an H200 loses when every
// expert moves to the host (17500.43 MiB with --n-cpu-moe 0, 760.42 with
// 48; the first 24 layers, 12 of each kind, 8370 = 17500.43 - 9130.43).
func TestRoutedExpertsByLayer(t *testing.T) {
	m := model.Lookup("Qwen3-30B-A3B")
	require.NotNil(t, m)
	r, ok := RoutedExpertBytes(m, "q4_k_m")
	require.True(t, ok)
	require.Len(t, r.ByLayer, 48)
	const mib = 1 << 20
	var sum, first24 float64
	for i, l := range r.ByLayer {
		q6 := i < 6 || i >= 42 || (i-6)%3 == 2
		want := 324.0
		if q6 {
			want = 373.5
		}
		assert.InDelta(t, want, l.Total()/mib, 1e-9, "layer %d", i)
		assert.InDelta(t, 108.0, l.Gate/mib, 1e-9, "layer %d: ffn_gate_exps Q4_K", i)
		sum += l.Total()
		if i < 24 {
			first24 += l.Total()
		}
	}
	assert.InDelta(t, r.Total(), sum, 1)
	assert.InDelta(t, 16740.0, sum/mib, 1e-9)
	assert.InDelta(t, 8370.0, first24/mib, 1e-9)
}
