package api

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	json "github.com/goccy/go-json"
	"github.com/stretchr/testify/require"
)

// llamaCPPRun is one record of internal/calibration/data/llamacpp_measurements.json: what a
// real llama.cpp build (CPU backend) allocated for a random-weight GGUF of a
// real architecture, written by scripts/llamacpp-measure/run.sh.
type llamaCPPRun struct {
	Model              string  `json:"model"`
	Architecture       string  `json:"architecture"`
	ConfigSource       string  `json:"config_source"`
	Quant              string  `json:"quant"`
	ContextLength      int     `json:"context_length"`
	FlashAttention     bool    `json:"flash_attention"`
	CacheTypeK         string  `json:"cache_type_k"`
	CacheTypeV         string  `json:"cache_type_v"`
	NBatch             int     `json:"n_batch"`
	NUBatch            int     `json:"n_ubatch"`
	NCtx               int     `json:"n_ctx"`
	ModelBytes         int64   `json:"model_bytes"`
	KVBytes            int64   `json:"kv_bytes"`
	KVSWABytes         int64   `json:"kv_swa_bytes"`
	OutputBytes        int64   `json:"output_bytes"`
	ComputeBytes       int64   `json:"compute_bytes"`
	PeakRSSBytes       int64   `json:"peak_rss_bytes"`
	PrefillTokens      int     `json:"prefill_tokens"`
	DecodeTokens       int     `json:"decode_tokens"`
	PrefillTokensPerS  float64 `json:"prefill_tokens_per_s"`
	DecodeTokensPerS   float64 `json:"decode_tokens_per_s"`
	LlamaCPPCommit     string  `json:"llama_cpp_commit"`
	Command            string  `json:"command"`
	ModelTensorBytes   int64   `json:"model_tensor_bytes"`
	ModelBufferDetails string  `json:"model_buffers"`
	// RSBytes is the recurrent-state buffer (llama_memory_recurrent's "RS
	// buffer size"): the convolution and SSM states of a hybrid or
	// recurrent model's mixer layers.
	RSBytes int64 `json:"rs_bytes"`
	// NCPUMoE is --n-cpu-moe's N (-1: not set; absent in runs recorded
	// before the field), OverrideTensor -ot's argument ("" when not set).
	NCPUMoE        *int   `json:"n_cpu_moe"`
	OverrideTensor string `json:"override_tensor"`
	// Decoded is false for a run that only created the context (a GGUF
	// written sparse, whose weights were never read); absent means true.
	Decoded *bool `json:"decoded"`
	// Sparse marks a GGUF whose matrices are zeros (holes of a sparse
	// file, make_gguf.py --sparse).
	Sparse bool `json:"sparse"`
}

// allocated is the sum of every buffer llama.cpp reported for the run.
func (r llamaCPPRun) allocated() int64 {
	return r.ModelBytes + r.KVBytes + r.KVSWABytes + r.RSBytes + r.OutputBytes + r.ComputeBytes
}

// overridesTensors reports whether the run set buffer types of tensors
// with --n-cpu-moe (N > 0) or -ot.
func (r llamaCPPRun) overridesTensors() bool {
	return (r.NCPUMoE != nil && *r.NCPUMoE > 0) || r.OverrideTensor != ""
}

// llamaCPPAnswer is the part of a planning answer compared with a run.
type llamaCPPAnswer struct {
	Fits   bool `json:"fits"`
	Memory struct {
		Weights     int64 `json:"weights_bytes"`
		KVCache     int64 `json:"kv_cache_bytes"`
		Activations int64 `json:"activations_bytes"`
		Overhead    int64 `json:"overhead_bytes"`
		Total       int64 `json:"total_bytes"`
	} `json:"memory"`
}

// llamaCPPRegistry is one CPU with room for every measured model, so the
// answer is the memory of a single llama.cpp process on the host (-ngl 0), as
// measured.
const llamaCPPRegistry = `{"schema_version":1,"devices":[{"id":"cpu:0","kind":"cpu","family":"cpu","index":0,` +
	`"vendor":"amd","name":"AMD EPYC","available":true,"memory_bytes":25769803776,"memory_free_bytes":25769803776,"cores":2}]}`

// llamaCPPKVDType maps llama.cpp's --cache-type-k to the request's
// kv_cache_dtype, which accepts llama.cpp's quantized cache types by name.
func llamaCPPKVDType(t string) string {
	if t == "f16" {
		return ""
	}
	return t
}

func llamaCPPRequest(r llamaCPPRun) string {
	return llamaCPPRequestOn(r, llamaCPPRegistry)
}

// llamaCPPRequestOn is the request for run r on the given registry.
func llamaCPPRequestOn(r llamaCPPRun, registry string) string {
	req := map[string]any{
		"model":          map[string]any{"name": r.Model},
		"quant":          r.Quant, // GGUF type names are accepted; "f16" is fp16
		"context_length": r.ContextLength,
		"engine":         "llama.cpp",
		"registry":       json.RawMessage(registry),
	}
	if kv := llamaCPPKVDType(r.CacheTypeK); kv != "" {
		req["kv_cache_dtype"] = kv
	}
	if !r.FlashAttention {
		req["flash_attention"] = false // llama.cpp -fa off
	}
	b, err := json.Marshal(req)
	if err != nil {
		panic(err)
	}
	return string(b)
}

func loadLlamaCPPRuns(t *testing.T) []llamaCPPRun {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "calibration", "data", "llamacpp_measurements.json"))
	require.NoError(t, err)
	var doc struct {
		Runs []llamaCPPRun `json:"runs"`
	}
	require.NoError(t, json.Unmarshal(b, &doc))
	require.NotEmpty(t, doc.Runs)
	return doc.Runs
}

// relErr is (predicted - measured) / measured.
func relErr(pred, meas int64) float64 {
	return float64(pred-meas) / float64(meas)
}

func median(xs []float64) float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// TestLlamaCPPMeasurementsAreWhole checks every recorded run carries what a
// reader needs to redo it and that its buffers are plausible.
func TestLlamaCPPMeasurementsAreWhole(t *testing.T) {
	for _, r := range loadLlamaCPPRuns(t) {
		name := fmt.Sprintf("%s %s ctx=%d fa=%v kv=%s", r.Model, r.Quant, r.ContextLength, r.FlashAttention, r.CacheTypeK)
		require.Len(t, r.LlamaCPPCommit, 40, name)
		// the command, after the MEASURE_* settings a run was made with (run.sh)
		at := strings.Index(r.Command, "./measure load ")
		require.GreaterOrEqual(t, at, 0, name)
		require.True(t, at == 0 || strings.HasPrefix(r.Command, "MEASURE_"), name)
		require.True(t, strings.HasPrefix(r.ConfigSource, "https://"), name)
		require.Positive(t, r.ModelBytes, name)
		require.Positive(t, r.KVBytes+r.KVSWABytes+r.RSBytes, name)
		require.Positive(t, r.ComputeBytes, name)
		// llama.cpp never shrinks the context below what was asked (it pads up).
		require.GreaterOrEqual(t, r.NCtx, r.ContextLength, name)
		// the mapped model buffer holds every tensor (repacked ones move to
		// CPU_REPACK), so the buffers are at least llama_model_size().
		require.GreaterOrEqual(t, r.ModelBytes, r.ModelTensorBytes-1<<20, name)
	}
}

// Ratchet of the engine's error against llama.cpp's real allocation
// (docs/accuracy.md, "Against llama.cpp's allocation"): the absolute error of
// the total, median and worst over the memory runs (41 runs). When the
// measurements were recorded: median 31.8 %, worst 103.3 % (Qwen2.5-0.5B
// Q4_K_M with a q8_0 cache); with no GPU overhead charged to the CPU: median
// 1.1 %, worst 38.7 % (Qwen2.5-0.5B Q4_K_M at 32768 without flash attention,
// the compute buffer). Tighten these when the engine improves; the test
// fails if it gets worse.
//
// The KV cache alone has its own ratchet: its error is not hidden by other
// components' errors of the other sign. With q8_0 caches sized as ggml
// blocks (34 bytes per 32 values, was 1 byte per value): the total's median
// rose from 1.1 % to 1.2 % (the KV underestimate had offset compute
// overestimates) while the KV cache became exact for every run without a
// sliding window; the worst KV errors left were Phi-3 (-50 %) and Gemma 3
// (-33 %). With llama.cpp's sliding-window rules (window + micro-batch
// padded to 256 cells, none for Phi-3) every KV cache is exact (below
// 0.1 %); the total stays at median 1.2 %, worst 38.7 %. With the -fa off
// runs asked with "flash_attention": false and the score matrix counted
// (quant.ActivationsBytes): median 1.1 %, worst 16.4 % (Qwen3-0.6B Q4_K_M
// with a q8_0 cache: the weights llama.cpp's CPU backend repacks into a
// second buffer); every -fa off run but Qwen3-0.6B Q4_K_M (-14 %, the
// same repacked weights) is within 2 %.
const (
	llamaCPPTotalMedianErrMax = 0.012
	llamaCPPTotalWorstErrMax  = 0.165
	llamaCPPKVMedianErrMax    = 0.001
	llamaCPPKVWorstErrMax     = 0.001
)

// TestLlamaCPPAllocationError asks the engine for every measured
// configuration and compares weights, KV cache, compute and total with what
// llama.cpp allocated. Run with -v for the table.
func TestLlamaCPPAllocationError(t *testing.T) {
	var totals, kvs []float64
	var rows []string
	rows = append(rows, "| model | quant | ctx | fa | KV | weights | KV cache | compute | total (ours / llama.cpp) | total error | peak RSS |",
		"|---|---|---|---|---|---|---|---|---|---|---|")
	for _, r := range loadLlamaCPPRuns(t) {
		if r.PrefillTokens > 0 || r.overridesTensors() {
			continue // a speed run repeats a memory run's configuration
		}
		if r.RSBytes > 0 || r.Sparse {
			continue // TestLlamaCPPRecurrentStateAndKV (hybrids), TestLlamaCPPCPUMoE
		}
		out := PlanSharding(context.Background(), []byte(llamaCPPRequest(r)), NoEnv)
		var ans llamaCPPAnswer
		require.NoError(t, json.Unmarshal(out, &ans), string(out))
		require.True(t, ans.Fits, string(out))
		m := ans.Memory
		kv := r.KVBytes + r.KVSWABytes
		compute := r.ComputeBytes + r.OutputBytes
		total := relErr(m.Total, r.allocated())
		totals = append(totals, math.Abs(total))
		kvs = append(kvs, math.Abs(relErr(m.KVCache, kv)))
		fa := "off"
		if r.FlashAttention {
			fa = "on"
		}
		rows = append(rows, fmt.Sprintf("| %s | %s | %d | %s | %s | %+.0f %% | %+.0f %% | %+.0f %% | %s / %s | %+.0f %% | %s |",
			r.Model, r.Quant, r.ContextLength, fa, r.CacheTypeK,
			100*relErr(m.Weights, r.ModelBytes), 100*relErr(m.KVCache, kv), 100*relErr(m.Activations, compute),
			mib(m.Total), mib(r.allocated()), 100*total, mib(r.PeakRSSBytes)))
	}
	med, worst := median(totals), maxOf(totals)
	kvMed, kvWorst := median(kvs), maxOf(kvs)
	t.Logf("engine vs llama.cpp allocation, %d runs:\n%s\n|total| error: median %.1f %%, worst %.1f %%; |KV cache| error: median %.1f %%, worst %.1f %%",
		len(totals), strings.Join(rows, "\n"), 100*med, 100*worst, 100*kvMed, 100*kvWorst)
	require.LessOrEqual(t, med, llamaCPPTotalMedianErrMax, "median |total error| got worse")
	require.LessOrEqual(t, worst, llamaCPPTotalWorstErrMax, "worst |total error| got worse")
	require.LessOrEqual(t, kvMed, llamaCPPKVMedianErrMax, "median |KV cache error| got worse")
	require.LessOrEqual(t, kvWorst, llamaCPPKVWorstErrMax, "worst |KV cache error| got worse")
}

func maxOf(xs []float64) float64 {
	m := 0.0
	for _, x := range xs {
		m = math.Max(m, x)
	}
	return m
}

func mib(b int64) string { return fmt.Sprintf("%.0f MiB", float64(b)/(1<<20)) }
