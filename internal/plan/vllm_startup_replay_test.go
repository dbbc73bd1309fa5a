package plan

import (
	"fmt"
	"math"
	"os"
	"sort"
	"strings"
	"testing"

	json "github.com/goccy/go-json"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/calibration"
	"github.com/ai-hwaccel/ai-hwaccel/internal/engine"
	"github.com/ai-hwaccel/ai-hwaccel/internal/model"
	"github.com/ai-hwaccel/ai-hwaccel/internal/quant"
	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// vllmStartupRow is one row of internal/calibration/data/vllm_startup.json:
// a real vLLM start-up log and the setup that printed it (the README there
// says what each field is and where the rows came from).
type vllmStartupRow struct {
	ID            string `json:"id"`
	Source        string `json:"source"`
	EngineVersion string `json:"engine_version"`
	Model         string `json:"model"`
	// ModelSpec is the request's model object where the catalog entry
	// must be adjusted to what vLLM loaded (model_spec_note says why).
	ModelSpec json.RawMessage `json:"model_spec"`
	// DeviceKind is the accelerator the log ran on: "tpu", "gaudi",
	// "rocm", "neuron"; empty for an NVIDIA GPU.
	DeviceKind          string  `json:"device_kind"`
	Quant               string  `json:"quant"`
	KVCacheDType        string  `json:"kv_cache_dtype"`
	GPU                 string  `json:"gpu"`
	GPUTotalGiB         float64 `json:"gpu_total_gib"`
	TensorParallel      int     `json:"tensor_parallel_size"`
	PipelineParallel    int     `json:"pipeline_parallel_size"`
	MemoryUtilization   float64 `json:"gpu_memory_utilization"`
	MaxModelLen         int     `json:"max_model_len"`
	MaxNumBatchedTokens int     `json:"max_num_batched_tokens"`
	MaxNumSeqs          int     `json:"max_num_seqs"`
	Printed             struct {
		ModelLoadingGiB *float64 `json:"model_loading_gib"`
		KVCacheGiB      *float64 `json:"kv_cache_gib"`
		KVCacheTokens   *int64   `json:"kv_cache_tokens"`
		// MaxConcurrency is "Maximum concurrency for max_model_len tokens
		// per request", kept for the hybrid rows, where it is not the
		// tokens over the length.
		MaxConcurrency *float64 `json:"max_concurrency"`
		// The profile's parts, where the log prints them.
		PeakActivationGiB *float64 `json:"peak_activation_gib"`
		NonTorchGiB       *float64 `json:"non_torch_gib"`
		CUDAGraphGiB      *float64 `json:"cuda_graph_estimate_gib"`
	} `json:"printed"`
	// Log is the row's start-up lines, verbatim.
	Log      []string `json:"log"`
	Replayed bool     `json:"replayed"`
	WhyNot   string   `json:"why_not"`
}

func loadVLLMStartupRows(t *testing.T) []vllmStartupRow {
	t.Helper()
	b, err := os.ReadFile("../calibration/data/vllm_startup.json")
	require.NoError(t, err)
	var f struct {
		Rows []vllmStartupRow `json:"rows"`
	}
	require.NoError(t, json.Unmarshal(b, &f))
	return f.Rows
}

// vllmStartupExpect plans row r as its log ran it: its GPUs (the total
// memory vLLM saw), its tensor-parallel size, level, KV cache type,
// --gpu-memory-utilization, --max-model-len and vLLM version, and returns
// what the answer says vLLM will print.
func vllmStartupExpect(t *testing.T, r vllmStartupRow) EngineExpect {
	t.Helper()
	n := r.TensorParallel * r.PipelineParallel
	kind, vendor, cc := vllmRowDevice(t, r)
	var devs []registry.Device
	for i := 0; i < n; i++ {
		d := gpu(kind, i, r.GPU, int64(r.GPUTotalGiB*float64(gibBytes)), cc)
		d.Vendor = vendor
		devs = append(devs, d)
	}
	spec := fmt.Sprintf(`{"name":%q}`, r.Model)
	if len(r.ModelSpec) > 0 {
		spec = string(r.ModelSpec)
	}
	body := fmt.Sprintf(`{"model":%s,"quant":%q,"engine":"vllm","engine_version":%q,"context_length":%d,"tensor_parallel_size":%d,"memory_fraction":%g`,
		spec, r.Quant, r.EngineVersion, r.MaxModelLen, r.TensorParallel, r.MemoryUtilization)
	if r.KVCacheDType != "auto" {
		body += fmt.Sprintf(`,"kv_cache_dtype":%q`, r.KVCacheDType)
	}
	body += "}"
	q := request(t, body, reg(t, devs))
	ans := shard(t, q)
	if vllmRefused(r) {
		// vLLM refused to start this row (one sequence of --max-model-len
		// did not fit the KV cache it left, or none was left): the plan
		// must refuse it too,
		// naming vLLM's charge, and say what vLLM printed of the layout
		// vLLM tried.
		require.False(t, ans.Fits.Yes(), "%s: vLLM refused to start it; the plan fits: %s", r.ID, dump(t, ans))
		require.NotNil(t, ans.Refusal, r.ID)
		assert.Contains(t, ans.Refusal.Text, "start-up charge", r.ID)
		ex := refusedVLLMExpect(t, q, r.TensorParallel)
		assert.NotEmpty(t, ex.Warning, r.ID)
		return ex
	}
	require.True(t, ans.Fits.Yes(), "%s: %s", r.ID, dump(t, ans))
	ex, ok := ans.EngineExpect[engineVLLM]
	require.True(t, ok, "%s: no engine_expect.vllm", r.ID)
	return ex
}

// vllmRefused reports whether vLLM refused to start row r: the KV cache
// it printed holds less than one sequence of --max-model-len, or it
// printed a negative "Available KV cache memory".
func vllmRefused(r vllmStartupRow) bool {
	if p := r.Printed.KVCacheTokens; p != nil && *p < int64(r.MaxModelLen) {
		return true
	}
	return r.Printed.KVCacheGiB != nil && *r.Printed.KVCacheGiB < 0
}

// vllmRowDevice is the registry kind, vendor and compute capability of
// the accelerator row r ran on (device_kind; an NVIDIA GPU when empty).
func vllmRowDevice(t *testing.T, r vllmStartupRow) (registry.Kind, string, string) {
	t.Helper()
	switch r.DeviceKind {
	case "":
		return registry.KindCUDA, "nvidia", "9.0"
	case "rocm":
		return registry.KindROCm, "amd", ""
	case "tpu":
		return registry.KindTPU, "google", ""
	case "gaudi":
		return registry.KindGaudi, "intel", ""
	case "neuron":
		return registry.KindNeuron, "aws", ""
	}
	t.Fatalf("%s: unknown device_kind %q", r.ID, r.DeviceKind)
	return "", "", ""
}

// refusedVLLMExpect is engine_expect.vllm of the one-stage layout of tp
// devices vLLM was started with for a request the plan refuses: the parts
// the fit charged (costsOf, stagePart), laid out as if they fitted.
func refusedVLLMExpect(t *testing.T, q *Request, tp int) EngineExpect {
	t.Helper()
	req := planningOf(t, q)
	ps := registryPools(req, nil)
	require.NotEmpty(t, ps)
	p := ps[0]
	l := quant.Level(q.Quant)
	b, ok := estimateSaneOn(req, p, l, q.ContextLength, 1)
	require.True(t, ok)
	c := req.costsOf(b, l, q.ContextLength, q.BatchSize).on(p)
	require.NotNil(t, c.VLLM)
	st := stage{Devices: p.Devices[:tp], Start: 0, End: c.Layers, Part: c.stagePart(0, c.Layers, tp)}
	pl := &planned{Fits: true, Strategy: StrategyTensor, Level: l, Pool: p, Stages: []stage{st}, TP: tp, Costs: c}
	ex, ok := engineExpectOf(pl, req)[engineVLLM]
	require.True(t, ok)
	return ex
}

// vllmStartupTarget is how far a replayed figure may be from the printed
// one: issue 21 asks for 10 % on each row (5 % at the median).
const vllmStartupTarget = 0.10

// vllmBackendTarget is how far a replayed KV figure may be on a row of an
// accelerator whose vLLM backend sizes the cache by its own rule (TPU:
// tpu-inference's tpu_worker.py; Gaudi: vllm-fork's habana_worker.py and
// vllm-gaudi's hpu_worker.py; engine.VLLMBackend): those rules are
// arithmetic on the weights and the budget with no fitted constant, so
// the rows must land close, not merely inside vllmStartupTarget.
const vllmBackendTarget = 0.02

// vllmStartupGaps are the rows that miss vllmStartupTarget, each with the
// bound it is held to (the relative error of kv_cache_tokens, or of
// kv_cache_gib in GiB where vLLM printed a negative pool) and why it misses.
var vllmStartupGaps = map[string]struct {
	Tokens, KVGiB float64
	Why           string
}{
	"vllm-23278-h100-gpt-oss-120b": {KVGiB: 0.5,
		Why: "vLLM 0.10.1 printed a negative pool (-2.14 GiB) and refused to start: the relative error is not defined, so the row is held to 0.5 GiB (the plan refuses it too)"},
}

// vllmStartupOtherBatch are the rows whose vLLM ran other batch limits
// than `vllm serve` takes by default, which a plan is for (it emits no
// --max-num-batched-tokens), with why; the other rows' defaults must be
// the plan's.
var vllmStartupOtherBatch = map[string]string{
	"vllm-40691-h20-qwen3.5-27b":         "the command sets --max-num-batched-tokens 16384 and --max-num-seqs 16 where vllm serve takes 8192 and 1024 on this GPU: the plan charges the sampler warm-up of 1024 requests over a 248,320-token vocabulary, the run a 16384-token forward pass",
	"kerasio-tpu-v5e-gemma3-1b":          "KerasHub's guide runs vLLM's offline LLM class, 8192 batched tokens below 70 GiB where vllm serve takes 2048; tpu-inference's worker charges no profile run (tpu_worker.py determine_available_memory), so the batch limits do not enter the KV figure",
	"vllm-gaudi-docs-gaudi2-llama3.1-8b": "the command sets --max-num-seqs 4 where a plan of one sequence leaves vLLM's 256; the fork's profile run is its largest prompt bucket (habana_model_runner.py profile_run), which the plan approximates by the V0 forward pass at 2048 tokens (0.23 GiB against the printed 0.35)",
	"qwen3vl-1057-h100-qwen2.5-vl-7b":    "the model card's example runs vLLM's offline LLM class, 16384 batched tokens on an 80 GB GPU where vllm serve takes 8192 (the encoder budget is 16384 either way: one image of the largest size); the plan's KV tokens are 3.8 % above the printed ones: the encoder pass (2.16 GiB through the tower, engine.VLLMEncoderPassOf) stays under the 0.8.2 sampler's 5.16 GiB and adds only the encoder cache's 0.11 GiB, so 1.75 GiB of vLLM 0.8.2's charge is not modelled: most likely the non-torch memory 0.8.2's V1 worker counted device-wide, its CUDA context and other processes' memory included, until vllm PR 19312 (docs/accuracy.md)",
	"lmcache-3430-a5000-qwen3-8b":        "LMCache's example runs vLLM's offline LLM class, 8192 batched tokens below 70 GiB where vllm serve takes 2048; with 8192 the profile's forward pass (0.83 GiB) outweighs the sampler (0.56) and the row's error goes from -5 % to -9 %",
}

// TestVLLMStartupReplay plans every replayed row of vllm_startup.json and
// compares what the answer says vLLM will print with what it printed:
// model_loading_gib, kv_cache_gib and kv_cache_tokens within 10 % on each
// row (vllmStartupGaps: the rows that miss, with their bounds) and
// kv_cache_tokens within 5 % at the median.
func TestVLLMStartupReplay(t *testing.T) {
	var errsTok []float64
	var table []string
	for _, r := range loadVLLMStartupRows(t) {
		if !r.Replayed {
			continue
		}
		ex := vllmStartupExpect(t, r)
		v, err := engine.ParseVersion(r.EngineVersion)
		require.NoError(t, err, r.ID)
		before := v.Before(engine.VLLMOldestVersion)
		if before {
			// Before the releases the accounting covers: the answer says
			// so, and the row is shown, not held to the target.
			assert.Contains(t, ex.Warning, "older than", "%s: vLLM %s is before the supported range", r.ID, r.EngineVersion)
		}
		if why, ok := vllmStartupOtherBatch[r.ID]; ok {
			t.Logf("%s: planned %d batched tokens, ran %d: %s", r.ID, ex.MaxNumBatchedTokens, r.MaxNumBatchedTokens, why)
		} else {
			assert.Equal(t, r.MaxNumBatchedTokens, ex.MaxNumBatchedTokens, "%s: vLLM's default --max-num-batched-tokens", r.ID)
			assert.Equal(t, r.MaxNumSeqs, ex.MaxNumSeqs, "%s: vLLM's default --max-num-seqs", r.ID)
		}
		gap, known := vllmStartupGaps[r.ID]
		if before {
			known, gap.Tokens, gap.KVGiB = true, math.Inf(1), 0
		}
		line := fmt.Sprintf("%-60s", r.ID)
		if p := r.Printed.ModelLoadingGiB; p != nil {
			e := ex.ModelLoadingGiB / *p - 1
			line += fmt.Sprintf(" weights %6.2f/%6.2f (%+5.1f%%)", ex.ModelLoadingGiB, *p, 100*e)
			assert.Less(t, math.Abs(e), vllmStartupTarget, "%s: model_loading_gib", r.ID)
		}
		if p := r.Printed.KVCacheGiB; p != nil {
			e := ex.KVCacheGiB / *p - 1
			line += fmt.Sprintf(" kv %6.2f/%6.2f GiB (%+5.1f%%)", ex.KVCacheGiB, *p, 100*e)
			switch {
			case known && gap.KVGiB > 0:
				assert.Less(t, math.Abs(ex.KVCacheGiB-*p), gap.KVGiB, "%s: kv_cache_gib (%s)", r.ID, gap.Why)
			case known && gap.Tokens > 0:
				assert.Less(t, math.Abs(e), gap.Tokens, "%s: kv_cache_gib (%s)", r.ID, gap.Why)
			case r.DeviceKind == "tpu" || r.DeviceKind == "gaudi":
				assert.Less(t, math.Abs(e), vllmBackendTarget, "%s: kv_cache_gib by the %s backend's rule", r.ID, r.DeviceKind)
			default:
				assert.Less(t, math.Abs(e), vllmStartupTarget, "%s: kv_cache_gib", r.ID)
			}
		}
		if p := r.Printed.KVCacheTokens; p != nil {
			e := float64(ex.KVCacheTokens)/float64(*p) - 1
			if !before {
				errsTok = append(errsTok, math.Abs(e))
			}
			line += fmt.Sprintf(" tokens %8d/%8d (%+5.1f%%)", ex.KVCacheTokens, *p, 100*e)
			bound := vllmStartupTarget
			if known && gap.Tokens > 0 {
				bound = gap.Tokens
			}
			assert.Less(t, math.Abs(e), bound, "%s: kv_cache_tokens", r.ID)
		}
		if p := r.Printed.MaxConcurrency; p != nil {
			e := ex.MaxConcurrency / *p - 1
			line += fmt.Sprintf(" concurrency %6.2f/%6.2f (%+5.1f%%)", ex.MaxConcurrency, *p, 100*e)
			assert.Less(t, math.Abs(e), vllmStartupTarget, "%s: max_concurrency", r.ID)
		}
		table = append(table, line)
	}
	t.Log("\n" + strings.Join(table, "\n"))
	require.GreaterOrEqual(t, len(errsTok), 20, "issue 21 asks for 20 rows at least (of supported releases)")
	med := median(errsTok)
	sort.Float64s(errsTok)
	t.Logf("kv_cache_tokens: %d rows, median |error| %.1f%%, largest %.1f%%", len(errsTok), 100*med, 100*errsTok[len(errsTok)-1])
	assert.Less(t, med, 0.05)
}

// TestVLLMStartupConstants recomputes the constants of
// internal/calibration/vllmstartup.go from the rows they were read from
// and fails when a row added to vllm_startup.json moves a median away from
// the value in use.
func TestVLLMStartupConstants(t *testing.T) {
	var perLogit, nonTorch1, nonTorchTP, graphs []float64
	for _, r := range loadVLLMStartupRows(t) {
		v, err := engine.ParseVersion(r.EngineVersion)
		require.NoError(t, err, r.ID)
		if v.Before(engine.Version{Minor: 8}) || !r.Replayed {
			continue
		}
		p := r.Printed
		if p.CUDAGraphGiB != nil {
			graphs = append(graphs, *p.CUDAGraphGiB)
		}
		if p.NonTorchGiB != nil {
			if r.TensorParallel > 1 {
				nonTorchTP = append(nonTorchTP, *p.NonTorchGiB)
			} else {
				nonTorch1 = append(nonTorch1, *p.NonTorchGiB)
			}
		}
		if p.PeakActivationGiB == nil || r.ModelSpec != nil {
			continue
		}
		m := model.Lookup(r.Model)
		require.NotNil(t, m, r.ID)
		if m.IsMoE() {
			continue
		}
		// Rows where the sampler warm-up, not the forward pass, is the peak.
		logits := float64(r.MaxNumSeqs) * float64(m.Vocab)
		forward := float64(r.MaxNumBatchedTokens) * (8*float64(m.Hidden) + 6*float64(m.Intermediate)/float64(r.TensorParallel))
		if logits*calibration.VLLMSamplerBytesPerLogit > forward {
			// A VLM's peak holds the encoder cache beside the sampler's
			// (engine.VLLMEncoderPassOf).
			cache := float64(engine.VLLMEncoderPassOf(m, r.MaxNumBatchedTokens, 2, r.TensorParallel).CacheBytes)
			perLogit = append(perLogit, (*p.PeakActivationGiB*float64(gibBytes)-cache)/logits)
		}
	}
	t.Logf("sampler bytes per logit %v; non-torch TP1 %v, TP>1 %v GiB; CUDA graphs %v GiB", perLogit, nonTorch1, nonTorchTP, graphs)
	assert.InDelta(t, calibration.VLLMSamplerBytesPerLogit, median(perLogit), 0.05, "sampler bytes per logit, %d rows", len(perLogit))
	assert.InDelta(t, float64(calibration.VLLMNonTorchBytes)/float64(gibBytes), median(nonTorch1), 0.005, "non-torch, one GPU, %d rows", len(nonTorch1))
	assert.InDelta(t, float64(calibration.VLLMNonTorchTPBytes)/float64(gibBytes), median(nonTorchTP), 0.005, "non-torch, tensor parallel, %d rows", len(nonTorchTP))
	assert.InDelta(t, float64(calibration.VLLMCUDAGraphBytes)/float64(gibBytes), median(graphs), 0.005, "CUDA graphs, %d rows", len(graphs))
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	if n := len(s); n%2 == 0 {
		return (s[n/2-1] + s[n/2]) / 2
	}
	return s[len(s)/2]
}

// TestVLLMHybridStartupLayout replays the hybrid rows of vllm_startup.json
// (a model with recurrent layers beside attention) from the KV cache
// memory they printed: vLLM's layout of that memory
// (engine.VLLMHybridLayoutOf) must give the printed "GPU KV cache size"
// within a block and "Maximum concurrency" to the printed two decimals.
// The figures are rounded to 0.01 GiB in the log, so the pool is the
// block count of the printed GiB. It isolates the layout from the
// start-up charge TestVLLMStartupReplay plans, and replays the rows whose
// weights or batch the planner cannot pin (NVFP4, the offline LLM class).
// Issue 25 asks for the cap reproduced on two models at least; the rows
// hold three (Qwen3.6-35B-A3B, gated DeltaNet; Nemotron 3 Nano and Super,
// Mamba2).
func TestVLLMHybridStartupLayout(t *testing.T) {
	n := 0
	models := map[string]bool{}
	for _, r := range loadVLLMStartupRows(t) {
		p := r.Printed
		m := model.Lookup(r.Model)
		if m == nil || m.RecurrentStateElements() == 0 || p.KVCacheGiB == nil || p.MaxConcurrency == nil {
			continue
		}
		v, err := engine.ParseVersion(r.EngineVersion)
		require.NoError(t, err, r.ID)
		kvBytes := 2.0
		if ct, ok := engine.LookupCacheType(r.KVCacheDType); ok && r.KVCacheDType != "auto" {
			kvBytes = ct.BytesPerElement
		}
		l, ok := engine.VLLMHybridLayoutOf(m, engine.VLLMCacheSetup{Version: v, TP: r.TensorParallel,
			MaxModelLen: r.MaxModelLen, KVBytes: kvBytes, ModelBytes: 2})
		require.True(t, ok, r.ID)
		blocks := l.Blocks(int64(math.Round(*p.KVCacheGiB * float64(gibBytes))))
		got := l.MaxConcurrency(blocks)
		t.Logf("%s: %d blocks of %d tokens, %d a request: %d tokens (printed %d), %.2fx (printed %.2fx)",
			r.ID, blocks, l.BlockTokens, l.BlocksPerRequest(), l.Tokens(blocks), *p.KVCacheTokens, got, *p.MaxConcurrency)
		assert.InDelta(t, *p.MaxConcurrency, got, 0.005, "%s: max_concurrency", r.ID)
		perBlock := float64(*p.KVCacheTokens) / float64(blocks)
		assert.InDelta(t, float64(*p.KVCacheTokens), float64(l.Tokens(blocks)), perBlock, "%s: kv_cache_tokens", r.ID)
		n++
		models[r.Model] = true
	}
	assert.GreaterOrEqual(t, n, 4, "hybrid rows with the KV memory printed")
	assert.GreaterOrEqual(t, len(models), 3, "hybrid models with the KV memory printed")
}

// A vLLM release before the supported range (engine.VLLMOldestVersion) is
// said in the answer's warnings too, which the CLI prints, and in
// engine_expect.vllm.warning; a release in the range gets neither.
func TestOldVLLMReleaseWarns(t *testing.T) {
	devs := []registry.Device{gpu(registry.KindCUDA, 0, "NVIDIA H100 80GB HBM3", 80*gibBytes, "9.0")}
	for _, c := range []struct {
		version string
		warns   bool
	}{{"0.2.5", true}, {"0.6.3", true}, {"0.6.4", false}, {"0.21.0", false}} {
		ans := shard(t, request(t, fmt.Sprintf(`{"model":{"name":"Llama-3.1-8B"},"engine":"vllm","engine_version":%q,"context_length":8192}`, c.version), reg(t, devs)))
		require.True(t, ans.Fits.Yes(), c.version)
		joined := strings.Join(ans.Warnings, "\n")
		if c.warns {
			assert.Contains(t, joined, "older than 0.6.4", c.version)
			assert.Contains(t, ans.EngineExpect[engineVLLM].Warning, "older than 0.6.4", c.version)
		} else {
			assert.NotContains(t, joined, "older than", c.version)
			assert.Empty(t, ans.EngineExpect[engineVLLM].Warning, c.version)
		}
	}
}
