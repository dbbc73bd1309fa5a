// Package plan answers the planning questions: which precision fits, how to
// spread a model over devices, and how much memory training needs.
//
// A plan is made in stages, one file each:
//
//   - request.go: the request, checked (internal/api/wire decodes it);
//   - pools.go (cluster.go across nodes): the usable devices grouped into
//     pools of one kind and vendor, with their high-bandwidth domains;
//   - figures.go: the weights size at each level (once per request) and the
//     memory of a layer split; throughput.go: the speed of a layout;
//   - layouts.go (replicas.go for data parallel): candidate layouts of one
//     level on one pool: one device, tensor parallel, pipeline, offload;
//   - choice.go: the best layout over levels and pools, and the facts of
//     the search; placement.go: a serving plan (vLLM, SGLang) spread over
//     its high-bandwidth domain and replicas beyond it, by the speed model;
//   - explain.go: the explanation, written from the choice;
//   - sharding.go, suggest.go, training.go: the answers (engine.go: a
//     plan handed to its engine, internal/engine, for its flags, load,
//     environment and notes).
package plan

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/ai-hwaccel/ai-hwaccel/internal/engine"
	"github.com/ai-hwaccel/ai-hwaccel/internal/errs"
	"github.com/ai-hwaccel/ai-hwaccel/internal/planreq"
	"github.com/ai-hwaccel/ai-hwaccel/internal/quant"
)

// Request limits (planreq).
const (
	DefaultContextLength = planreq.DefaultContextLength
	DefaultBatchSize     = planreq.DefaultBatchSize
	MaxContextLength     = planreq.MaxContextLength
	MaxBatchSize         = planreq.MaxBatchSize
	MaxRequestDevices    = planreq.MaxRequestDevices
)

// maxPlanBytes (1 EiB) is more memory than any machine or cluster holds;
// estimates above it are refused rather than carried into int64 arithmetic.
const maxPlanBytes = planreq.MaxPlanBytes

// Request is a planning request as the planner takes it: plain, checked
// values (internal/planreq; internal/api/wire decodes the JSON into it).
type Request = planreq.Request

// planning is one planning call: the request and what planning works out
// once for it. It is never shared between calls, so the request stays as
// the caller gave it.
type planning struct {
	*Request
	// training is set by EstimateTraining: no inference engine's budget
	// applies (budget.go engineRule).
	training bool
	// weights is the model's weights size at each level planning tries,
	// computed once when planning starts (choose) and read by every estimate
	// after it (every pool, every probe of maxFitting).
	weights levelWeights
	// vllm is the vLLM release the request plans for, parsed once
	// (vllmVersion): every cost of a vLLM plan asks for it.
	vllm *engine.Version
	// preMMQ is set by a replay of a run of a llama.cpp build before its
	// quantized MMQ kernels became the default (Replay.BuiltBeforeMMQ):
	// its prompt passes dequantize integer weights for cuBLAS and pay that
	// build's per-layer time, and its decode the May 2024 constants.
	preMMQ bool
	// main2023 is set by a replay of a 2023 ./main run (Replay.BuiltIn2023):
	// a build before MMQ whose prompt passes pay PrefillLayerLatency2023.
	main2023 bool
	// otherBackend is set by a replay of a llama.cpp run on a GPU backend
	// other than CUDA (Replay.OnOtherBackend: Vulkan): today's CUDA decode
	// constants (todaysDecode) do not apply to it.
	otherBackend bool
	// noLogits is set by a replay of steps that compute no logits
	// (Replay.WithoutOutputHead: llama-bench's pp test at a micro-batch of
	// one token, where only the last of the prompt's tokens is an output):
	// a decode step reads no output head.
	noLogits bool
	// memo is what the request remembers across its passes (memo.go).
	memo *memo
}

// remembered is the request's memo, made on its first use.
func (r *planning) remembered() *memo {
	if r.memo == nil {
		r.memo = &memo{}
	}
	return r.memo
}

// todaysCUDA reports whether the request's decode may take today's
// llama.cpp CUDA build's constants: every plan, and a replay of a run of
// that build on CUDA.
func (p *planning) todaysCUDA() bool { return !p.preMMQ && !p.otherBackend }

// newPlanning checks the request (Validate) and starts a planning call on it.
func newPlanning(req *Request) (*planning, error) {
	if err := Validate(req); err != nil {
		return nil, err
	}
	return &planning{Request: req}, nil
}

// Validate checks what only the planner can judge of a decoded request: the
// engine and KV cache type names, tensor_parallel_size against the model and
// the engine, and memory_fraction. The api layer calls it before detecting
// the machine; every answer calls it again.
func Validate(r *Request) error {
	if r == nil || r.Model == nil {
		return errs.New(errs.InvalidArgument, "request: model is required")
	}
	if k := r.KVCacheDType; k != "" {
		if _, ok := engine.LookupCacheType(k); !ok {
			return errs.New(errs.InvalidArgument, "request: kv_cache_dtype %q is not one of %s", k, strings.Join(engine.CacheTypes(), ", "))
		}
	}
	if r.Engine != "" {
		e, ok := engine.Lookup(r.Engine)
		if !ok {
			return errs.New(errs.InvalidArgument, "request: engine %q is not one of %s", r.Engine, strings.Join(engine.Names(), ", "))
		}
		if err := checkCacheTypeEngine(r.KVCacheDType, e); err != nil {
			return err
		}
	}
	if err := checkCacheFlashAttention(r); err != nil {
		return err
	}
	if err := checkEngineVersion(r); err != nil {
		return err
	}
	return checkBudget(r)
}

// checkCacheFlashAttention refuses flash_attention false with a KV cache
// type the plan's engine holds only with flash attention on
// (engine.NeedsFlashAttention: llama.cpp's quantized V cache), since the
// printed command would be one the engine rejects. The plan's engine is the
// one named, or, with none named, the engines whose own cache type it is
// (they are chosen for it: engine.Default); a common type (int8) under a
// default engine is not judged here.
func checkCacheFlashAttention(r *Request) error {
	k := r.KVCacheDType
	if !r.NoFlashAttention || k == "" {
		return nil
	}
	names := engine.CacheTypeEngines(k)
	if r.Engine != "" {
		names = []string{r.Engine}
	}
	for _, n := range names {
		if e, ok := engine.Lookup(n); ok && engine.NeedsFlashAttention(e, k) {
			return errs.New(errs.InvalidArgument, "request: kv_cache_dtype %q needs flash attention in engine %s, which refuses a quantized V cache with it off; drop flash_attention false or choose a 16-bit or f32 cache", k, n)
		}
	}
	return nil
}

// checkCacheTypeEngine refuses a KV cache type another engine adds (llama.cpp's
// q8_0, q4_0, ...) with engine e named: e's command has no flag for it, so
// the plan would be sized on a cache the printed command does not allocate
// (vLLM's --kv-cache-dtype takes auto, bfloat16 and fp8 variants:
// https://docs.vllm.ai/en/latest/configuration/engine_args/).
func checkCacheTypeEngine(k string, e engine.Engine) error {
	if k == "" || engine.TakesCacheType(e, k) {
		return nil
	}
	return errs.New(errs.InvalidArgument, "request: kv_cache_dtype %q is a cache type of %s, not of engine %s, which takes %s",
		k, strings.Join(engine.CacheTypeEngines(k), ", "), e.Name(), strings.Join(engine.CommonCacheNames(), ", "))
}

// checkEngineVersion checks engine_version: a release number, read by the
// engines whose rules the planner follows by release (engine.Versioned:
// vLLM, whose start-up accounting changed between releases,
// engine.VLLMStartupOf), so refused with another engine named.
func checkEngineVersion(r *Request) error {
	if r.EngineVersion == "" {
		return nil
	}
	if e, ok := engine.Lookup(r.Engine); r.Engine != "" && !(ok && isVersioned(e)) {
		return errs.New(errs.InvalidArgument, "request: engine_version is read for engine %s only, not %s", strings.Join(versionedEngines(), ", "), r.Engine)
	}
	if _, err := engine.ParseVersion(r.EngineVersion); err != nil {
		return errs.New(errs.InvalidArgument, "request: engine_version: %v", err)
	}
	return nil
}

// checkBudget checks tensor_parallel_size and memory_fraction.
// tensor_parallel_size must divide the model's attention heads, and its KV
// heads must divide it or be divided by it: vLLM shards heads evenly and
// replicates KV heads when there are fewer than ranks
// (https://docs.vllm.ai/en/latest/serving/parallelism_scaling/). An engine
// that splits layers, not tensors (llama.cpp), takes only 1 when named.
func checkBudget(r *Request) error {
	if n := r.TensorParallel; n != 0 {
		if n < 1 || n > maxTPSize {
			return errs.New(errs.InvalidArgument, "request: tensor_parallel_size %d is outside [1, %d]", n, maxTPSize)
		}
		m := r.Model
		c := costs{Heads: m.Heads, KVHeads: m.EffectiveKVHeads()}
		if !c.validTP(n) {
			return errs.New(errs.InvalidArgument, "request: tensor_parallel_size %d does not divide the model's %d attention heads evenly (%d KV heads); engines need heads %% size == 0",
				n, m.Heads, m.EffectiveKVHeads())
		}
		if e, ok := engine.Lookup(r.Engine); ok && n > 1 && !e.Parallelism().Tensor {
			par := e.Parallelism()
			instead := par.Instead
			if par.InsteadEngine != "" {
				instead = HintEngine(par.InsteadEngine)
			}
			return errs.New(errs.InvalidArgument, "request: tensor_parallel_size %d with engine %s: %s; use 1 or %s", n, e.Name(), par.NoTensorWhy, instead)
		}
	}
	if f := r.MemoryFraction; f != 0 && !(f > 0 && f <= 1) {
		return errs.New(errs.InvalidArgument, "request: memory_fraction %g is outside (0, 1]", f)
	}
	return nil
}

// kvOptions is the KV cache storage of the request.
func (r *planning) kvOptions() quant.KVOptions { return r.kvOptionsFor(nil) }

// kvOptionsFor is the KV cache storage of the request on engine e (nil:
// the request's): an engine may have its own cache rules (llama.cpp's
// sliding windows, engine.Engine.KVRules).
func (r *planning) kvOptionsFor(e engine.Engine) quant.KVOptions {
	if e == nil {
		e, _ = engine.Lookup(r.Engine)
	}
	o := quant.KVOptions{Bytes: 2}
	if t, ok := engine.LookupCacheType(r.KVCacheDType); ok {
		o.Bytes = t.BytesPerElement
	}
	if e != nil {
		o = e.KVRules(o, r.Model)
	}
	o.NoFlashAttention = r.NoFlashAttention
	return o
}

// isVersioned reports whether e reads engine_version (engine.Versioned).
func isVersioned(e engine.Engine) bool {
	_, ok := e.(engine.Versioned)
	return ok
}

// versionedEngines are the names of the engines that read engine_version,
// in registration order.
func versionedEngines() []string {
	var out []string
	for _, e := range engine.All() {
		if isVersioned(e) {
			out = append(out, e.Name())
		}
	}
	return out
}

// checkDevices verifies every requested id exists in the registry (or the
// cluster's "nodeN/" ids).
func (r *planning) checkDevices() (map[string]bool, error) {
	if r.Devices == nil {
		return nil, nil
	}
	known := map[string]bool{}
	var order []string // the ids in registry order, for the error
	if len(r.Cluster) > 0 {
		for i, g := range r.Cluster {
			for _, d := range g.Devices {
				known[nodePrefix(i)+d.ID] = true
				order = append(order, nodePrefix(i)+d.ID)
			}
		}
	} else if r.Registry != nil {
		for _, d := range r.Registry.Devices {
			known[d.ID] = true
			order = append(order, d.ID)
		}
	}
	want := map[string]bool{}
	for _, id := range r.Devices {
		if !known[id] {
			return nil, errs.New(errs.InvalidArgument, "request: devices: unknown device %q (%s)", id, idsThereAre(order))
		}
		want[id] = true
	}
	return want, nil
}

func nodePrefix(i int) string { return fmt.Sprintf("node%d/", i) }

// maxIDsNamed is how many device ids an unknown-device error names before
// it only counts the rest (a cluster holds hundreds).
const maxIDsNamed = 16

// idsThereAre says which device ids a request may name, so that an
// unknown id's error tells what to ask instead.
func idsThereAre(ids []string) string {
	switch {
	case len(ids) == 0:
		return "this registry has no device"
	case len(ids) > maxIDsNamed:
		return fmt.Sprintf("this registry has %s and %d more", strings.Join(ids[:maxIDsNamed], ", "), len(ids)-maxIDsNamed)
	}
	return "this registry has " + strings.Join(ids, ", ")
}

// Memory is the memory of a plan by component, summed over its devices.
type Memory struct {
	WeightsBytes     int64 `json:"weights_bytes"`
	KVCacheBytes     int64 `json:"kv_cache_bytes"`
	ActivationsBytes int64 `json:"activations_bytes"`
	OverheadBytes    int64 `json:"overhead_bytes"`
	TotalBytes       int64 `json:"total_bytes"`
	// KVCacheSequences is, for a plan on a paged KV pool (vLLM, SGLang:
	// budget.Paged) asked more than one sequence, how many sequences of
	// the context KVCacheBytes counts: the batch, or what the pool holds
	// at once where that is fewer (heldSequences). 0 (absent) otherwise:
	// KVCacheBytes then counts the batch, one sequence at batch 1.
	KVCacheSequences int `json:"kv_cache_sequences,omitempty"`
}

func (m *Memory) add(p part) {
	m.WeightsBytes += p.Weights
	m.KVCacheBytes += p.KV
	m.ActivationsBytes += p.Activations
	m.OverheadBytes += p.Overhead
	m.TotalBytes += p.total()
}

func memoryOf(b quant.Breakdown) Memory {
	return Memory{WeightsBytes: b.WeightsBytes, KVCacheBytes: b.KVCacheBytes,
		ActivationsBytes: b.ActivationsBytes, OverheadBytes: b.OverheadBytes, TotalBytes: b.TotalBytes}
}

// gib formats bytes for explanations: "71.3 GiB", and "<0.1 GiB" for a
// figure too small to show at that precision, as the CLI writes it
// (internal/cli GiB): a known non-zero figure never reads as zero, and
// the text's Memory lines and these explanations print one figure alike
// (train's "gradients <0.1 GiB" above "gradients 0.0 GiB").
func gib(b int64) string {
	if b > 0 && float64(b)/(1<<30) < 0.05 {
		return "<0.1 GiB"
	}
	return fmt.Sprintf("%.1f GiB", float64(b)/(1<<30))
}

// nounOf is noun in the number n asks for: "device" for 1, "devices"
// otherwise, so that a text with a known count never writes "device(s)".
// Every noun it is given takes a plain "s".
func nounOf(n int, noun string) string {
	if n == 1 {
		return noun
	}
	return noun + "s"
}

// counted is n and its noun: "1 device", "4096 tokens".
func counted(n int, noun string) string {
	return strconv.Itoa(n) + " " + nounOf(n, noun)
}
