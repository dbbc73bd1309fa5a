// Package plan answers the planning questions: which precision fits, how to
// spread a model over devices, and how much memory training needs.
//
// A plan is made in stages, one file each:
//
//   - request.go: the request, decoded and checked;
//   - pools.go (cluster.go across nodes): the usable devices grouped into
//     pools of one kind and vendor, with their high-bandwidth domains;
//   - figures.go: the weights size at each level (once per request) and the
//     memory of a layer split; throughput.go: the speed of a layout;
//   - layouts.go (replicas.go for data parallel): candidate layouts of one
//     level on one pool: one device, tensor parallel, pipeline, offload;
//   - choice.go: the best layout over levels and pools, and the facts of
//     the search;
//   - explain.go: the explanation, written from the choice;
//   - sharding.go, suggest.go, training.go: the answers (engine.go: a
//     plan handed to its engine, internal/engine, for its flags, load,
//     environment and notes).
package plan

import (
	"bytes"
	"fmt"
	"math"
	"strconv"
	"strings"

	json "github.com/goccy/go-json"

	"github.com/ai-hwaccel/ai-hwaccel/internal/engine"
	"github.com/ai-hwaccel/ai-hwaccel/internal/errs"
	"github.com/ai-hwaccel/ai-hwaccel/internal/model"
	"github.com/ai-hwaccel/ai-hwaccel/internal/quant"
	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
	"github.com/ai-hwaccel/ai-hwaccel/internal/strictjson"
)

// Request limits: anything outside is a unit mistake or hostile input.
const (
	DefaultContextLength = 4096
	DefaultBatchSize     = 1
	MaxContextLength     = 1 << 24 // 16 Mi tokens
	MaxBatchSize         = 1 << 20
	MaxClusterNodes      = 1024
	// MaxLayers bounds a model's layer count (the largest published models
	// have a few hundred): planning walks layers.
	MaxLayers         = 1 << 16
	MaxRequestDevices = registry.MaxDevices
)

// Request is a decoded, validated planning request (contract "Planning
// requests"). The api layer fills Registry by detection when the host gave
// none (and no cluster).
type Request struct {
	Registry *registry.Registry `json:"registry"`
	// Detect holds detection options used when Registry is absent.
	Detect json.RawMessage `json:"detect"`

	ModelSpec     model.Spec
	Model         *model.Model
	Quant         string // "auto" or a quant.Level name
	ContextLength int
	// contextCapped: no context_length was given and the default is longer
	// than the model's maximum, so the model's maximum is planned.
	contextCapped bool
	BatchSize     int
	// KVCacheDType is "" (the model's 16-bit dtype), "fp16", "bf16", "fp8",
	// "int8", or an engine's cache type ("q8_0", ...: engine.CacheTypes).
	KVCacheDType string
	Devices      []string // restrict to these answer ids; nil = all
	Engine       string   // a registered engine's name (engine.Names), or "" (unspecified)
	CPUOffload   bool
	IncludeCPU   bool
	// NoFlashAttention is "flash_attention": false (llama.cpp -fa off): the
	// compute buffer holds a micro-batch's attention scores over the whole
	// context (quant.KVOptions.NoFlashAttention).
	NoFlashAttention bool
	// TensorParallel is tensor_parallel_size: the tensor-parallel degree
	// every plan must use (0: the planner chooses).
	TensorParallel int
	// MemoryFraction is memory_fraction: the share of each accelerator's
	// total memory the engine may use, overriding the engine's default
	// (vLLM's --gpu-memory-utilization 0.9); 0 when not asked (budget.go).
	MemoryFraction float64
	// training is set by EstimateTraining: no inference engine's budget
	// applies (budget.go engineRule).
	training bool
	// Replicas is the number of data-parallel replicas asked for (0: not
	// asked); ReplicasMax is "replicas": "max" (replicas.go).
	Replicas    int
	ReplicasMax bool
	// Cluster holds one registry per node for a multi-node plan.
	Cluster []*registry.Registry
	// Training holds the "training" object of an estimate_training request
	// (training.go); nil when absent.
	Training *TrainingOptions
	// decodedRegistry is the registry decoded from the request, shared
	// through registry.DecodeShared and never changed: planning may
	// remember its pools (pools.go) while Registry is still it.
	decodedRegistry *registry.Registry
	// weights is the model's weights size at each level planning tries,
	// computed once when planning starts (choose) and read by every estimate
	// after it (every pool, every probe of maxFitting).
	weights levelWeights
}

// wireRequest is the JSON shape; every key is known (unknown keys are
// rejected) and numbers are checked by wireInt.
type wireRequest struct {
	Model          json.RawMessage   `json:"model"`
	Quant          *string           `json:"quant"`
	ContextLength  *wireInt          `json:"context_length"`
	BatchSize      *wireInt          `json:"batch_size"`
	KVCacheDType   *string           `json:"kv_cache_dtype"`
	Registry       json.RawMessage   `json:"registry"`
	Devices        []string          `json:"devices"`
	Engine         *string           `json:"engine"`
	CPUOffload     *bool             `json:"cpu_offload"`
	IncludeCPU     *bool             `json:"include_cpu"`
	Cluster        []json.RawMessage `json:"cluster"`
	Detect         json.RawMessage   `json:"detect"`
	Training       json.RawMessage   `json:"training"`
	Replicas       json.RawMessage   `json:"replicas"`
	TensorParallel *wireInt          `json:"tensor_parallel_size"`
	MemoryFraction *float64          `json:"memory_fraction"`
	FlashAttention *bool             `json:"flash_attention"`
}

// wireInt is a JSON number that must be an integer of reasonable size;
// strings, fractions, and values like 1e400 or 2^70 are invalid_argument.
type wireInt struct{ V int64 }

// UnmarshalJSON implements json.Unmarshaler.
func (w *wireInt) UnmarshalJSON(b []byte) error {
	s := string(bytes.TrimSpace(b))
	if s == "" || !(s[0] == '-' || s[0] >= '0' && s[0] <= '9') {
		return errs.New(errs.InvalidArgument, "expected an integer, got %s", clip(s))
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) || math.Abs(f) > 1<<53 || f != math.Trunc(f) {
		return errs.New(errs.InvalidArgument, "expected an integer of reasonable size, got %s", clip(s))
	}
	w.V = int64(f)
	return nil
}

func clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "..."
	}
	return s
}

// DecodeRequest parses and validates a planning request, resolving the model.
func DecodeRequest(data []byte) (*Request, error) {
	var w wireRequest
	if err := strictDecode(data, &w, "request"); err != nil {
		return nil, err
	}
	if bytes.Equal(bytes.TrimSpace(data), []byte("null")) {
		return nil, errs.New(errs.InvalidArgument, "request: must be a JSON object, got null")
	}
	r := &Request{Quant: "auto", ContextLength: DefaultContextLength, BatchSize: DefaultBatchSize, Detect: w.Detect}
	if err := r.decodeModel(w.Model); err != nil {
		return nil, err
	}
	if w.Quant != nil {
		q := strings.ToLower(strings.TrimSpace(*w.Quant))
		if q != "auto" {
			l, err := quant.Parse(q)
			if err != nil {
				return nil, err
			}
			q = string(l)
		}
		r.Quant = q
	}
	var err error
	if r.ContextLength, err = bounded("context_length", w.ContextLength, DefaultContextLength, MaxContextLength); err != nil {
		return nil, err
	}
	if r.BatchSize, err = bounded("batch_size", w.BatchSize, DefaultBatchSize, MaxBatchSize); err != nil {
		return nil, err
	}
	if err := r.checkModelContext(w.ContextLength != nil); err != nil {
		return nil, err
	}
	if kv := kvUpperBound(r.Model, r.ContextLength, r.BatchSize); kv > maxPlanBytes {
		return nil, errs.New(errs.InvalidArgument, "request: context_length %d x batch_size %d needs about %.3g bytes of KV cache; more than any machine holds",
			r.ContextLength, r.BatchSize, kv)
	}
	if w.KVCacheDType != nil {
		switch k := strings.ToLower(*w.KVCacheDType); k {
		case "auto", "":
		default:
			if _, ok := engine.LookupCacheType(k); !ok {
				return nil, errs.New(errs.InvalidArgument, "request: kv_cache_dtype %q is not one of %s", *w.KVCacheDType, strings.Join(engine.CacheTypes(), ", "))
			}
			r.KVCacheDType = k
		}
	}
	if w.Engine != nil {
		e := strings.ToLower(*w.Engine)
		if _, ok := engine.Lookup(e); !ok {
			return nil, errs.New(errs.InvalidArgument, "request: engine %q is not one of %s", *w.Engine, strings.Join(engine.Names(), ", "))
		}
		r.Engine = e
	}
	if err := r.decodeBudget(w.TensorParallel, w.MemoryFraction); err != nil {
		return nil, err
	}
	r.CPUOffload = w.CPUOffload != nil && *w.CPUOffload
	r.NoFlashAttention = w.FlashAttention != nil && !*w.FlashAttention
	r.IncludeCPU = w.IncludeCPU != nil && *w.IncludeCPU
	if err := r.decodeReplicas(w.Replicas); err != nil {
		return nil, err
	}
	if err := r.decodeDevices(w.Devices); err != nil {
		return nil, err
	}
	if err := r.decodeRegistries(w.Registry, w.Cluster); err != nil {
		return nil, err
	}
	if err := r.CheckMemoryBounds(); err != nil {
		return nil, err
	}
	if len(w.Training) > 0 && !isNull(w.Training) {
		if err := r.decodeTraining(w.Training); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// decodeBudget checks tensor_parallel_size and memory_fraction.
// tensor_parallel_size must divide the model's attention heads, and its KV
// heads must divide it or be divided by it: vLLM shards heads evenly and
// replicates KV heads when there are fewer than ranks
// (https://docs.vllm.ai/en/latest/serving/parallelism_scaling/). An engine
// that splits layers, not tensors (llama.cpp), takes only 1 when named.
func (r *Request) decodeBudget(tp *wireInt, frac *float64) error {
	if tp != nil {
		if tp.V < 1 || tp.V > maxTPSize {
			return errs.New(errs.InvalidArgument, "request: tensor_parallel_size %d is outside [1, %d]", tp.V, maxTPSize)
		}
		n := int(tp.V)
		m := r.Model
		c := costs{Heads: m.Heads, KVHeads: m.EffectiveKVHeads()}
		if !c.validTP(n) {
			return errs.New(errs.InvalidArgument, "request: tensor_parallel_size %d does not divide the model's %d attention heads evenly (%d KV heads); engines need heads %% size == 0",
				n, m.Heads, m.EffectiveKVHeads())
		}
		if e, ok := engine.Lookup(r.Engine); ok && n > 1 && !e.Parallelism().Tensor {
			par := e.Parallelism()
			return errs.New(errs.InvalidArgument, "request: tensor_parallel_size %d with engine %s: %s; use 1 or %s", n, e.Name(), par.NoTensorWhy, par.Instead)
		}
		r.TensorParallel = n
	}
	if frac != nil {
		f := *frac
		if !(f > 0 && f <= 1) {
			return errs.New(errs.InvalidArgument, "request: memory_fraction %g is outside (0, 1]", f)
		}
		r.MemoryFraction = f
	}
	return nil
}

func isNull(b json.RawMessage) bool { return bytes.Equal(bytes.TrimSpace(b), []byte("null")) }

// strictDecode is strictjson.Decode: unknown fields, repeated keys and
// trailing data are refused.
func strictDecode(data []byte, v any, what string) error {
	return strictjson.Decode(data, v, what)
}

// checkModelContext refuses a context longer than the model was trained
// for (max_position_embeddings, or a GGUF's context_length): vLLM refuses
// such a --max-model-len (https://docs.vllm.ai/en/latest/configuration/engine_args/,
// "--max-model-len ... derived from the model config"), and a plan for it
// would describe memory no engine allocates as asked.
// A default context longer than the model's is lowered to the model's, and
// the answer says so (contextCapped).
func (r *Request) checkModelContext(explicit bool) error {
	limit := r.Model.MaxContext
	if limit <= 0 || r.ContextLength <= limit {
		return nil
	}
	if !explicit {
		// The default context is longer than the model's: plan the model's.
		r.ContextLength = limit
		r.contextCapped = true
		return nil
	}
	name := r.Model.Name
	if name == "" {
		name = "the model"
	}
	return errs.New(errs.InvalidArgument, "request: context_length %d is more than %s's maximum context of %d tokens (max_position_embeddings); ask for %d or less",
		r.ContextLength, name, limit, limit)
}

func bounded(name string, w *wireInt, def, max int) (int, error) {
	if w == nil {
		return def, nil
	}
	if w.V < 1 || w.V > int64(max) {
		return 0, errs.New(errs.InvalidArgument, "request: %s %d is outside [1, %d]", name, w.V, max)
	}
	return int(w.V), nil
}

func (r *Request) decodeModel(raw json.RawMessage) error {
	if len(raw) == 0 || isNull(raw) {
		return errs.New(errs.InvalidArgument, "request: model is required")
	}
	if err := strictDecode(raw, &r.ModelSpec, "request: model"); err != nil {
		return err
	}
	m, err := model.Resolve(r.ModelSpec)
	if err != nil {
		return err
	}
	if m.Layers > MaxLayers {
		return errs.New(errs.InvalidArgument, "request: model: %d layers is more than %d; no such model exists", m.Layers, MaxLayers)
	}
	r.Model = m
	return nil
}

func (r *Request) decodeDevices(ids []string) error {
	if ids == nil {
		return nil
	}
	if len(ids) == 0 {
		return errs.New(errs.InvalidArgument, "request: devices is empty (omit it to use every device)")
	}
	if len(ids) > MaxRequestDevices {
		return errs.New(errs.InvalidArgument, "request: %d devices is more than %d", len(ids), MaxRequestDevices)
	}
	seen := map[string]bool{}
	for _, id := range ids {
		if id == "" || seen[id] {
			return errs.New(errs.InvalidArgument, "request: devices holds an empty or repeated id %q", id)
		}
		seen[id] = true
	}
	r.Devices = ids
	return nil
}

func (r *Request) decodeRegistries(reg json.RawMessage, cluster []json.RawMessage) error {
	if len(reg) > 0 && !isNull(reg) {
		g, err := decodeRegistry(reg)
		if err != nil {
			return err
		}
		r.Registry, r.decodedRegistry = g, g
	}
	if cluster == nil {
		return nil
	}
	if r.Registry != nil {
		return errs.New(errs.InvalidArgument, "request: give registry or cluster, not both")
	}
	if len(cluster) == 0 || len(cluster) > MaxClusterNodes {
		return errs.New(errs.InvalidArgument, "request: cluster must hold 1 to %d node registries", MaxClusterNodes)
	}
	for i, raw := range cluster {
		g, err := decodeRegistry(raw)
		if err != nil {
			return errs.New(errs.CodeOf(err), "request: cluster[%d]: %s", i, errs.MessageOf(err))
		}
		r.Cluster = append(r.Cluster, g)
	}
	// A cluster request plans on the given nodes only: a placeholder keeps
	// the api layer from detecting this machine.
	r.Registry = registry.New()
	return nil
}

// decodeRegistry decodes a registry of the request through the shared
// cache: a host planning on one machine sends the same registry every time.
// The registry is shared and only read by planning.
func decodeRegistry(data []byte) (*registry.Registry, error) {
	return registry.DecodeShared(data)
}

// maxPlanBytes (1 EiB) is more memory than any machine or cluster holds;
// estimates above it are refused rather than carried into int64 arithmetic.
const maxPlanBytes = 1 << 60

// kvUpperBound is the KV cache of full multi-head attention at 2 bytes per
// element, in float64 (an upper bound of quant.KVCacheBytes for any
// attention variant).
func kvUpperBound(m *model.Model, ctx, batch int) float64 {
	width := float64(m.Hidden)
	if hd := m.EffectiveHeadDim(); hd > 0 && m.EffectiveKVHeads() > 0 {
		width = math.Max(width, float64(hd*m.EffectiveKVHeads()))
	}
	return 2 * float64(max(m.Layers, 1)) * width * float64(ctx) * float64(batch) * 2
}

// kvOptions is the KV cache storage of the request.
func (r *Request) kvOptions() quant.KVOptions { return r.kvOptionsFor(nil) }

// kvOptionsFor is the KV cache storage of the request on engine e (nil:
// the request's): an engine may have its own cache rules (llama.cpp's
// sliding windows, engine.Engine.KVRules).
func (r *Request) kvOptionsFor(e engine.Engine) quant.KVOptions {
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

// checkDevices verifies every requested id exists in the registry (or the
// cluster's "nodeN/" ids).
func (r *Request) checkDevices() (map[string]bool, error) {
	if r.Devices == nil {
		return nil, nil
	}
	known := map[string]bool{}
	if len(r.Cluster) > 0 {
		for i, g := range r.Cluster {
			for _, d := range g.Devices {
				known[nodePrefix(i)+d.ID] = true
			}
		}
	} else if r.Registry != nil {
		for _, d := range r.Registry.Devices {
			known[d.ID] = true
		}
	}
	want := map[string]bool{}
	for _, id := range r.Devices {
		if !known[id] {
			return nil, errs.New(errs.InvalidArgument, "request: devices: unknown device %q", id)
		}
		want[id] = true
	}
	return want, nil
}

func nodePrefix(i int) string { return fmt.Sprintf("node%d/", i) }

// Memory is the memory of a plan by component, summed over its devices.
type Memory struct {
	WeightsBytes     int64 `json:"weights_bytes"`
	KVCacheBytes     int64 `json:"kv_cache_bytes"`
	ActivationsBytes int64 `json:"activations_bytes"`
	OverheadBytes    int64 `json:"overhead_bytes"`
	TotalBytes       int64 `json:"total_bytes"`
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

// gib formats bytes for explanations: "71.3 GiB".
func gib(b int64) string {
	return fmt.Sprintf("%.1f GiB", float64(b)/(1<<30))
}

// EstimateTraining and decodeTraining are in training.go.
