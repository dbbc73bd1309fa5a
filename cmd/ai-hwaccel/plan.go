package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	json "github.com/goccy/go-json"

	"github.com/ai-hwaccel/ai-hwaccel/internal/api"
	"github.com/ai-hwaccel/ai-hwaccel/internal/cli"
	"github.com/ai-hwaccel/ai-hwaccel/internal/engine"
	"github.com/ai-hwaccel/ai-hwaccel/internal/errs"
	"github.com/ai-hwaccel/ai-hwaccel/internal/hub"
	"github.com/ai-hwaccel/ai-hwaccel/internal/model"
	"github.com/ai-hwaccel/ai-hwaccel/internal/planreq"
)

// The engines and KV-cache types of the wire contract (include/ai_hwaccel.h),
// as internal/engine registers them; the command checks them so a typo is a
// usage error with a suggestion, not a silent default. --quant is passed
// through: the engine knows the levels (fp16 ... int4 and the GGUF mixes
// such as q4_k_m) and answers invalid_argument with the list for a name it
// does not know.
var (
	engineNames  = engine.Names()
	kvCacheTypes = append([]string{"auto"}, engine.CacheTypes()...)
)

// kvCacheHelp lists the KV-cache types every engine takes, then each
// engine's own: "fp16, bf16, fp8, int8, or llama.cpp's f32, q8_0, ...".
func kvCacheHelp() string {
	var common []string
	for _, t := range engine.CommonCacheTypes {
		common = append(common, t.Name)
	}
	out := strings.Join(common, ", ")
	for _, e := range engine.All() {
		var own []string
		for _, t := range e.CacheTypes() {
			own = append(own, t.Name)
		}
		if len(own) > 0 {
			out += ", or " + e.Title() + "'s " + strings.Join(own, ", ")
		}
	}
	return out
}

// planFlags are the flags of plan, suggest and train. Strings hold what was
// typed; request() checks and converts them.
type planFlags struct {
	model, quant, devices, engine, kvCache string
	placement                              string
	replicas, registryFile, clusterFile    string
	context, batch                         string
	tensorParallel, memoryFraction         string
	engineVersion                          string
	cpuOffload, includeCPU                 bool
	draftModel, mmproj                     string
	noMMProjOffload                        bool
	train                                  trainFlags
	hub                                    hubFlags
	json, pretty                           bool
}

// trainFlags are the "training" object's fields (internal/plan/training.go).
type trainFlags struct {
	method, precision, optimizer, loraTargets   string
	seqLen, microBatch, baseQuant               string
	loraRank, zeroStage, numDevices, tensorPar  int
	gradientCheckpointing, fsdp, flashAttention bool
	teacher, reference, reward, critic          string
}

const modelHelp = "give a size (70b, 7.5B, 7000m), a catalog name (Llama-2-7B; see ai-hwaccel models), a model file or directory, or a Hugging Face id (org/name)"

func newPlanFlags(cmd, usage, about string) (*flags, *planFlags, *detectFlags) {
	f := newFlags(cmd, usage, about)
	p := &planFlags{}
	f.StringVar(&p.model, "model", "", "the `MODEL` (required): a size (70b, 7.5B, 7000m), a catalog name (Llama-2-7B), a model file or directory, or a Hugging Face id (org/name, org/name:Q4_K_M)")
	names := []string{"model"}
	if cmd == "plan" {
		f.StringVar(&p.quant, "quant", "auto", "precision `QUANT`: auto, fp32, fp16, bf16, fp8, int8, int4 or a GGUF type (q4_k_m, q8_0)")
		f.StringVar(&p.placement, "placement", "", "how a plan with no --devices, --tensor-parallel-size or --replicas uses the devices, `MODE`: serving (vLLM and SGLang: tensor parallel within the NVLink/xGMI domain, replicas beyond it, the fastest layout at --batch) or fewest (the fewest devices that hold the model) (default serving)")
		names = append(names, "quant", "placement")
	}
	if cmd == "train" {
		names = append(names, p.train.register(f)...)
	}
	contextHelp := "context length in tokens, `N` >= 1: 8192, 32k, 128k (k = 1024) (default 4096, or the model's maximum when shorter)"
	if cmd == "plan" {
		// Only plan chooses a context as the engine would (fitContext in
		// internal/plan/fitcontext.go); suggest and train plan the default.
		contextHelp = "context length in tokens, `N` >= 1: 8192, 32k, 128k (k = 1024), or auto: the model's trained context reduced to the longest that fits (default: auto for llama.cpp, vLLM and SGLang plans, 4096 for --engine none)"
	}
	f.StringVar(&p.context, "context", "", contextHelp)
	batchHelp := "sequences served at once, each up to --context tokens, `N` >= 1 (default 1)"
	if cmd == "train" {
		batchHelp = "sequences per device per step (the --micro-batch default), `N` >= 1 (default 1)"
	}
	f.StringVar(&p.batch, "batch", "", batchHelp)
	f.StringVar(&p.devices, "devices", "", "use only these device `IDS`: cuda:0,cuda:1 or cuda:0-3")
	names = append(names, "context", "batch", "devices")
	names = append(names, p.hub.register(f)...)
	if cmd != "train" {
		f.StringVar(&p.kvCache, "kv-cache", "", "KV-cache `TYPE`: auto (the model's 16-bit type), "+kvCacheHelp())
		f.BoolVar(&p.cpuOffload, "cpu-offload", false, "allow keeping layers in host memory when the accelerators are too small")
		f.BoolVar(&p.includeCPU, "include-cpu", false, "consider the CPU as a device beside the accelerators")
		f.StringVar(&p.engine, "engine", "", "plan for inference `ENGINE`: "+strings.Join(engineNames, ", "))
		f.StringVar(&p.replicas, "replicas", "", "data parallel: `N` copies of the model on disjoint identical devices, each serving batch/N sequences; max = as many as fit")
		f.StringVar(&p.tensorParallel, "tensor-parallel-size", "", "split each layer over exactly `N` devices (vLLM --tensor-parallel-size; 1: no tensor parallelism); default: see --placement")
		f.StringVar(&p.memoryFraction, "memory-fraction", "", "let the engine use fraction `F` of each device's total memory: 0.95 or 95% (vLLM --gpu-memory-utilization; default 0.9 for vLLM)")
		f.StringVar(&p.engineVersion, "engine-version", "", "the vLLM release `V` to expect its start-up figures of (engine_expect.vllm): 0.11.0 (default 0.21.0)")
		f.StringVar(&p.clusterFile, "cluster", "", "plan over several machines: `FILE` holds a JSON array of their registries (each the output of ai-hwaccel on a node)")
		f.StringVar(&p.draftModel, "draft-model", "", "count a draft `MODEL` for speculative decoding beside the model (llama.cpp -md): given as --model is")
		f.StringVar(&p.mmproj, "mmproj", "", "count a multimodal projector `FILE` (.gguf) on the first GPU (llama.cpp --mmproj)")
		f.BoolVar(&p.noMMProjOffload, "no-mmproj-offload", false, "keep the --mmproj projector in host memory (llama.cpp --no-mmproj-offload)")
		names = append(names, "kv-cache", "cpu-offload", "include-cpu", "engine", "replicas", "tensor-parallel-size", "memory-fraction", "engine-version", "cluster",
			"draft-model", "mmproj", "no-mmproj-offload")
	}
	f.StringVar(&p.registryFile, "registry", "", "plan on the registry in `FILE` (ai-hwaccel > FILE on another machine) instead of detecting this one")
	f.BoolVar(&p.json, "json", false, "print the engine's JSON answer instead of text")
	f.BoolVar(&p.pretty, "pretty", false, "indent the JSON (with --json)")
	names = append(names, "registry", "json", "pretty")
	f.group("Flags", names...)
	d := &detectFlags{}
	d.register(f)
	return f, p, d
}

func (t *trainFlags) register(f *flags) []string {
	f.StringVar(&t.method, "method", "", "training `METHOD` (required): full, lora, qlora, prefix, dpo, rlhf, distillation")
	f.StringVar(&t.precision, "precision", "", "training `PRECISION`: bf16 or fp16 (mixed precision), fp32 (default bf16)")
	f.StringVar(&t.optimizer, "optimizer", "", "`OPTIMIZER` whose state is counted: adamw, adamw_8bit, sgd, adafactor (default adamw)")
	f.StringVar(&t.seqLen, "seq-len", "", "training sequence length, `N` tokens (2048, 8k; default: --context)")
	f.StringVar(&t.microBatch, "micro-batch", "", "micro-batch size per device, `N` (default: --batch)")
	f.BoolVar(&t.gradientCheckpointing, "gradient-checkpointing", false, "recompute activations in the backward pass instead of storing them (default: on for lora and qlora)")
	f.BoolVar(&t.flashAttention, "flash-attention", true, "attention scores are not stored (--flash-attention=false stores them)")
	f.IntVar(&t.zeroStage, "zero", 0, "DeepSpeed ZeRO `STAGE` 0-3: shard optimizer state (1), gradients (2), weights (3)")
	f.BoolVar(&t.fsdp, "fsdp", false, "PyTorch FSDP full sharding (like ZeRO stage 3)")
	f.IntVar(&t.numDevices, "num-devices", 0, "train on `N` devices (default: every device of the chosen kind)")
	f.IntVar(&t.tensorPar, "tensor-parallel", 0, "split each layer over `N` devices (Megatron style); the rest is data parallel")
	f.IntVar(&t.loraRank, "lora-rank", 0, "LoRA adapter `RANK` (default 16)")
	f.StringVar(&t.baseQuant, "base-quant", "", "qlora: the frozen base's precision `QUANT`: nf4 (default), int8, or a GGUF type (q4_k_m, q8_0)")
	f.StringVar(&t.loraTargets, "lora-targets", "", "LoRA target `MODULES`, comma-separated: q,k,v,o,gate,up,down, attention or all-linear (default q,v)")
	f.StringVar(&t.teacher, "teacher", "", "distillation teacher `MODEL` (default: the trained model)")
	f.StringVar(&t.reference, "reference", "", "dpo/rlhf reference `MODEL` (default: the trained model)")
	f.StringVar(&t.reward, "reward", "", "rlhf reward `MODEL` (default: the trained model)")
	f.StringVar(&t.critic, "critic", "", "rlhf critic `MODEL` (default: the trained model)")
	return []string{"method", "precision", "optimizer", "seq-len", "micro-batch", "gradient-checkpointing", "flash-attention",
		"zero", "fsdp", "num-devices", "tensor-parallel", "lora-rank", "lora-targets", "base-quant", "teacher", "reference", "reward", "critic"}
}

func (a *app) plan(args []string) error {
	f, p, d := newPlanFlags("plan",
		"  ai-hwaccel plan --model MODEL [--quant QUANT] [--context N] [--batch N] [--devices IDS] [--engine ENGINE] [--replicas N] [--tensor-parallel-size N] [--placement MODE] [--memory-fraction F] [--engine-version V] [--json]",
		"Plans how to run a model on the detected devices: the strategy (one device, tensor or pipeline\nparallel, CPU offload, data parallel replicas with --replicas), the shard of every device, the memory breakdown, the expected throughput\nand the arguments for the inference engine. A model that does not fit is an answer (it says so,\nand why), not an error. Without --engine the plan is made for the usual engine of the devices\n(vLLM on data-center GPUs and accelerators, llama.cpp on NVIDIA GPUs below vLLM's compute\ncapability 7.0, Metal, Vulkan, shared-memory GPUs and the CPU) and within that engine's memory budget, which the answer states.")
	return a.planning(f, p, d, args, api.PlanSharding, cli.WritePlan)
}

func (a *app) suggest(args []string) error {
	f, p, d := newPlanFlags("suggest",
		"  ai-hwaccel suggest --model MODEL [--context N] [--batch N] [--devices IDS] [--json]",
		"Suggests the best precision for a model on the detected devices, and why.")
	return a.planning(f, p, d, args, api.SuggestQuant, cli.WriteSuggestion)
}

func (a *app) train(args []string) error {
	f, p, d := newPlanFlags("train",
		"  ai-hwaccel train --model MODEL --method METHOD [--precision P] [--optimizer O] [--zero N] [--lora-rank R] [--context N] [--batch N] [--devices IDS] [--json]",
		"Estimates the memory needed to fine-tune or train a model with a method (lora, qlora, full, ...)\non the detected devices: weights, gradients, optimizer state, activations, per device.")
	return a.planning(f, p, d, args, api.EstimateTraining, cli.WriteTraining)
}

// answerWriter prints one kind of planning answer for a human.
type answerWriter func(w io.Writer, answer []byte, info cli.AnswerInfo) error

// planning builds the request of the wire contract from the flags, calls the
// engine entry point and prints its answer.
func (a *app) planning(f *flags, p *planFlags, d *detectFlags, args []string,
	call func(context.Context, []byte, api.Env) []byte, write answerWriter) error {
	if err := f.parse(a, args); err != nil {
		return ignoreHelp(err)
	}
	req, err := p.request(f)
	if err != nil {
		return err
	}
	opts, err := d.options(f)
	if err != nil {
		return err
	}
	if opts != nil {
		req["detect"] = opts
	}
	m, err := parseModel(f.cmd, p.model)
	if err != nil {
		return err
	}
	a.warmPlanning(req, opts)
	out, m, err := a.callWithModel(f.cmd, req, m, p.model, p.hub, call)
	if err != nil {
		return err
	}
	if p.json {
		return a.writeJSON(out, p.pretty)
	}
	info := cli.AnswerInfo{Model: shownName(m, p.model), Engine: p.engine, DeviceNames: a.deviceNames(req, opts)}
	info.ServeModel, info.ModelFile = engineModel(m)
	if f.cmd == "suggest" {
		info.PlanCommand = planCommandFor(args)
		info.PlanPlacementOpen = !f.isSet("devices") && !f.isSet("tensor-parallel-size") && !f.isSet("replicas") && !f.isSet("cluster")
	}
	return write(a.stdout, out, info)
}

// request turns the flags other than the model into request fields.
func (p *planFlags) request(f *flags) (map[string]any, error) {
	req := map[string]any{}
	if p.pretty && !p.json {
		return nil, usagef(f.cmd, "--pretty applies to --json output")
	}
	if f.Lookup("quant") != nil {
		q := strings.ToLower(strings.TrimSpace(p.quant))
		if q == "" {
			return nil, usagef(f.cmd, "--quant needs a value (auto, bf16, int4, q4_k_m, ...)")
		}
		req["quant"] = q
	}
	if f.Lookup("method") != nil {
		t, err := p.train.object(f)
		if err != nil {
			return nil, err
		}
		req["training"] = t
	}
	for _, x := range []struct{ name, key, val string }{{"context", "context_length", p.context}, {"batch", "batch_size", p.batch}} {
		if !f.isSet(x.name) {
			continue
		}
		if x.name == "context" && strings.EqualFold(strings.TrimSpace(x.val), "auto") {
			req[x.key] = "auto" // the context the engine would choose itself
			continue
		}
		n, err := countFlag(f.cmd, x.name, x.val, map[string]int{"context": planreq.MaxContextLength, "batch": planreq.MaxBatchSize}[x.name])
		if err != nil {
			return nil, err
		}
		req[x.key] = n
	}
	if f.isSet("devices") {
		ids, err := deviceList(f.cmd, p.devices)
		if err != nil {
			return nil, err
		}
		req["devices"] = ids
	}
	if err := p.choices(f, req); err != nil {
		return nil, err
	}
	if p.cpuOffload {
		req["cpu_offload"] = true
	}
	if p.includeCPU {
		req["include_cpu"] = true
	}
	if f.isSet("replicas") {
		v, err := replicasValue(f.cmd, p.replicas)
		if err != nil {
			return nil, err
		}
		req["replicas"] = v
	}
	if err := p.budget(f, req); err != nil {
		return nil, err
	}
	if err := p.companions(f, req); err != nil {
		return nil, err
	}
	return req, p.machines(f, req)
}

// companions reads --draft-model (a model, as --model) and --mmproj FILE
// with --no-mmproj-offload.
func (p *planFlags) companions(f *flags, req map[string]any) error {
	if f.isSet("draft-model") {
		req["draft_model"] = strings.TrimSpace(p.draftModel)
	}
	if p.noMMProjOffload && !f.isSet("mmproj") {
		return usagef(f.cmd, "--no-mmproj-offload applies to --mmproj FILE")
	}
	if f.isSet("mmproj") {
		mm := map[string]any{"path": p.mmproj}
		if p.noMMProjOffload {
			mm["offload"] = false
		}
		req["mmproj"] = mm
	}
	return nil
}

// budget reads --tensor-parallel-size (a whole number) and
// --memory-fraction (0.95 or 95%); the engine checks their ranges against
// the model and devices.
func (p *planFlags) budget(f *flags, req map[string]any) error {
	if f.isSet("tensor-parallel-size") {
		n, err := strconv.Atoi(strings.TrimSpace(p.tensorParallel))
		if err != nil || n < 1 {
			return usagef(f.cmd, "--tensor-parallel-size %q: want a whole number >= 1", p.tensorParallel)
		}
		req["tensor_parallel_size"] = n
	}
	if f.isSet("memory-fraction") {
		v, err := parseFraction(p.memoryFraction)
		if err != nil {
			return usagef(f.cmd, "--memory-fraction: %v", err)
		}
		req["memory_fraction"] = v
	}
	if f.isSet("engine-version") {
		req["engine_version"] = p.engineVersion
	}
	return nil
}

// choices checks the flags that take one of a few names.
func (p *planFlags) choices(f *flags, req map[string]any) error {
	for _, x := range []struct {
		flag, key, val string
		names          []string
	}{{"engine", "engine", p.engine, engineNames}, {"kv-cache", "kv_cache_dtype", p.kvCache, kvCacheTypes},
		{"placement", "placement", p.placement, placementNames}} {
		if !f.isSet(x.flag) {
			continue
		}
		v := strings.ToLower(strings.TrimSpace(x.val))
		if !contains(x.names, v) {
			return usagef(f.cmd, "--%s %q: want one of %s%s", x.flag, x.val, strings.Join(x.names, ", "), didYouMean(v, x.names, ""))
		}
		req[x.key] = v
	}
	// The engine's name as its answer keys engine_args (any case is
	// accepted): the text looks the command up under it.
	p.engine = strings.ToLower(strings.TrimSpace(p.engine))
	return nil
}

// placementNames are the values of --placement (the request's
// "placement").
var placementNames = []string{"serving", "fewest"}

// machines reads --registry and --cluster: registries given as files
// replace the detection of this machine.
func (p *planFlags) machines(f *flags, req map[string]any) error {
	if f.isSet("registry") && f.isSet("cluster") {
		return usagef(f.cmd, "--registry and --cluster exclude each other")
	}
	if f.isSet("registry") {
		b, err := readJSONFile(f.cmd, "registry", p.registryFile)
		if err != nil {
			return err
		}
		req["registry"] = b
	}
	if f.isSet("cluster") {
		b, err := readJSONFile(f.cmd, "cluster", p.clusterFile)
		if err != nil {
			return err
		}
		var nodes []json.RawMessage
		if json.Unmarshal(b, &nodes) != nil {
			return usagef(f.cmd, "--cluster %q: want a JSON array of registries, one per node", p.clusterFile)
		}
		req["cluster"] = nodes
	}
	return nil
}

// readJSONFile reads a JSON file named by a flag; a missing file says so.
func readJSONFile(cmd, flag, name string) (json.RawMessage, error) {
	b, err := os.ReadFile(name)
	if errors.Is(err, os.ErrNotExist) {
		return nil, usagef(cmd, "--%s %q: file not found", flag, name)
	}
	if err != nil {
		return nil, usagef(cmd, "--%s: %v", flag, err)
	}
	if !json.Valid(b) {
		return nil, usagef(cmd, "--%s %q: not JSON", flag, name)
	}
	return b, nil
}

// object is the request's "training" object.
func (t *trainFlags) object(f *flags) (map[string]any, error) {
	m := strings.TrimSpace(t.method)
	if m == "" {
		return nil, usagef(f.cmd, "--method is required (e.g. lora, qlora, full)")
	}
	o := map[string]any{"method": m}
	for _, x := range []struct{ flag, key, val string }{
		{"precision", "precision", t.precision}, {"optimizer", "optimizer", t.optimizer}, {"base-quant", "base_quant", t.baseQuant}} {
		if f.isSet(x.flag) {
			if strings.TrimSpace(x.val) == "" {
				return nil, usagef(f.cmd, "--%s needs a value", x.flag)
			}
			o[x.key] = strings.TrimSpace(x.val)
		}
	}
	for _, x := range []struct {
		flag, key, val string
		max            int
	}{{"seq-len", "seq_len", t.seqLen, planreq.MaxContextLength}, {"micro-batch", "micro_batch", t.microBatch, planreq.MaxTrainingCount}} {
		if f.isSet(x.flag) {
			n, err := countFlag(f.cmd, x.flag, x.val, x.max)
			if err != nil {
				return nil, err
			}
			o[x.key] = n
		}
	}
	for _, x := range []struct {
		flag, key string
		v, min    int
		max       int // the request contract's (schema/request.schema.json)
	}{{"zero", "zero_stage", t.zeroStage, 0, 3}, {"num-devices", "num_devices", t.numDevices, 1, planreq.MaxTrainingCount},
		{"tensor-parallel", "tensor_parallel", t.tensorPar, 1, planreq.MaxTrainingCount}, {"lora-rank", "lora_rank", t.loraRank, 1, planreq.MaxTrainingCount}} {
		if f.isSet(x.flag) {
			if x.v < x.min {
				return nil, usagef(f.cmd, "--%s must be >= %d, got %d", x.flag, x.min, x.v)
			}
			if x.v > x.max {
				return nil, usagef(f.cmd, "--%s must be %d-%d, got %d", x.flag, x.min, x.max, x.v)
			}
			o[x.key] = x.v
		}
	}
	if f.isSet("gradient-checkpointing") {
		o["gradient_checkpointing"] = t.gradientCheckpointing
	}
	if t.fsdp {
		o["fsdp"] = true
	}
	if f.isSet("flash-attention") {
		o["flash_attention"] = t.flashAttention
	}
	if f.isSet("lora-targets") {
		var list []string
		for _, s := range strings.Split(t.loraTargets, ",") {
			if s = strings.TrimSpace(s); s != "" {
				list = append(list, s)
			}
		}
		if len(list) == 0 {
			return nil, usagef(f.cmd, "--lora-targets needs module names (q,v or all-linear)")
		}
		o["lora_targets"] = list
	}
	for _, x := range []struct{ flag, key, val string }{{"teacher", "teacher", t.teacher}, {"reference", "reference", t.reference},
		{"reward", "reward", t.reward}, {"critic", "critic", t.critic}} {
		if !f.isSet(x.flag) {
			continue
		}
		m, err := parseModel(f.cmd, x.val)
		if err != nil {
			return nil, err
		}
		o[x.key] = map[string]any{m.key: m.val}
	}
	return o, nil
}

// replicasValue reads --replicas: a whole number >= 1, sent as a number, or
// "max", sent as the string.
func replicasValue(cmd, s string) (any, error) {
	s = strings.ToLower(strings.TrimSpace(s))
	if s == "max" {
		return s, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		return nil, usagef(cmd, "--replicas %q: want a whole number >= 1 or max", s)
	}
	return n, nil
}

// modelArg is how a --model value is sent: {"params": N}, {"name": ...} or
// {"path": ...}; or, for a Hugging Face id (key "hub", val the repository),
// obj, the files fetched (internal/hub).
type modelArg struct {
	key string
	val any
	obj map[string]any
}

// parseModel reads --model by the rule every host's "model": "<text>"
// follows (model.SpecOfText): a size with a unit is a parameter count; a
// value that names an existing file or directory and looks like a path is a
// path; anything else is a catalog name (callWithModel falls back to a file
// of that name when the catalog does not know it).
func parseModel(cmd, s string) (modelArg, error) {
	if strings.TrimSpace(s) == "" {
		return modelArg{}, usagef(cmd, "--model is required: "+modelHelp)
	}
	spec, err := model.SpecOfText(s)
	switch {
	case err != nil:
		return modelArg{}, usagef(cmd, "--%s", errs.MessageOf(err))
	case spec.Params != nil:
		return modelArg{key: "params", val: int64(*spec.Params)}, nil
	case spec.Path != "":
		return modelArg{key: "path", val: spec.Path}, nil
	}
	return modelArg{key: "name", val: spec.Name}, nil
}

func exists(s string) bool {
	_, err := os.Stat(s)
	return err == nil
}

func pathArg(s string) modelArg {
	if abs, err := filepath.Abs(s); err == nil {
		s = abs
	}
	return modelArg{key: "path", val: s}
}

// callWithModel calls the engine and returns the answer and the model
// argument it was given. A name the catalog does not know is tried as a
// file when one exists by that name; a path that does not exist is "file
// not found"; otherwise it is a usage error carrying the engine's message
// (which suggests close names).
func (a *app) callWithModel(cmd string, req map[string]any, m modelArg, raw string, h hubFlags,
	call func(context.Context, []byte, api.Env) []byte) ([]byte, modelArg, error) {
	ask := func(m modelArg) ([]byte, error) {
		if m.obj != nil {
			req["model"] = m.obj
		} else {
			req["model"] = map[string]any{m.key: m.val}
		}
		body, err := json.Marshal(req)
		if err != nil {
			return nil, err
		}
		kind := "planning"
		if cmd == "rent" {
			kind = "rent" // schema/rent-request.schema.json
		}
		a.send(kind, body)
		out := call(a.ctx, body, a.getenv)
		return out, answerError(out)
	}
	out, err := ask(m)
	var ee *engineError
	if m.key == "name" && errors.As(err, &ee) && ee.code == errs.UnknownModel && (ee.field == "" || ee.field == "model") {
		if exists(raw) {
			m = pathArg(raw)
			out, err = ask(m)
			return out, m, err
		}
		if hub.LooksLikeRepo(raw) {
			// Not in the catalog: the Hugging Face repository of that id.
			if m, err = a.fetchModel(cmd, raw, h); err != nil {
				return nil, m, err
			}
			out, err = ask(m)
			return out, m, err
		}
		// The sentence says what --model takes: the hint would repeat it.
		why := strings.TrimSuffix(ee.message, "; "+cli.GiveModel)
		if model.LooksLikePath(raw) {
			return nil, m, usagef(cmd, "--model %q: file not found (nor a catalog name: %s)", raw, why)
		}
		return nil, m, usagef(cmd, "--model %q is not a size like 70b, not a model the catalog knows and not an existing file (%s)", raw, why)
	}
	return out, m, err
}

// shownName is the model's name in a headline whose answer names no model
// (suggest, train): the catalog's name of a catalog model, as plan's
// answer gives it ("Qwen3-30B-A3B" for qwen3:30b-a3b), else what was typed.
func shownName(m modelArg, typed string) string {
	if name, ok := m.val.(string); ok && m.key == "name" {
		if c := model.Lookup(name); c != nil {
			return c.Name
		}
	}
	return typed
}

// engineModel is what the engine commands of a headline load when the user
// gave a model directory or file: that path, a .gguf file for llama.cpp. A
// catalog model's commands load the checkpoint the answer names ("load").
func engineModel(m modelArg) (serve, gguf string) {
	switch m.key {
	case "hub":
		repo, _ := m.val.(string)
		return repo, ""
	case "path":
		p, _ := m.val.(string)
		if strings.EqualFold(filepath.Ext(p), ".gguf") {
			return p, p
		}
		return p, ""
	}
	return "", ""
}

// planCommandFor turns suggest's arguments into the plan command line that
// plans its answer (the flags of suggest are a subset of plan's).
func planCommandFor(args []string) string {
	words := []string{"ai-hwaccel", "plan"}
	for _, s := range args {
		words = append(words, cli.ShellWord(s))
	}
	return strings.Join(words, " ")
}

// deviceNames maps device ids to product names for the human output: from
// the --registry or --cluster file, else from this machine's detection,
// which the planning call just cached (so no second detection runs). It is
// nil when they cannot be read; the output then shows ids.
func (a *app) deviceNames(req map[string]any, opts map[string]any) map[string]string {
	names := map[string]string{}
	add := func(prefix string, b []byte) {
		if reg, err := decodeRegistry(b); err == nil {
			for _, d := range reg.Devices {
				names[prefix+d.ID] = d.Name
			}
		}
	}
	switch {
	case req["registry"] != nil:
		add("", req["registry"].(json.RawMessage))
	case req["cluster"] != nil:
		for i, node := range req["cluster"].([]json.RawMessage) {
			add(fmt.Sprintf("node%d/", i), node)
		}
	default:
		o := map[string]any{"cache_ttl_ms": 30000}
		for k, v := range opts {
			o[k] = v
		}
		b, err := json.Marshal(o)
		if err != nil {
			return nil
		}
		a.send("detect", b)
		out := api.Detect(a.ctx, b, a.getenv)
		if answerError(out) != nil {
			return nil
		}
		add("", out)
	}
	return names
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
