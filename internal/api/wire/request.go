// Package wire decodes the JSON of a planning request (the contract's
// "Planning requests", docs/requests.md) into the planner's plain request
// (internal/planreq): every key is known (unknown keys are refused), numbers
// are checked, the model is resolved and the registries are decoded. What
// only the planner can judge (engine names, cache types, tensor-parallel
// sizes) is checked by plan.Validate. It is a package of its own, beside
// internal/api, so that the planner's tests can decode requests without
// importing the api layer (which imports the planner).
package wire

import (
	"bytes"
	"math"
	"os"
	"strconv"
	"strings"

	json "github.com/goccy/go-json"

	"github.com/ai-hwaccel/ai-hwaccel/internal/errs"
	"github.com/ai-hwaccel/ai-hwaccel/internal/model"
	"github.com/ai-hwaccel/ai-hwaccel/internal/modelio"
	"github.com/ai-hwaccel/ai-hwaccel/internal/planreq"
	"github.com/ai-hwaccel/ai-hwaccel/internal/quant"
	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
	"github.com/ai-hwaccel/ai-hwaccel/internal/registry/regjson"
	"github.com/ai-hwaccel/ai-hwaccel/internal/strictjson"
)

// wireRequest is the JSON shape; every key is known (unknown keys are
// rejected) and integers are read exactly (strictjson.Int).
type wireRequest struct {
	Model          json.RawMessage   `json:"model"`
	Quant          *string           `json:"quant"`
	ContextLength  *wireContext      `json:"context_length"`
	BatchSize      *strictjson.Int   `json:"batch_size"`
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
	TensorParallel *strictjson.Int   `json:"tensor_parallel_size"`
	MemoryFraction *float64          `json:"memory_fraction"`
	FlashAttention *bool             `json:"flash_attention"`
	Placement      *string           `json:"placement"`
	EngineVersion  *string           `json:"engine_version"`
	DraftModel     json.RawMessage   `json:"draft_model"`
	MMProj         *wireProjector    `json:"mmproj"`
}

// RequestShape is a planning request as a syntax check walks it
// (strictjson.WellFormedAs, from internal/api when a value check refused
// the request): wireRequest, with each member DecodeRequest decodes later
// from its raw text typed as it decodes it, so that a key repeated by
// letter case inside one ("Method" after "method" in training) is a
// repeat, as its own decoding finds, whichever value check stopped the
// decoding first. A field here shadows wireRequest's of the same JSON name
// (the shallower field wins, as in encoding/json); replicas stays raw (a
// number or "max"), and detect is typed by internal/api, whose options
// it holds.
type RequestShape struct {
	Model      *model.Spec         `json:"model"`
	Registry   *registry.Registry  `json:"registry"`
	Cluster    []registry.Registry `json:"cluster"`
	Training   *trainingShape      `json:"training"`
	DraftModel *model.Spec         `json:"draft_model"`
	wireRequest
}

// trainingShape is wireTraining with its model values typed as
// decodeModelValue decodes an object (RequestShape).
type trainingShape struct {
	Teacher   *model.Spec `json:"teacher"`
	Reference *model.Spec `json:"reference"`
	Reward    *model.Spec `json:"reward"`
	Critic    *model.Spec `json:"critic"`
	wireTraining
}

// wireProjector is mmproj: a projector file, or its size when there is no
// file yet; "offload" false keeps it in host memory.
type wireProjector struct {
	Path      string          `json:"path"`
	SizeBytes *strictjson.Int `json:"size_bytes"`
	Offload   *bool           `json:"offload"`
}

// wireContext is context_length: an integer, or "auto" (the context the
// engine would choose itself, planreq.Request.ContextAuto).
type wireContext struct {
	strictjson.Int
	Auto bool
}

// UnmarshalJSON implements json.Unmarshaler.
func (w *wireContext) UnmarshalJSON(b []byte) error {
	if s := strings.ToLower(string(bytes.TrimSpace(b))); s == `"auto"` {
		w.Auto = true
		return nil
	}
	if s := bytes.TrimSpace(b); len(s) > 0 && s[0] == '"' {
		return errs.New(errs.InvalidArgument, `expected an integer or "auto", got %s`, clip(string(s)))
	}
	return w.Int.UnmarshalJSON(b)
}

func clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "..."
	}
	return s
}

// DecodeRequest parses a planning request, resolving the model and decoding
// its registries. detect is the request's "detect" object (detection
// options, internal/api), nil when absent.
func DecodeRequest(data []byte) (req *planreq.Request, detect []byte, err error) {
	var w wireRequest
	if err := strictjson.Decode(data, &w, "request"); err != nil {
		return nil, nil, err
	}
	if bytes.Equal(bytes.TrimSpace(data), []byte("null")) {
		return nil, nil, errs.New(errs.InvalidArgument, "request: must be a JSON object, got null")
	}
	r := &planreq.Request{Quant: "auto", ContextLength: planreq.DefaultContextLength, BatchSize: planreq.DefaultBatchSize}
	if err := decodeModel(r, w.Model); err != nil {
		return nil, nil, err
	}
	if w.Quant != nil {
		q := strings.ToLower(strings.TrimSpace(*w.Quant))
		if q != "auto" {
			l, err := quant.Parse(q)
			if err != nil {
				return nil, nil, err
			}
			q = string(l)
		}
		r.Quant = q
	}
	given := w.ContextLength != nil && !w.ContextLength.Auto
	if given {
		if r.ContextLength, err = bounded("context_length", &w.ContextLength.Int, planreq.DefaultContextLength, planreq.MaxContextLength); err != nil {
			return nil, nil, err
		}
	}
	r.ContextAuto, r.ContextGiven = w.ContextLength != nil && w.ContextLength.Auto, given
	if r.BatchSize, err = bounded("batch_size", w.BatchSize, planreq.DefaultBatchSize, planreq.MaxBatchSize); err != nil {
		return nil, nil, err
	}
	if err := checkModelContext(r, given); err != nil {
		return nil, nil, err
	}
	if kv := kvUpperBound(r.Model, r.ContextLength, r.BatchSize); kv > planreq.MaxPlanBytes {
		return nil, nil, errs.New(errs.InvalidArgument, "request: context_length %d x batch_size %d needs about %.3g bytes of KV cache; more than any machine holds",
			r.ContextLength, r.BatchSize, kv)
	}
	if w.KVCacheDType != nil {
		if k := strings.ToLower(*w.KVCacheDType); k != "auto" {
			r.KVCacheDType = k
		}
	}
	if w.Engine != nil {
		r.Engine = strings.ToLower(*w.Engine)
	}
	if w.EngineVersion != nil {
		// "v0.11.0" and "0.11.0" name the same release; plan.Validate
		// checks the form.
		r.EngineVersion = strings.TrimPrefix(strings.ToLower(strings.TrimSpace(*w.EngineVersion)), "v")
	}
	if tp := w.TensorParallel; tp != nil {
		if tp.V < 1 || tp.V > planreq.MaxTensorParallel {
			return nil, nil, errs.New(errs.InvalidArgument, "request: tensor_parallel_size %s is outside [1, %d]", tp.Quote(), planreq.MaxTensorParallel)
		}
		r.TensorParallel = int(tp.V)
	}
	if w.MemoryFraction != nil {
		r.MemoryFraction = *w.MemoryFraction
		if r.MemoryFraction == 0 {
			return nil, nil, errs.New(errs.InvalidArgument, "request: memory_fraction 0 is outside (0, 1]")
		}
	}
	r.CPUOffload = w.CPUOffload != nil && *w.CPUOffload
	r.NoFlashAttention = w.FlashAttention != nil && !*w.FlashAttention
	r.IncludeCPU = w.IncludeCPU != nil && *w.IncludeCPU
	if err := decodeReplicas(r, w.Replicas); err != nil {
		return nil, nil, err
	}
	if err := decodePlacement(r, w.Placement); err != nil {
		return nil, nil, err
	}
	if err := decodeDevices(r, w.Devices); err != nil {
		return nil, nil, err
	}
	if err := decodeRegistries(r, w.Registry, w.Cluster); err != nil {
		return nil, nil, err
	}
	if err := r.CheckMemoryBounds(); err != nil {
		return nil, nil, err
	}
	if len(w.Training) > 0 && !isNull(w.Training) {
		if r.Training, err = decodeTraining(w.Training); err != nil {
			return nil, nil, err
		}
	}
	if err := decodeCompanions(r, w.DraftModel, w.MMProj); err != nil {
		return nil, nil, err
	}
	if !isNull(w.Detect) {
		detect = w.Detect
	}
	return r, detect, nil
}

// decodeCompanions reads draft_model (a model value, as "model" is) and
// mmproj (a file, whose size is its bytes, or size_bytes).
func decodeCompanions(r *planreq.Request, draft json.RawMessage, mm *wireProjector) error {
	if len(draft) > 0 && !isNull(draft) {
		var spec model.Spec
		m, err := decodeModelValue(draft, "request: draft_model", &spec)
		if err != nil {
			// A model the catalog or the file system does not give is
			// the draft's, not the plan's model: say which member, as
			// training.teacher does.
			if msg := errs.MessageOf(err); !strings.HasPrefix(msg, "request: draft_model") {
				return errs.New(errs.CodeOf(err), "request: draft_model: %s", msg)
			}
			return err
		}
		if m.Layers > planreq.MaxLayers {
			return errs.New(errs.InvalidArgument, "request: draft_model: %d layers is more than %d", m.Layers, planreq.MaxLayers)
		}
		r.Draft = &planreq.Companion{Model: m, File: spec.Path}
		var text string
		if r.Draft.File == "" && json.Unmarshal(draft, &text) == nil && strings.HasSuffix(strings.ToLower(text), ".gguf") {
			r.Draft.File = text // a .gguf path given as a string
		}
	}
	if mm == nil {
		return nil
	}
	p := &planreq.Projector{File: mm.Path, OnHost: mm.Offload != nil && !*mm.Offload}
	switch {
	case mm.Path != "" && mm.SizeBytes != nil:
		return errs.New(errs.InvalidArgument, "request: mmproj takes a path or size_bytes, not both")
	case mm.Path != "":
		fi, err := os.Stat(mm.Path)
		if err != nil || !fi.Mode().IsRegular() {
			return errs.New(errs.InvalidArgument, "request: mmproj: no projector file at %q", clip(mm.Path))
		}
		p.Bytes = fi.Size()
		// The header names the image encoder, whose compute buffer the plan
		// counts; a file it cannot read as a projector's is counted by its
		// size alone, as before.
		if enc, err := modelio.ProjectorEncoder(mm.Path); err == nil {
			p.Encoder = enc
		}
	case mm.SizeBytes != nil:
		p.Bytes = mm.SizeBytes.V
	default:
		return errs.New(errs.InvalidArgument, "request: mmproj needs a path or size_bytes")
	}
	if p.Bytes < 1 || p.Bytes > planreq.MaxPlanBytes {
		size := strconv.FormatInt(p.Bytes, 10)
		if mm.SizeBytes != nil {
			size = mm.SizeBytes.Quote()
		}
		return errs.New(errs.InvalidArgument, "request: mmproj size %s bytes is outside [1, %d]", size, int64(planreq.MaxPlanBytes))
	}
	r.Projector = p
	return nil
}

func isNull(b json.RawMessage) bool { return bytes.Equal(bytes.TrimSpace(b), []byte("null")) }

// checkModelContext refuses a context longer than the model was trained
// for (max_position_embeddings, or a GGUF's context_length): vLLM refuses
// such a --max-model-len (https://docs.vllm.ai/en/latest/configuration/engine_args/,
// "--max-model-len ... derived from the model config"), and a plan for it
// would describe memory no engine allocates as asked.
// A default context longer than the model's is lowered to the model's, and
// the answer says so (ContextCapped).
func checkModelContext(r *planreq.Request, explicit bool) error {
	limit := r.Model.MaxContext
	if limit <= 0 || r.ContextLength <= limit {
		return nil
	}
	if !explicit {
		// The default context is longer than the model's: plan the model's.
		r.ContextLength = limit
		r.ContextCapped = true
		return nil
	}
	name := r.Model.Name
	if name == "" {
		name = "the model"
	}
	return errs.New(errs.InvalidArgument, "request: context_length %d is more than %s's maximum context of %d tokens (max_position_embeddings); ask for %d or less",
		r.ContextLength, name, limit, limit)
}

func bounded(name string, w *strictjson.Int, def, max int) (int, error) {
	if w == nil {
		return def, nil
	}
	if w.V < 1 || w.V > int64(max) {
		return 0, errs.New(errs.InvalidArgument, "request: %s %s is outside [1, %d]", name, w.Quote(), max)
	}
	return int(w.V), nil
}

func decodeModel(r *planreq.Request, raw json.RawMessage) error {
	if len(raw) == 0 || isNull(raw) {
		return errs.New(errs.InvalidArgument, "request: model is required")
	}
	m, err := decodeModelValue(raw, "request: model", &r.ModelSpec)
	if err != nil {
		return err
	}
	if m.Layers > planreq.MaxLayers {
		return errs.New(errs.InvalidArgument, "request: model: %d layers is more than %d; no such model exists", m.Layers, planreq.MaxLayers)
	}
	r.Model = m
	return nil
}

// decodeModelValue resolves a model given as an object ({"name": ...},
// {"params_b": ...}, ...) or as one string, read by modelio.FromText's rule
// (a size such as "70b", an existing path, else a catalog name or Hugging
// Face id, else a file of that name): the same rule as the CLI's --model.
// spec, when not nil, receives the object form.
func decodeModelValue(raw json.RawMessage, what string, spec *model.Spec) (*model.Model, error) {
	if s := bytes.TrimSpace(raw); len(s) > 0 && s[0] == '"' {
		var text string
		if err := strictjson.Decode(s, &text, what); err != nil {
			return nil, err
		}
		return modelio.FromText(text)
	}
	var local model.Spec
	if spec == nil {
		spec = &local
	}
	if err := strictjson.Decode(raw, spec, what); err != nil {
		return nil, err
	}
	return modelio.Resolve(*spec)
}

func decodeDevices(r *planreq.Request, ids []string) error {
	if ids == nil {
		return nil
	}
	if len(ids) == 0 {
		return errs.New(errs.InvalidArgument, "request: devices is empty (omit it to use every device)")
	}
	if len(ids) > planreq.MaxRequestDevices {
		return errs.New(errs.InvalidArgument, "request: %d devices is more than %d", len(ids), planreq.MaxRequestDevices)
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

func decodeRegistries(r *planreq.Request, reg json.RawMessage, cluster []json.RawMessage) error {
	if len(reg) > 0 && !isNull(reg) {
		g, err := decodeRegistry(reg)
		if err != nil {
			return err
		}
		r.Registry, r.RegistryShared = g, true
	}
	if cluster == nil {
		return nil
	}
	if r.Registry != nil {
		return errs.New(errs.InvalidArgument, "request: give registry or cluster, not both")
	}
	if len(cluster) == 0 || len(cluster) > planreq.MaxClusterNodes {
		return errs.New(errs.InvalidArgument, "request: cluster must hold 1 to %d node registries", planreq.MaxClusterNodes)
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
	return regjson.DecodeShared(data)
}

// kvUpperBound is the KV cache of full multi-head attention at 2 bytes per
// element plus the recurrent layers' state at 4, in float64 (an upper bound
// of quant.KVCacheBytes for any layer kind).
func kvUpperBound(m *model.Model, ctx, batch int) float64 {
	width := float64(m.Hidden)
	if hd := m.EffectiveHeadDim(); hd > 0 && m.EffectiveKVHeads() > 0 {
		width = math.Max(width, float64(hd*m.EffectiveKVHeads()))
	}
	state := m.RecurrentStateElements() * float64(batch) * 4
	return 2*float64(max(m.Layers, 1))*width*float64(ctx)*float64(batch)*2 + state
}

// decodePlacement reads "placement": "serving" (the default, also
// "auto") or "fewest", in any case.
func decodePlacement(r *planreq.Request, s *string) error {
	r.Placement = planreq.PlacementServing
	if s == nil {
		return nil
	}
	switch v := strings.ToLower(strings.TrimSpace(*s)); v {
	case "auto", planreq.PlacementServing:
	case planreq.PlacementFewest:
		r.Placement = v
	default:
		return errs.New(errs.InvalidArgument, "request: placement must be \"serving\" (the default) or \"fewest\", got %q", clip(*s))
	}
	return nil
}

// decodeReplicas reads "replicas": a whole number from 1 to
// planreq.MaxRequestDevices, or "max" (as many as the chosen device group
// allows).
func decodeReplicas(r *planreq.Request, raw json.RawMessage) error {
	if len(raw) == 0 || isNull(raw) {
		return nil
	}
	s := bytes.TrimSpace(raw)
	if len(s) > 0 && s[0] == '"' {
		var v string
		if err := json.Unmarshal(s, &v); err != nil || strings.ToLower(strings.TrimSpace(v)) != "max" {
			return errs.New(errs.InvalidArgument, "request: replicas must be a whole number >= 1 or \"max\", got %s", clip(string(s)))
		}
		r.ReplicasMax = true
		return nil
	}
	var w strictjson.Int
	if err := w.UnmarshalJSON(s); err != nil {
		return errs.New(errs.InvalidArgument, "request: replicas must be a whole number >= 1 or \"max\", got %s", clip(string(s)))
	}
	if w.V < 1 || w.V > planreq.MaxRequestDevices {
		return errs.New(errs.InvalidArgument, "request: replicas %s is outside [1, %d]", w.Quote(), planreq.MaxRequestDevices)
	}
	r.Replicas = int(w.V)
	return nil
}

// wireTraining is the JSON shape of the "training" object
// (planreq.TrainingOptions says what each field means).
type wireTraining struct {
	Method                string          `json:"method,omitempty"`
	Optimizer             string          `json:"optimizer,omitempty"`
	Precision             string          `json:"precision,omitempty"`
	SeqLen                *strictjson.Int `json:"seq_len,omitempty"`
	MicroBatch            *strictjson.Int `json:"micro_batch,omitempty"`
	GradientCheckpointing *bool           `json:"gradient_checkpointing,omitempty"`
	FlashAttention        *bool           `json:"flash_attention,omitempty"`
	ZeROStage             *strictjson.Int `json:"zero_stage,omitempty"`
	FSDP                  bool            `json:"fsdp,omitempty"`
	NumDevices            *strictjson.Int `json:"num_devices,omitempty"`
	TensorParallel        *strictjson.Int `json:"tensor_parallel,omitempty"`
	LoRARank              *strictjson.Int `json:"lora_rank,omitempty"`
	LoRATargets           []string        `json:"lora_targets,omitempty"`
	BaseQuant             string          `json:"base_quant,omitempty"`
	Teacher               json.RawMessage `json:"teacher,omitempty"`
	Reference             json.RawMessage `json:"reference,omitempty"`
	Reward                json.RawMessage `json:"reward,omitempty"`
	Critic                json.RawMessage `json:"critic,omitempty"`
}

// decodeTraining parses the request's "training" object (unknown keys are
// rejected, like every other part of a request) and resolves the extra
// models it names; the planner checks the values (plan.EstimateTraining).
func decodeTraining(raw json.RawMessage) (*planreq.TrainingOptions, error) {
	// Decoded where it sits in the request, so that a member of the wrong
	// type is named by its path, "request: training.seq_len: expected an
	// integer", as every other member is (docs/requests.md).
	var at struct {
		W wireTraining `json:"training"`
	}
	inRequest := make([]byte, 0, len(raw)+len(`{"training":}`))
	inRequest = append(append(append(inRequest, `{"training":`...), raw...), '}')
	if err := strictjson.Decode(inRequest, &at, "request"); err != nil {
		return nil, err
	}
	w := at.W
	o := &planreq.TrainingOptions{Method: w.Method, Optimizer: w.Optimizer, Precision: w.Precision,
		GradientCheckpointing: w.GradientCheckpointing, FlashAttention: w.FlashAttention,
		FSDP: w.FSDP, LoRATargets: w.LoRATargets, BaseQuant: w.BaseQuant}
	// The counts are 1 or more (schema/request.schema.json); the planner
	// reads 0 as "not given", so a 0 or a negative given here is refused
	// rather than taken for the default or passed on (num_devices -2
	// reached a slice bound). zero_stage is 0 to 3, DeepSpeed's stages.
	for _, c := range []struct {
		name     string
		given    *strictjson.Int
		min, max int64
		to       *int
	}{{"seq_len", w.SeqLen, 1, planreq.MaxContextLength, &o.SeqLen}, {"micro_batch", w.MicroBatch, 1, planreq.MaxTrainingCount, &o.MicroBatch},
		{"num_devices", w.NumDevices, 1, planreq.MaxTrainingCount, &o.NumDevices}, {"tensor_parallel", w.TensorParallel, 1, planreq.MaxTrainingCount, &o.TensorParallel},
		{"lora_rank", w.LoRARank, 1, planreq.MaxTrainingCount, &o.LoRARank}, {"zero_stage", w.ZeROStage, 0, planreq.MaxZeROStage, &o.ZeROStage}} {
		if c.given == nil {
			continue
		}
		if !c.given.Within(c.min, c.max) {
			return nil, errs.New(errs.InvalidArgument, "request: training.%s %s is outside [%d, %d]", c.name, c.given.Quote(), c.min, c.max)
		}
		*c.to = int(c.given.V)
	}
	for _, x := range []struct {
		role string
		raw  json.RawMessage
		to   **model.Model
	}{{"teacher", w.Teacher, &o.Teacher}, {"reference", w.Reference, &o.Reference},
		{"reward", w.Reward, &o.Reward}, {"critic", w.Critic, &o.Critic}} {
		if len(x.raw) == 0 || isNull(x.raw) {
			continue
		}
		what := "request: training." + x.role
		m, err := decodeModelValue(x.raw, what, nil)
		if err != nil {
			// The JSON's errors already start with what; the model's own
			// (not in the catalog, a bare number) do not.
			if msg := errs.MessageOf(err); !strings.HasPrefix(msg, what+": ") {
				return nil, errs.New(errs.CodeOf(err), "%s: %s", what, msg)
			}
			return nil, err
		}
		*x.to = m
	}
	return o, nil
}
