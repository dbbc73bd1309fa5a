package plan

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/ai-hwaccel/ai-hwaccel/internal/errs"
	"github.com/ai-hwaccel/ai-hwaccel/internal/model"
	"github.com/ai-hwaccel/ai-hwaccel/internal/planreq"
	"github.com/ai-hwaccel/ai-hwaccel/internal/precision"
	"github.com/ai-hwaccel/ai-hwaccel/internal/quant"
	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// Training methods, optimizers and precisions of the "training" object.
const (
	MethodFull         = "full"
	MethodLoRA         = "lora"
	MethodQLoRA        = "qlora"
	MethodPrefix       = "prefix"
	MethodDPO          = "dpo"
	MethodRLHF         = "rlhf" // PPO: policy, critic, reference and reward models
	MethodDistillation = "distillation"

	OptAdamW     = "adamw"
	OptAdamW8bit = "adamw_8bit"
	OptSGD       = "sgd"
	OptAdafactor = "adafactor"
)

// Training defaults and limits.
const (
	defaultLoRARank      = 16
	defaultPrefixTokens  = 20 // PEFT PrefixTuningConfig examples
	maxLoRARank          = planreq.MaxTrainingCount
	maxTrainingDevices   = planreq.MaxTrainingCount
	maxTrainingMicroBtch = planreq.MaxTrainingCount
)

// TrainingOptions is the "training" object of an estimate_training request
// (planreq.TrainingOptions); validateTraining applies its defaults.
type TrainingOptions = planreq.TrainingOptions

// trainingSetup is the validated options with the extra models resolved.
type trainingSetup struct {
	TrainingOptions
	checkpointing                      bool // GradientCheckpointing with its default applied
	teacher, reference, reward, critic *model.Model
	targets                            []string
	adapters                           bool        // the trained weights are adapters over a frozen base
	baseQuant                          quant.Level // qlora: the frozen base's level
	// baseQuantName is how the answer names it: "nf4" for NF4, which is
	// sized as int4 (the CLI printed "base quant: int4" where the option
	// said nf4, issue 24 item 5), else the level.
	baseQuantName string
}

// decodeBaseQuant sets the QLoRA base's level: base_quant, nf4 by default.
func (s *trainingSetup) decodeBaseQuant() error {
	b := strings.ToLower(strings.TrimSpace(s.BaseQuant))
	if s.Method != MethodQLoRA {
		if b != "" {
			return errs.New(errs.InvalidArgument, "request: training.base_quant applies to %s, not %s", HintMethod(MethodQLoRA), s.Method)
		}
		return nil
	}
	if b == "" || b == "nf4" {
		s.baseQuant, s.baseQuantName = quant.INT4, "nf4"
		return nil
	}
	l, err := quant.Parse(b)
	if err != nil {
		return errs.New(errs.InvalidArgument, "request: training.base_quant: %s", errs.MessageOf(err))
	}
	s.baseQuant, s.baseQuantName = l, string(l)
	return nil
}

// validate normalises the options and resolves the auxiliary models.
func validateTraining(o TrainingOptions, req *planning) (*trainingSetup, error) {
	s := &trainingSetup{TrainingOptions: o}
	for _, step := range []func() error{s.normaliseMethod, s.normaliseOptimizer, s.decodeBaseQuant, s.normalisePrecision, s.normaliseZeRO} {
		if err := step(); err != nil {
			return nil, err
		}
	}
	s.defaultShape(req)
	if err := s.checkBounds(); err != nil {
		return nil, err
	}
	s.setAdapters()
	targets, err := loraTargets(s.LoRATargets)
	if err != nil {
		return nil, err
	}
	s.targets = targets
	if err := companionsApply(s); err != nil {
		return nil, err
	}
	s.resolveCompanions(req)
	return s, nil
}

// normaliseMethod lower-cases the method, full by default, ppo read as
// rlhf; an unknown one is refused.
func (s *trainingSetup) normaliseMethod() error {
	given := s.Method
	s.Method = strings.ToLower(s.Method)
	switch s.Method {
	case "":
		s.Method = MethodFull
	case "ppo":
		s.Method = MethodRLHF
	case MethodFull, MethodLoRA, MethodQLoRA, MethodPrefix, MethodDPO, MethodRLHF, MethodDistillation:
	default:
		return errs.New(errs.InvalidArgument, "request: training.method %q is not one of full, lora, qlora, prefix, dpo, rlhf, ppo, distillation", given)
	}
	return nil
}

// normaliseOptimizer lower-cases the optimizer, adamw by default (adam read
// as it), bitsandbytes' 8-bit AdamW names read as adamw_8bit; an unknown
// one is refused.
func (s *trainingSetup) normaliseOptimizer() error {
	given := s.Optimizer
	s.Optimizer = strings.ToLower(s.Optimizer)
	switch s.Optimizer {
	case "", "adam":
		s.Optimizer = OptAdamW
	case "adamw8bit", "adam_8bit", "paged_adamw_8bit":
		s.Optimizer = OptAdamW8bit
	case OptAdamW, OptAdamW8bit, OptSGD, OptAdafactor:
	default:
		return errs.New(errs.InvalidArgument, "request: training.optimizer %q is not one of adamw, adamw_8bit, sgd, adafactor", given)
	}
	return nil
}

// normalisePrecision lower-cases the precision, bf16 by default; another
// than bf16, fp16 or fp32 is refused.
func (s *trainingSetup) normalisePrecision() error {
	given := s.Precision
	s.Precision = strings.ToLower(s.Precision)
	switch s.Precision {
	case "":
		s.Precision = "bf16"
	case "bf16", "fp16", "fp32":
	default:
		return errs.New(errs.InvalidArgument, "request: training.precision %q is not one of bf16, fp16, fp32", given)
	}
	return nil
}

// normaliseZeRO sets ZeRO stage 3 under FSDP (which shards as it does;
// another stage contradicts it) and refuses a stage outside [0, 3]
// (internal/api/wire refuses one in a request first).
func (s *trainingSetup) normaliseZeRO() error {
	if s.FSDP {
		if s.ZeROStage != 0 && s.ZeROStage != 3 {
			return errs.New(errs.InvalidArgument, "request: training.fsdp shards like ZeRO stage 3; training.zero_stage %d contradicts it", s.ZeROStage)
		}
		s.ZeROStage = 3
	}
	if s.ZeROStage < 0 || s.ZeROStage > planreq.MaxZeROStage {
		return errs.New(errs.InvalidArgument, "request: training.zero_stage %d is outside [0, %d]", s.ZeROStage, planreq.MaxZeROStage)
	}
	return nil
}

// defaultShape takes the sequence length and micro-batch the options leave
// out from the request's context and batch, and tensor parallel 1.
func (s *trainingSetup) defaultShape(req *planning) {
	if s.SeqLen == 0 {
		s.SeqLen = req.ContextLength
	}
	if s.MicroBatch == 0 {
		s.MicroBatch = req.BatchSize
	}
	if s.TensorParallel == 0 {
		s.TensorParallel = 1
	}
}

// checkBounds refuses a count outside its bounds, and a device count that
// tensor parallelism does not divide. The counts are checked in the order
// docs/requests.md lists them (seq_len, micro_batch, num_devices,
// tensor_parallel, lora_rank), so that with several out of range the error
// names the first of them, the same one every time (the wire decoder,
// internal/api/wire decodeTraining, checks them in this order too). A count left out
// (num_devices, lora_rank 0) is checked as 1.
func (s *trainingSetup) checkBounds() error {
	for _, c := range []struct {
		name   string
		v, max int
	}{
		{"seq_len", s.SeqLen, MaxContextLength},
		{"micro_batch", s.MicroBatch, maxTrainingMicroBtch},
		{"num_devices", max(s.NumDevices, 1), maxTrainingDevices},
		{"tensor_parallel", s.TensorParallel, maxTrainingDevices},
		{"lora_rank", max(s.LoRARank, 1), maxLoRARank},
	} {
		if c.v < 1 || c.v > c.max {
			return errs.New(errs.InvalidArgument, "request: training.%s %d is outside [1, %d]", c.name, c.v, c.max)
		}
	}
	if s.NumDevices > 0 && s.NumDevices%s.TensorParallel != 0 {
		return errs.New(errs.InvalidArgument, "request: training.num_devices %d is not a multiple of training.tensor_parallel %d", s.NumDevices, s.TensorParallel)
	}
	return nil
}

// setAdapters says whether the method trains adapters (LoRA, QLoRA,
// prefix; DPO, RLHF and distillation where a LoRA rank is given, at the
// default rank where LoRA's is not) and whether it checkpoints gradients
// (LoRA and QLoRA by default; as the options say where they do).
func (s *trainingSetup) setAdapters() {
	switch s.Method {
	case MethodLoRA, MethodQLoRA, MethodPrefix:
		s.adapters = true
	case MethodDPO, MethodRLHF, MethodDistillation:
		s.adapters = s.LoRARank > 0
	}
	s.checkpointing = s.Method == MethodLoRA || s.Method == MethodQLoRA
	if s.GradientCheckpointing != nil {
		s.checkpointing = *s.GradientCheckpointing
	}
	if s.adapters && s.Method != MethodPrefix && s.LoRARank == 0 {
		s.LoRARank = defaultLoRARank
	}
}

// resolveCompanions sets the models the method trains with: a
// distillation's teacher, DPO's and RLHF's reference, RLHF's reward and
// critic. The extra models were resolved when the request was decoded;
// each defaults to the trained model.
func (s *trainingSetup) resolveCompanions(req *planning) {
	orTrained := func(m *model.Model) *model.Model {
		if m == nil {
			return req.Model
		}
		return m
	}
	if s.Method == MethodDistillation {
		s.teacher = orTrained(s.Teacher)
	}
	if s.Method == MethodDPO || s.Method == MethodRLHF {
		s.reference = orTrained(s.Reference)
	}
	if s.Method == MethodRLHF {
		s.reward, s.critic = orTrained(s.Reward), orTrained(s.Critic)
	}
}

// companionsApply refuses a companion model the method does not train
// with, as base_quant outside qlora is: dropped without a word, "lora"
// with a teacher was answered as plain LoRA.
func companionsApply(s *trainingSetup) error {
	for _, c := range []struct {
		name    string
		given   bool
		methods []string
	}{
		{"teacher", s.Teacher != nil, []string{MethodDistillation}},
		{"reference", s.Reference != nil, []string{MethodDPO, MethodRLHF}},
		{"reward", s.Reward != nil, []string{MethodRLHF}},
		{"critic", s.Critic != nil, []string{MethodRLHF}},
	} {
		if !c.given || slices.Contains(c.methods, s.Method) {
			continue
		}
		hints := make([]string, len(c.methods))
		for i, m := range c.methods {
			hints[i] = HintMethod(m)
		}
		return errs.New(errs.InvalidArgument, "request: training.%s applies to %s, not %s", c.name, strings.Join(hints, " or "), s.Method)
	}
	return nil
}

// loraTargetNames maps accepted target names to the projection they mean.
var loraTargetNames = map[string]string{
	"q": "q", "q_proj": "q", "k": "k", "k_proj": "k", "v": "v", "v_proj": "v",
	"o": "o", "o_proj": "o", "gate": "gate", "gate_proj": "gate", "up": "up", "up_proj": "up",
	"down": "down", "down_proj": "down",
}

func loraTargets(in []string) ([]string, error) {
	if len(in) == 0 {
		return []string{"q", "v"}, nil // PEFT's default target modules for Llama-family models
	}
	set := map[string]bool{}
	for _, t := range in {
		t = strings.ToLower(t)
		switch t {
		case "all-linear", "all", "all_linear":
			for _, p := range []string{"q", "k", "v", "o", "gate", "up", "down"} {
				set[p] = true
			}
			continue
		case "attention":
			for _, p := range []string{"q", "k", "v", "o"} {
				set[p] = true
			}
			continue
		}
		p, ok := loraTargetNames[t]
		if !ok {
			return nil, errs.New(errs.InvalidArgument, "request: training.lora_targets: unknown module %q (q, k, v, o, gate, up, down, all-linear, attention)", t)
		}
		set[p] = true
	}
	out := make([]string, 0, len(set))
	for p := range set {
		out = append(out, p)
	}
	sort.Strings(out)
	return out, nil
}

// TrainingMemory is the memory one device needs, by component.
type TrainingMemory struct {
	WeightsBytes     int64 `json:"weights_bytes"`
	GradientsBytes   int64 `json:"gradients_bytes"`
	OptimizerBytes   int64 `json:"optimizer_bytes"`
	ActivationsBytes int64 `json:"activations_bytes"`
	// FrozenModelsBytes holds the reference, reward and teacher models.
	FrozenModelsBytes int64 `json:"frozen_models_bytes"`
	OverheadBytes     int64 `json:"overhead_bytes"`
	TotalBytes        int64 `json:"total_bytes"`
}

func (t *TrainingMemory) sum() {
	t.TotalBytes = t.WeightsBytes + t.GradientsBytes + t.OptimizerBytes + t.ActivationsBytes + t.FrozenModelsBytes + t.OverheadBytes
}

// TrainingDevice is one device of a training estimate.
type TrainingDevice struct {
	DeviceID             string `json:"device_id"`
	MemoryAvailableBytes int64  `json:"memory_available_bytes"`
}

// TrainingAnswer is the answer of hwaccel_estimate_training.
type TrainingAnswer struct {
	// Fits is whether the setup fits: FitUnknown (null in JSON) when no
	// available device's memory is known, or when the devices of known
	// memory do not hold it and accelerators of unknown memory that run
	// its precision were left out (trainingUnknownMemory).
	Fits      Fit    `json:"fits"`
	Method    string `json:"method"`
	Optimizer string `json:"optimizer"`
	Precision string `json:"precision"`
	// BaseQuant is the frozen base's precision (qlora only).
	BaseQuant             string           `json:"base_quant,omitempty"`
	SeqLen                int              `json:"seq_len"`
	MicroBatch            int              `json:"micro_batch"`
	GradientCheckpointing bool             `json:"gradient_checkpointing"`
	ZeROStage             int              `json:"zero_stage"`
	NumDevices            int              `json:"num_devices"`
	TensorParallel        int              `json:"tensor_parallel"`
	Params                int64            `json:"params"`
	TrainableParams       int64            `json:"trainable_params"`
	PerDevice             TrainingMemory   `json:"per_device"`
	Devices               []TrainingDevice `json:"devices"`
	// MaxMicroBatch is the largest micro-batch that fits on the devices (0
	// when none does or no device is known).
	MaxMicroBatch int `json:"max_micro_batch"`
	// FitsWith is the first of gradient checkpointing, ZeRO stage 3 or
	// both that makes a setup that does not fit, fit (suggestTraining;
	// nil when it fits or none does, and the explanation then names a
	// lighter optimizer or method, lackingMemoryLine).
	FitsWith *TrainingSuggestion `json:"fits_with,omitempty"`
	// Refusal says why the setup does not fit (nil when it fits).
	Refusal     *Refusal `json:"refusal,omitempty"`
	Explanation []string `json:"explanation"`
	Warnings    []string `json:"warnings"`
}

// seqPastTrainedContext is the warning for a training sequence longer than
// the model's trained context (its config's max_position_embeddings or
// equivalent, model.Model.MaxContext). Long-context fine-tuning is done,
// so the estimate stands (memory does not depend on how positions are
// encoded), but a rotary model uses positions past its context only with
// its RoPE scaling extended by seq_len / context, set in the config before
// training (rope_scaling: YaRN, linear, or a larger factor of the scaling
// it has; a "yarn" or "linear" factor multiplies the positions). "" within
// the context, or where the context is unknown.
func seqPastTrainedContext(m *model.Model, seqLen int) string {
	if m == nil || m.MaxContext <= 0 || seqLen <= m.MaxContext {
		return ""
	}
	head := fmt.Sprintf("seq_len %d exceeds the model's trained context (%d positions in its config)", seqLen, m.MaxContext)
	x := float64(seqLen) / float64(m.MaxContext)
	r := m.Rope
	how := "rope_scaling: YaRN, linear, or a larger factor of the scaling it has"
	switch {
	case r.None:
		return head + ": its positions are not rotary (ALiBi or none), so no RoPE scaling extends them and past its context the model extrapolates; the memory estimate stands"
	case r.Factor > 0 && r.Type != "" && r.Type != "default":
		how = fmt.Sprintf("rope_scaling: the config's %s factor %g to %g, or YaRN", r.Type, r.Factor, r.Factor*x)
	}
	return fmt.Sprintf("%s: the model uses positions past it only with its RoPE scaling extended %.3gx (%s), as long-context fine-tuning sets it; the memory estimate does not depend on it", head, x, how)
}

// refuse records why the setup does not fit, in the answer's refusal and as
// its "does not fit:" explanation line.
func (a *TrainingAnswer) refuse(code, text string) *TrainingAnswer {
	a.Fits, a.Refusal = fitOf(false, code), &Refusal{Code: code, Text: text}
	a.Explanation = append(a.Explanation, NotFitLine(text))
	return a
}

// TrainingSuggestion is a training setup that fits where the requested one
// does not: the same request with these options.
type TrainingSuggestion struct {
	GradientCheckpointing bool  `json:"gradient_checkpointing"`
	ZeROStage             int   `json:"zero_stage"`
	PerDeviceBytes        int64 `json:"per_device_bytes"`
}

// EstimateTraining answers hwaccel_estimate_training: memory per device for
// the requested training setup, whether it fits the selected devices, and
// the largest micro-batch that does.
func EstimateTraining(r *Request) (*TrainingAnswer, error) {
	req, opts, s, err := trainingRequest(r)
	if err != nil {
		return nil, err
	}
	devs, why, err := trainingDevices(req, s)
	if err != nil {
		return nil, err
	}
	n := trainingDeviceCount(s, len(devs))
	ans := newTrainingAnswer(req, s, n)
	if why != "" {
		ans.Explanation = append(ans.Explanation, why)
	}
	if len(devs) == 0 {
		return ans.refuse(RefusalNoDevice, noTrainingDevice(s.Precision, why)+leftOutUnavailable(req)+memoryUnknown(req)), nil
	}
	unknown := trainingUnknownMemory(req, s)
	if n > len(devs) {
		return tooFewTrainingDevices(ans, n, len(devs), unknown), nil
	}
	used := devs[:n]
	budget := used[n-1].Usable // devices are sorted by usable memory, largest first
	for _, d := range used {
		ans.Devices = append(ans.Devices, TrainingDevice{DeviceID: d.ID, MemoryAvailableBytes: d.Usable})
	}
	ans.MaxMicroBatch = maxMicroBatch(req.Model, s, n, budget)
	if ans.PerDevice.TotalBytes <= budget {
		ans.fitOn(budget, n, unknown)
	} else {
		ans.refuseForMemory(req, opts, s, used, budget, unknown)
	}
	if ans.MaxMicroBatch > 0 && ans.MaxMicroBatch != s.MicroBatch {
		ans.Explanation = append(ans.Explanation, fmt.Sprintf("the largest micro-batch that fits is %d", ans.MaxMicroBatch))
	}
	return ans, nil
}

// trainingRequest is the planning request of a training estimate, its
// training options as given and as validated; a request member that
// applies to inference plans only (replicas, tensor_parallel_size) is
// refused.
func trainingRequest(r *Request) (*planning, TrainingOptions, *trainingSetup, error) {
	req, err := newPlanning(r)
	if err != nil {
		return nil, TrainingOptions{}, nil, err
	}
	if req.dataParallel() {
		return nil, TrainingOptions{}, nil, errs.New(errs.InvalidArgument, "request: replicas applies to plan_sharding and suggest_quant, not to estimate_training")
	}
	if req.TensorParallel > 0 {
		return nil, TrainingOptions{}, nil, errs.New(errs.InvalidArgument, "request: tensor_parallel_size applies to plan_sharding and suggest_quant; estimate_training takes training.tensor_parallel")
	}
	// Training runs no inference engine: devices are budgeted whole (or at
	// memory_fraction), not at vLLM's or llama.cpp's rule.
	req.training = true
	opts := TrainingOptions{}
	if req.Training != nil {
		opts = *req.Training
	}
	s, err := validateTraining(opts, req)
	if err != nil {
		return nil, TrainingOptions{}, nil, err
	}
	return req, opts, s, nil
}

// trainingDeviceCount is the number of devices trained on: num_devices as
// given, else every device found (at least tensor_parallel), rounded down
// to a multiple of tensor_parallel.
func trainingDeviceCount(s *trainingSetup, found int) int {
	if s.NumDevices != 0 {
		return s.NumDevices
	}
	n := max(found, s.TensorParallel)
	return n - n%s.TensorParallel
}

// newTrainingAnswer is the answer's setup on n devices, fitting or not:
// the options as read, the memory per device, the model's warnings and the
// explanation of the estimate.
func newTrainingAnswer(req *planning, s *trainingSetup, n int) *TrainingAnswer {
	ans := &TrainingAnswer{
		Method: s.Method, Optimizer: s.Optimizer, Precision: s.Precision, BaseQuant: s.baseQuantName,
		SeqLen: s.SeqLen, MicroBatch: s.MicroBatch, GradientCheckpointing: s.checkpointing,
		ZeROStage: s.ZeROStage, NumDevices: n, TensorParallel: s.TensorParallel,
		Params: req.Model.Params, TrainableParams: trainableParams(req.Model, s),
		Explanation: []string{}, Warnings: []string{}, Devices: []TrainingDevice{},
	}
	ans.PerDevice = trainingMemory(req.Model, s, n)
	for _, note := range req.Model.Notes {
		ans.Warnings = append(ans.Warnings, model.TrainingNote(note))
	}
	if w := seqPastTrainedContext(req.Model, s.SeqLen); w != "" {
		ans.Warnings = append(ans.Warnings, w)
	}
	ans.Explanation = append(ans.Explanation, describeTraining(req.Model, s, n, ans.PerDevice)...)
	return ans
}

// fitOn records that the setup fits n devices of budget bytes each, with a
// warning naming the devices of unknown memory left out.
func (a *TrainingAnswer) fitOn(budget int64, n int, unknown []string) {
	a.Fits = FitYes
	a.Explanation = append(a.Explanation, "fits: "+trainingRoom(a.PerDevice.TotalBytes, budget, n, true))
	if len(unknown) > 0 {
		a.Warnings = append(a.Warnings, leftOutWarning("estimated", unknown))
	}
}

// refuseForMemory records that the setup does not fit the used devices of
// budget bytes each (unknown, not no, where devices of unknown memory were
// left out), and what would fit (lackingMemoryLine).
func (a *TrainingAnswer) refuseForMemory(req *planning, opts TrainingOptions, s *trainingSetup, used []*device, budget int64, unknown []string) {
	n := len(used)
	text := trainingRoom(a.PerDevice.TotalBytes, budget, n, false)
	if len(unknown) > 0 {
		// Counted, they might hold it: more devices shard a ZeRO run
		// finer, and one of them may have more memory than the
		// smallest used.
		text += leftOutUnknown(unknown, mightHoldIt)
	}
	a.refuse(RefusalMemory, text)
	if len(unknown) > 0 {
		a.Fits = FitUnknown
	}
	if a.FitsWith = suggestTraining(req.Model, s, n, budget); a.FitsWith != nil {
		a.Explanation = append(a.Explanation, a.FitsWith.describe())
		return
	}
	a.Explanation = append(a.Explanation, lackingMemoryLine(req, opts, s, used, budget))
}

// lackingMemoryLine says, where no setting fits the used devices of budget
// bytes each, what would: on a unified-memory GPU or host RAM, a lighter
// setup; on accelerators, how many such devices, or, past
// maxDevicesSuggested of them, a lighter setup.
func lackingMemoryLine(req *planning, opts TrainingOptions, s *trainingSetup, used []*device, budget int64) string {
	n := len(used)
	if n == 1 && used[0].Dev.MemoryShared {
		// A unified-memory GPU (a Mac, a DGX Spark, a Strix Halo)
		// comes one to a machine: a count of such devices is not
		// something its user can add, so say what needs less.
		return "unified memory: its memory is the host's, so more of it is another machine; " + lighterTraining(req, opts, s, budget, 1)
	}
	if used[0].Dev.Kind == registry.KindCPU {
		// Host RAM is not counted in devices either.
		return "host RAM: " + lighterTraining(req, opts, s, budget, n)
	}
	if k, need := devicesThatWould(req.Model, s, budget); k > 0 {
		// Accelerators: a few more of them is a server to rent or
		// ask for; more host RAM is not counted in devices.
		// What fits the devices at hand is said too: "no setting fits"
		// here had tried only gradient checkpointing and ZeRO, while
		// QLoRA (Llama-3.1-70B on one H200) or a lighter optimizer
		// fitted.
		return fmt.Sprintf("would fit on %d such devices (%s each) %s; on %s %s", k, gib(need), withLacking(s, " (ZeRO-3/FSDP)"), theseDevices(n), lighterTraining(req, opts, s, budget, n))
	}
	// More than maxDevicesSuggested of them (90 laptop GPUs) is not a
	// machine anyone has: say what needs less memory.
	even := "as set"
	if w := withLacking(s, ""); w != even {
		even = "even " + w
	}
	return fmt.Sprintf("%s it needs more than %d devices of this memory; on %s %s", even, maxDevicesSuggested, theseDevices(n), lighterTraining(req, opts, s, budget, n))
}

// suggestTraining tries what practitioners turn on when a setup does not fit, in
// order: gradient checkpointing, then ZeRO stage 3 over the data-parallel
// devices (DeepSpeed ZeRO-3 or FSDP full shard; the Hugging Face
// integration guide, https://huggingface.co/docs/transformers/deepspeed,
// and DeepSpeed's ZeRO tutorial, https://www.deepspeed.ai/tutorials/zero/),
// then both. ZeRO stays opt-in rather than a default: stage 3 trades
// memory for all-gather traffic every step, which the caller should choose.
func suggestTraining(m *model.Model, s *trainingSetup, n int, budget int64) *TrainingSuggestion {
	canShard := n/s.TensorParallel > 1 && s.ZeROStage < 3
	var tries []TrainingSuggestion
	if !s.checkpointing {
		tries = append(tries, TrainingSuggestion{GradientCheckpointing: true, ZeROStage: s.ZeROStage})
	}
	if canShard {
		tries = append(tries, TrainingSuggestion{GradientCheckpointing: s.checkpointing, ZeROStage: 3})
	}
	if canShard && !s.checkpointing {
		tries = append(tries, TrainingSuggestion{GradientCheckpointing: true, ZeROStage: 3})
	}
	for _, try := range tries {
		t := *s
		t.checkpointing, t.ZeROStage = try.GradientCheckpointing, try.ZeROStage
		if total := trainingMemory(m, &t, n).TotalBytes; total <= budget {
			try.PerDeviceBytes = total
			return &try
		}
	}
	return nil
}

// lighterTraining says what makes a run fit the n devices it has (beside
// the count of such devices that would hold it, or where their count
// cannot grow or not within maxDevicesSuggested): the lightest change of,
// in order, gradient checkpointing, an optimizer of less state where the
// whole model is trained (lighterOptimizers), the method (full to LoRA to
// QLoRA; dpo, rlhf and distillation to LoRA adapters, lora_rank),
// micro-batch 1 and a shorter sequence, each figure the estimate of that
// setting; else that only a smaller model would fit.
func lighterTraining(req *planning, o TrainingOptions, s *trainingSetup, budget int64, n int) string {
	var tries []lighter
	for _, c := range lighterOptions(o, s) {
		if t, err := validateTraining(c.opts, req); err == nil {
			c.setup = t
			tries = append(tries, c)
		}
	}
	if len(tries) == 0 {
		return "only a smaller model fits it"
	}
	need := func(t *trainingSetup) int64 { return trainingMemory(req.Model, t, n).TotalBytes }
	for _, c := range tries {
		if b := need(c.setup); b <= budget {
			return fmt.Sprintf("it fits with %s (%s)", c.hints(s, nil), gib(b))
		}
	}
	lightest := *tries[len(tries)-1].setup
	if lightest.MicroBatch > 1 {
		for _, c := range tries {
			t := *c.setup
			t.MicroBatch = 1
			if b := need(&t); b <= budget {
				return fmt.Sprintf("it fits with %s (%s)", c.hints(s, &t), gib(b))
			}
		}
		lightest.MicroBatch = 1
	}
	// The sequence is shortened in steps of 256 tokens, the granularity
	// of a chosen context (docs/requests.md, context_length "auto"); a run
	// shorter than minTrainingSeq is not offered as a fix.
	const step, minTrainingSeq = 256, 512
	fits := func(k int) bool {
		t := lightest
		t.SeqLen = k * step
		return need(&t) <= budget
	}
	last := tries[len(tries)-1]
	if k := quant.Largest((lightest.SeqLen-1)/step, fits); k*step >= minTrainingSeq {
		t := lightest
		t.SeqLen = k * step
		return fmt.Sprintf("it fits with %s (%s)", last.hints(s, &t), gib(need(&t)))
	}
	return fmt.Sprintf("only a smaller model fits it: even %s needs %s", last.hints(s, &lightest), gib(need(&lightest)))
}

// lighter is one lighter training setup lighterTraining tries: the
// request's options changed, and that setup validated.
type lighter struct {
	opts  TrainingOptions
	setup *trainingSetup
}

// lighterOptions is the request's options with gradient checkpointing on,
// then, where the whole model is trained, with each optimizer of less
// state (lighterOptimizers), then with each lighter method: from full,
// LoRA then QLoRA; from lora or prefix, QLoRA; dpo, rlhf and distillation
// train LoRA adapters.
func lighterOptions(o TrainingOptions, s *trainingSetup) []lighter {
	on := true
	with := func(f func(*TrainingOptions)) lighter {
		c := o
		c.GradientCheckpointing = &on
		f(&c)
		return lighter{opts: c}
	}
	out := []lighter{with(func(*TrainingOptions) {})}
	if !s.adapters {
		for _, opt := range lighterOptimizers(s.Optimizer) {
			out = append(out, with(func(c *TrainingOptions) { c.Optimizer = opt }))
		}
	}
	method := func(m string) lighter {
		return with(func(c *TrainingOptions) {
			c.Method, c.LoRARank, c.BaseQuant = m, 0, ""
		})
	}
	switch s.Method {
	case MethodFull:
		out = append(out, method(MethodLoRA), method(MethodQLoRA))
	case MethodLoRA, MethodPrefix:
		out = append(out, method(MethodQLoRA))
	case MethodDPO, MethodRLHF, MethodDistillation:
		if !s.adapters {
			out = append(out, with(func(c *TrainingOptions) { c.LoRARank = defaultLoRARank }))
		}
	}
	return out
}

// lighterOptimizers is the optimizers of less state than o, lightest
// last, that keep the method asked: AdamW's two fp32 moments (8 bytes a
// trained parameter) to 8-bit AdamW's (2 bytes; Dettmers et al. 2022,
// arXiv 2110.02861, bitsandbytes' drop-in for it) to Adafactor's factored
// second moment (Shazeer and Stern 2018, arXiv 1804.04235; next to
// nothing, optimizerBytes). sgd, counted without momentum, keeps what
// Adafactor keeps, so it is not offered beside it. An adapter method is
// offered none: its optimizer state is the adapters', a rounding error.
func lighterOptimizers(o string) []string {
	switch o {
	case OptAdamW:
		return []string{OptAdamW8bit, OptAdafactor}
	case OptAdamW8bit:
		return []string{OptAdafactor}
	}
	return nil
}

// hints names what the lighter setting (as t, when set, else as tried)
// changes from the request's setup s, in the request's words (Hint*).
func (c lighter) hints(s, t *trainingSetup) string {
	if t == nil {
		t = c.setup
	}
	var out []string
	if t.Method != s.Method {
		out = append(out, HintMethod(t.Method))
	}
	if t.Optimizer != s.Optimizer {
		out = append(out, HintOptimizer(t.Optimizer))
	}
	if t.LoRARank != s.LoRARank && t.Method == s.Method {
		out = append(out, HintLoRARank(t.LoRARank))
	}
	if t.checkpointing && !s.checkpointing {
		out = append(out, HintCheckpointing)
	}
	if t.MicroBatch != s.MicroBatch {
		out = append(out, HintMicroBatch(t.MicroBatch))
	}
	if t.SeqLen != s.SeqLen {
		out = append(out, HintSeqLen(t.SeqLen))
	}
	if len(out) == 0 {
		return "these settings"
	}
	if len(out) == 1 {
		return out[0]
	}
	return strings.Join(out[:len(out)-1], ", ") + " and " + out[len(out)-1]
}

// maxDevicesSuggested bounds devicesThatWould's search: a count is worth
// giving only where it is a machine people have or rent. 16 is two 8-GPU
// servers (a DGX H100 has 8 GPUs:
// https://docs.nvidia.com/dgx/dgxh100-user-guide/introduction-to-dgxh100.html),
// one trn1.32xlarge (16 Trainium chips:
// https://aws.amazon.com/ec2/instance-types/trn1/) or a TPU v5e-16 slice
// (https://cloud.google.com/tpu/docs/v5e). A laptop GPU's "90 such
// devices" is past it, and the answer says what needs less memory instead.
const maxDevicesSuggested = 16

// devicesThatWould is the fewest devices of budget bytes each (a multiple
// of the tensor-parallel degree) on which the run fits with gradient
// checkpointing and ZeRO stage 3, and what each then holds; 0 when even
// maxDevicesSuggested do not. The need only falls as devices are added, so the
// first that fits is the fewest.
func devicesThatWould(m *model.Model, s *trainingSetup, budget int64) (int, int64) {
	t := *s
	t.checkpointing, t.ZeROStage = true, 3
	tp := max(t.TensorParallel, 1)
	for k := 2 * tp; k <= maxDevicesSuggested; k += tp {
		if need := trainingMemory(m, &t, k).TotalBytes; need <= budget {
			return k, need
		}
	}
	return 0, 0
}

// withLacking names what devicesThatWould turns on that setup s lacks:
// "with gradient_checkpointing and zero_stage 3" (zero3Note after the
// latter), only one of them when the request set the other (FSDP is ZeRO
// stage 3), "as set" when it set both.
func withLacking(s *trainingSetup, zero3Note string) string {
	var lacking []string
	if !s.checkpointing {
		lacking = append(lacking, HintCheckpointing)
	}
	if s.ZeROStage < 3 {
		lacking = append(lacking, HintZeRO3+zero3Note)
	}
	if len(lacking) == 0 {
		return "as set"
	}
	return "with " + strings.Join(lacking, " and ")
}

// theseDevices names the n devices a run was planned on.
func theseDevices(n int) string {
	if n == 1 {
		return "this one device"
	}
	return fmt.Sprintf("these %d devices", n)
}

// describe is the explanation line of a suggestion.
func (f *TrainingSuggestion) describe() string {
	var opts []string
	if f.GradientCheckpointing {
		opts = append(opts, HintCheckpointing)
	}
	if f.ZeROStage == 3 {
		opts = append(opts, HintZeRO3+" (ZeRO-3/FSDP)")
	}
	return fmt.Sprintf("fits with %s: %s per device", strings.Join(opts, " and "), gib(f.PerDeviceBytes))
}

// noTrainingDevice is the refusal of a training run with no device to
// plan on; where accelerators were skipped for the precision (why: a K80
// runs no bf16), it names the precision and those devices, since their
// memory is known.
func noTrainingDevice(precision, why string) string {
	skipped, found := strings.CutSuffix(why, ": skipped")
	if !found {
		return "no available device with known memory"
	}
	return fmt.Sprintf("no available device with known memory runs %s (%s)", precision, skipped)
}

// tooFewTrainingDevices refuses a run on n devices where known of known
// memory were found, naming the devices of unknown memory left out
// (unknown): fits is null where counted they make up n, as choice.fit
// says of a plan; no where even counted they are too few.
func tooFewTrainingDevices(ans *TrainingAnswer, n, known int, unknown []string) *TrainingAnswer {
	text := fmt.Sprintf("%d devices requested, %d available", n, known)
	could := len(unknown) > 0 && known+len(unknown) >= n
	switch {
	case could:
		text += leftOutUnknown(unknown, mightMakeUpTheNumber)
	case len(unknown) > 0:
		text += leftOutUnknown(unknown, tooFewEvenCounted(known+len(unknown), n))
	}
	ans.refuse(RefusalTooFewDevices, text)
	if could {
		ans.Fits = FitUnknown
	}
	return ans
}

// trainingUnknownMemory names, as choose does for inference
// (unknownMemoryDevices), the available accelerators of their own memory
// that trainingDevices left out because their memory is unknown, of those
// that run the training precision: one that does not (a K80 under bf16)
// would not be trained on whatever its memory.
func trainingUnknownMemory(req *planning, s *trainingSetup) []string {
	return unknownMemoryDevices(req, false, false, func(d *registry.Device) bool { return trains(d, s.Precision) })
}

// trainingDevices selects the devices to train on: the first accelerator
// pool (one kind and vendor, most usable memory first) whose devices run the
// training precision, else the host CPU; sorted by usable memory, largest
// first. why explains a fallback.
func trainingDevices(req *planning, s *trainingSetup) ([]*device, string, error) {
	want, err := req.checkDevices()
	if err != nil {
		return nil, "", err
	}
	if req.Registry == nil && len(req.Cluster) == 0 {
		return nil, "", nil
	}
	pools, _ := requestPools(req, want)
	orderPools(pools)
	native := s.Precision
	var chosen *pool
	why := ""
	for _, p := range pools {
		if p.Kind == registry.KindCPU && chosen == nil {
			continue
		}
		if poolTrains(p, native) {
			chosen = p
			break
		}
		// A pool of GPUs of different generations (an A100 and a P40)
		// trains on those that run the precision: skipping the pool for
		// one that does not planned an A100's run on host RAM.
		if runs, left := splitByPrecision(p, native); len(runs) > 0 {
			chosen = &pool{Kind: p.Kind, Vendor: p.Vendor, Budget: p.Budget, Devices: runs}
			why = fmt.Sprintf("%s not run %s: left out", left, native)
			break
		}
		why = fmt.Sprintf("%s devices do not run %s: skipped", p.label(), native)
	}
	if chosen == nil {
		for _, p := range pools {
			if p.Kind == registry.KindCPU {
				chosen = p
				why = strings.TrimPrefix(why+"; no accelerator runs "+native+": estimating on host RAM", "; ")
			}
		}
	}
	if chosen == nil {
		return nil, why, nil
	}
	devs := append([]*device(nil), chosen.Devices...)
	sort.SliceStable(devs, func(i, j int) bool { return devs[i].Usable > devs[j].Usable })
	return devs, why, nil
}

// trains reports whether training frameworks run precision native on d:
// an Apple GPU's training list (precision.MetalTraining: PyTorch's MPS
// backend runs bf16, which the Metal inference list leaves out), else the
// device's list.
func trains(d *registry.Device, native string) bool {
	if d.Kind == registry.KindMetal {
		return slices.Contains(precision.MetalTraining(), native)
	}
	return supported(d, native)
}

// poolTrains reports whether every device of the pool trains in native.
func poolTrains(p *pool, native string) bool {
	for _, d := range p.Devices {
		if !trains(&d.Dev, native) {
			return false
		}
	}
	return len(p.Devices) > 0
}

// splitByPrecision is the pool's devices that run precision native, and
// the others named for the explanation ("cuda:1 (Tesla P40) does", "cuda:1
// (Tesla P40), cuda:2 (Tesla P40) do").
func splitByPrecision(p *pool, native string) (runs []*device, left string) {
	var others []string
	for _, d := range p.Devices {
		if trains(&d.Dev, native) {
			runs = append(runs, d)
			continue
		}
		others = append(others, fmt.Sprintf("%s (%s)", d.ID, d.Dev.Name))
	}
	verb := "do"
	if len(others) == 1 {
		verb = "does"
	}
	return runs, strings.Join(others, ", ") + " " + verb
}

// maxMicroBatch is the largest micro-batch whose per-device memory fits in
// budget (0 when micro-batch 1 does not).
func maxMicroBatch(m *model.Model, s *trainingSetup, n int, budget int64) int {
	fits := func(b int) bool {
		t := *s
		t.MicroBatch = b
		return trainingMemory(m, &t, n).TotalBytes <= budget
	}
	return quant.Largest(maxTrainingMicroBtch, fits)
}

// Bytes per parameter (docs/accuracy.md, "Training"). Mixed precision
// (Micikevicius et al. 2018; ZeRO paper, Rajbhandari et al. 2020, §3.1):
// 16-bit weights and gradients, fp32 master weights (4 B) and Adam moments
// m and v (4 B each): K = 12 optimizer bytes. fp32 training: 4 B weights,
// 4 B gradients, 8 B Adam moments. 8-bit Adam (Dettmers et al. 2022, arXiv
// 2110.02861) keeps both moments in 1 B each.
func weightBytes(precision string) float64 {
	if precision == "fp32" {
		return 4
	}
	return 2
}

// optimizerBytes is the optimizer state per trained parameter. Adapters
// (LoRA, prefix, QLoRA) are updated in place without a separate fp32
// master copy (adapterBytes).
func optimizerBytes(optimizer, precision string, adapters bool) float64 {
	master := 4.0
	if precision == "fp32" || adapters {
		master = 0
	}
	switch optimizer {
	case OptAdamW8bit:
		return master + 2
	case OptSGD, OptAdafactor:
		// SGD without momentum keeps no state; Adafactor's factored second
		// moment is O(rows + columns) per matrix: negligible.
		return master
	}
	return master + 8
}

// adapterBytes is the storage of one adapter weight (and its gradient):
// PEFT casts adapters to fp32 (LoraConfig autocast_adapter_dtype, default
// true); the QLoRA reference trainer casts them to bf16 (qlora.py,
// get_accelerate_model: LoraLayer modules .to(torch.bfloat16) under --bf16).
func adapterBytes(s *trainingSetup) float64 {
	if s.Method == MethodQLoRA && s.Precision != "fp32" {
		return 2
	}
	return 4
}

// trainableParams is the number of trained parameters of the policy.
func trainableParams(m *model.Model, s *trainingSetup) int64 {
	if !s.adapters {
		return m.Params
	}
	if s.Method == MethodPrefix {
		// Prefix tuning trains a key and a value vector per virtual token
		// per layer (PEFT PrefixTuningConfig without projection).
		return int64(defaultPrefixTokens) * int64(shapeOf(m).Layers) * 2 * int64(shapeOf(m).Hidden)
	}
	return loraParams(shapeOf(m), s.LoRARank, s.targets)
}

// loraParams counts LoRA adapter weights: rank × (in + out) per targeted
// projection per layer (Hu et al. 2021, arXiv 2106.09685 §4.1); MoE expert
// projections are adapted per expert. Each attention projection takes its
// own width: queries and keys a head's query-key width, values and the
// output's input its value width (model.Model.QKHeadDim, ValueHeadDim),
// equal but for multi-head latent attention, whose config states them
// (DeepSeek-V3: 192 and 128, not hidden / heads = 56). Its own projections
// (q_a/q_b, kv_a_proj_with_mqa, kv_b_proj in Hugging Face's DeepSeek code)
// are not told apart: q, k and v are costed as plain projections of those
// widths.
func loraParams(m *model.Model, r int, targets []string) int64 {
	h := float64(m.Hidden)
	qd := float64(m.Heads * m.QKHeadDim())
	od := float64(m.Heads * m.ValueHeadDim())
	kd := float64(m.EffectiveKVHeads() * m.QKHeadDim())
	vd := float64(m.EffectiveKVHeads() * m.ValueHeadDim())
	inter, experts := float64(m.Intermediate), 1.0
	if inter == 0 {
		inter = 4 * h
	}
	if m.IsMoE() {
		experts = float64(m.Experts + m.SharedExperts)
		if m.MoEIntermediate > 0 {
			inter = float64(m.MoEIntermediate)
		}
	}
	dims := map[string]float64{
		"q": h + qd, "k": h + kd, "v": h + vd, "o": od + h,
		"gate": experts * (h + inter), "up": experts * (h + inter), "down": experts * (inter + h),
	}
	var perLayer float64
	for _, t := range targets {
		perLayer += dims[t]
	}
	return int64(float64(r) * perLayer * float64(m.Layers))
}

// shapeOf returns m, with a shape estimated from the parameter count when
// the model has none.
func shapeOf(m *model.Model) *model.Model {
	if m.Layers > 0 && m.Hidden > 0 {
		return m
	}
	c := *m
	model.EstimateShape(&c)
	return &c
}

// trainingMemory is the per-device memory of setup s on n devices.
func trainingMemory(m *model.Model, s *trainingSetup, n int) TrainingMemory {
	tp := float64(s.TensorParallel)
	dp := math.Max(1, float64(max(n, s.TensorParallel))/tp)
	shardW, shardG, shardO := tp, tp, tp
	if s.ZeROStage >= 1 {
		shardO *= dp
	}
	if s.ZeROStage >= 2 {
		shardG *= dp
	}
	if s.ZeROStage >= 3 {
		shardW *= dp
	}
	P := float64(m.Params)
	Pt := float64(trainableParams(m, s))
	wb := weightBytes(s.Precision)
	var t TrainingMemory
	if s.adapters {
		base := P * wb
		ab := adapterBytes(s)
		if s.Method == MethodQLoRA {
			// NF4 base with double quantization: 4.127 bits per parameter
			// (QLoRA, Dettmers et al. 2023, arXiv 2305.14314 §3); embeddings
			// and head stay 16-bit, as quant's int4 level models. Another
			// base_quant is sized by its own rules.
			bq := s.baseQuant
			if bq == "" {
				bq = quant.INT4
			}
			base = float64(quant.WeightsBytes(m, bq))
		}
		t.WeightsBytes = int64((base + Pt*ab) / shardW)
		t.GradientsBytes = int64(Pt * ab / shardG)
	} else {
		t.WeightsBytes = int64(P * wb / shardW)
		t.GradientsBytes = int64(Pt * wb / shardG)
	}
	t.OptimizerBytes = int64(Pt * optimizerBytes(s.Optimizer, s.Precision, s.adapters) / shardO)

	act := activationBytes(m, s)
	switch s.Method {
	case MethodDPO:
		act *= 2 // chosen and rejected sequences
		if !s.adapters {
			// A LoRA policy's reference is the base with adapters disabled.
			t.FrozenModelsBytes += int64(float64(s.reference.Params) * 2 / shardW)
		}
	case MethodRLHF:
		// PPO holds the policy and a trained critic, plus a frozen
		// reference and reward model (InstructGPT, Ouyang et al. 2022).
		t.FrozenModelsBytes += int64(float64(s.reference.Params+s.reward.Params) * 2 / shardW)
		critic := *s
		critic.Method = MethodFull
		if s.adapters {
			critic.Method = MethodLoRA
		}
		c := trainingMemory(s.critic, &critic, n)
		t.WeightsBytes += c.WeightsBytes
		t.GradientsBytes += c.GradientsBytes
		t.OptimizerBytes += c.OptimizerBytes
		act += c.ActivationsBytes
	case MethodDistillation:
		// Frozen teacher forward pass: its weights and its logits.
		t.FrozenModelsBytes += int64(float64(s.teacher.Params) * 2 / tp)
		tm := shapeOf(s.teacher)
		act += int64(float64(s.SeqLen) * float64(s.MicroBatch) * float64(tm.Vocab) * 4 / tp)
	}
	t.ActivationsBytes = act
	t.OverheadBytes = quant.PerDeviceOverheadBytes()
	t.sum()
	return t
}

// activationBytes is the activation memory of one micro-batch on one
// device, after Korthikanti et al. 2022 ("Reducing Activation Recomputation
// in Large Transformer Models", arXiv 2205.05198, §4.1), who count
// s·b·h·(34 + 5·a·s/h) bytes per layer for a GPT layer with 16-bit
// activations. Their terms, re-derived for today's decoder layers
// (docs/accuracy.md, "Training"):
//
//	attention   2sbh (norm output, q/k/v input) + 2sbh (Q) + 4sb·K·d (K, V)
//	            + 2sbh (o-projection input); scores 4·a·s²·b unless flash attention
//	gated FFN   2sbh (input) + 8sb·I (gate, up, activation, product)
//	plain FFN   2sbh + 4sb·I
//	norms       4sbh
//	MoE         the FFN term with I = k × the expert width
//
// No dropout masks (current LLM configs set dropout 0). Tensor parallel t
// divides everything but the norms and the two layer inputs (their
// 10 + 24/t split). Gradient checkpointing keeps each layer's 2sbh input
// and recomputes one layer at a time. The loss adds the logits: 16-bit
// logits plus their fp32 upcast and gradient, 10·s·b·V bytes (vocab-parallel
// under t). fp32 training doubles the activation bytes.
func activationBytes(m *model.Model, s *trainingSetup) int64 {
	sh := shapeOf(m)
	sb := float64(s.SeqLen) * float64(s.MicroBatch)
	h := float64(sh.Hidden)
	kvd := float64(sh.EffectiveKVHeads() * sh.EffectiveHeadDim())
	if sh.KVLoRARank > 0 {
		kvd = float64(sh.KVLoRARank + sh.QKRopeHeadDim)
	}
	inter := float64(sh.Intermediate)
	if inter == 0 {
		inter = 4 * h
	}
	if sh.IsMoE() {
		ie := float64(sh.MoEIntermediate)
		if ie == 0 {
			ie = inter
		}
		inter = ie * float64(max(sh.ExpertsPerToken, 1))
	}
	ffn := 8 * inter
	if sh.Arch().PlainMLP {
		ffn = 4 * inter
	}
	tp := float64(s.TensorParallel)
	replicated := 8 * h // norms 4h + the inputs of the attention and FFN blocks 4h
	split := 4*h + 4*kvd + ffn
	perLayer := sb * (replicated + split/tp)
	flash := s.FlashAttention == nil || *s.FlashAttention
	if !flash {
		perLayer += 4 * float64(sh.Heads) * float64(s.SeqLen) * sb / tp
	}
	scale := 1.0
	if s.Precision == "fp32" {
		scale = 2
	}
	L := float64(sh.Layers)
	var layers float64
	if s.checkpointing {
		layers = L*2*sb*h + perLayer
	} else {
		layers = L * perLayer
	}
	logits := 10 * sb * float64(sh.Vocab) / tp
	return int64(math.Ceil(scale*layers + logits))
}

// describeTraining explains the estimate.
func describeTraining(m *model.Model, s *trainingSetup, n int, t TrainingMemory) []string {
	out := []string{fmt.Sprintf("%s training of %s (%s parameters, %s trained) with %s in %s", s.Method, modelName(m), paramCount(m.Params), paramCount(trainableParams(m, s)), s.Optimizer, precisionText(s.Precision))}
	out = append(out, fmt.Sprintf("per device: weights %s, gradients %s, optimizer %s, activations %s, frozen models %s, runtime %s",
		gib(t.WeightsBytes), gib(t.GradientsBytes), gib(t.OptimizerBytes), gib(t.ActivationsBytes), gib(t.FrozenModelsBytes), gib(t.OverheadBytes)))
	if s.ZeROStage > 0 || s.TensorParallel > 1 {
		out = append(out, fmt.Sprintf("ZeRO stage %d over %d data-parallel devices, tensor parallel %d", s.ZeROStage, max(n/s.TensorParallel, 1), s.TensorParallel))
	}
	if line := describeCompanions(s); line != "" {
		out = append(out, line)
	}
	return out
}

// describeCompanions names the models the method trains beside the
// trained one (resolveCompanions), each with its role, whether it is
// trained or frozen, and, where the request named none for the role, that
// it is the trained model: the default the estimate rests on, which the
// memory parts ("frozen models") do not name. "" for a method with none.
func describeCompanions(s *trainingSetup) string {
	var parts []string
	for _, c := range []struct {
		role        string
		named, used *model.Model
		trained     bool
	}{
		{"teacher", s.Teacher, s.teacher, false},
		{"reference", s.Reference, s.reference, false},
		{"reward", s.Reward, s.reward, false},
		{"critic", s.Critic, s.critic, true},
	} {
		if c.used == nil {
			continue
		}
		part := c.role + " " + modelName(c.used) + ", frozen"
		if c.trained {
			part = c.role + " " + modelName(c.used) + ", trained"
		}
		if c.named == nil {
			part += " (the trained model: no training." + c.role + " named)"
		}
		parts = append(parts, part)
	}
	if len(parts) == 0 {
		return ""
	}
	return "companion models: " + strings.Join(parts, "; ")
}

func precisionText(p string) string {
	if p == "fp32" {
		return "fp32"
	}
	return p + " mixed precision"
}

func modelName(m *model.Model) string {
	if m.Name != "" {
		return m.Name
	}
	return "the model"
}

// trainingRoom compares what each of n devices needs with what the
// smallest has: "17.6 GiB per device, the smallest of 8 devices has
// 7.5 GiB", or on one device "17.6 GiB on its one device, which has
// 7.5 GiB" (it read "the smallest of 1 devices"); fits words it as the
// part of what is available.
func trainingRoom(need, budget int64, n int, fits bool) string {
	switch {
	case n == 1 && fits:
		return fmt.Sprintf("%s of the %s available on its one device", gib(need), gib(budget))
	case n == 1:
		return fmt.Sprintf("%s on its one device, which has %s", gib(need), gib(budget))
	case fits:
		return fmt.Sprintf("%s per device of the %s available on the smallest of %d devices", gib(need), gib(budget), n)
	}
	return fmt.Sprintf("%s per device, the smallest of %d devices has %s", gib(need), n, gib(budget))
}

// paramCount writes a parameter count to three significant digits in its
// own unit ("8.03B", "6.82M"), so a model's size and the part trained read
// alike (a LoRA's 6.8 million read "0.00682B").
func paramCount(n int64) string {
	v := float64(n)
	for _, u := range []struct {
		at   float64
		unit string
	}{{1e12, "T"}, {1e9, "B"}, {1e6, "M"}, {1e3, "K"}} {
		if v >= u.at*0.9995 { // 999.6M rounds to 1B, not "1e+03M"
			return fmt.Sprintf("%.3g%s", v/u.at, u.unit)
		}
	}
	return fmt.Sprintf("%d", n)
}
