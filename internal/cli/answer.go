package cli

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"

	json "github.com/goccy/go-json"

	"github.com/ai-hwaccel/ai-hwaccel/internal/engine"
	"github.com/ai-hwaccel/ai-hwaccel/internal/model"
	"github.com/ai-hwaccel/ai-hwaccel/internal/plan"
)

// AnswerInfo is what the command knows besides an answer, for its human
// form: the answers name devices by id and do not repeat the request.
type AnswerInfo struct {
	// Model is the model as the user named it (--model), used when the
	// answer carries no name.
	Model string
	// DeviceNames maps device ids to product names ("cuda:0" -> "NVIDIA
	// H100 80GB HBM3"), from the registry planned on; may be nil.
	DeviceNames map[string]string
	// ServeModel is what `vllm serve` takes (a Hugging Face id or a path);
	// "" when the user gave none.
	ServeModel string
	// ModelFile is a .gguf file for llama.cpp; "" when the user gave none.
	ModelFile string
	// Engine is the engine asked for (--engine), "" when none.
	Engine string
	// PlanCommand is the ai-hwaccel command line that plans the suggested
	// precision (suggest's headline), without --quant.
	PlanCommand string
	// PlanPlacementOpen says the suggest request named no devices,
	// tensor-parallel size or replicas: suggest planned the fewest devices
	// that hold the model, and plan's default placement may spread wider.
	PlanPlacementOpen bool
}

// decode reads a planning answer into its type (internal/plan): the CLI
// runs the same engine as the library, so the answer has no field the type
// lacks.
func decode[T any](b []byte) (*T, error) {
	var v T
	if err := json.Unmarshal(b, &v); err != nil {
		return nil, fmt.Errorf("answer is not a planning answer: %w", err)
	}
	return &v, nil
}

// WritePlan prints a plan_sharding answer: a headline a person can act on,
// then the details in human units.
func WritePlan(w io.Writer, b []byte, info AnswerInfo) error {
	a, err := decode[plan.ShardingAnswer](b)
	if err != nil {
		return err
	}
	name := modelName(a.Model.Name, info)
	seen := reasons{}
	headline := name + notFitVerdict(a.Fits.Unknown()) + notFitReason(a.Refusal, seen)
	if a.Fits.Yes() {
		headline = planHeadline(a, name, info)
	}
	writeHeadline(w, headline)
	writeModel(w, a.Model, name)
	if a.Fits.Yes() {
		e, args := shownEngine(a, info)
		_, ctx, _ := commandContext(e, args)
		writeMemory(w, "Memory", a.Quant, len(a.Shards), a.Memory, pagedKVNote(a.Memory, a.Budget, ctx, a.MaxBatchSize, a.DPSize > 1))
		writeBudget(w, a.Budget)
		writeRoom(w, a, info)
		if len(a.IdleDevices) > 0 {
			fmt.Fprintf(w, "Idle: %s\n", strings.Join(a.IdleDevices, ", "))
		}
		writeShards(w, a.Shards, info.DeviceNames)
		writeThroughput(w, a.Throughput, a.DPSize)
		writeEngineArgs(w, a, info)
	} else {
		writeRefusedMemory(w, a.Memory, a.Levels, a.Budget)
	}
	writeLevels(w, a.Levels, seen)
	writeExplanation(w, a.Explanation, a.Warnings, restated(a.Refusal, a.Levels), seen)
	return nil
}

// WriteSuggestion prints a suggest_quant answer.
func WriteSuggestion(w io.Writer, b []byte, info AnswerInfo) error {
	a, err := decode[plan.SuggestAnswer](b)
	if err != nil {
		return err
	}
	name := modelName("", info)
	seen := reasons{}
	writeHeadline(w, suggestHeadline(a, name, info, seen))
	if a.Fits.Yes() {
		writeMemory(w, "Memory", a.Quant, len(a.Devices), a.Memory, pagedKVNote(a.Memory, a.Budget, 0, 0, false))
		writeBudget(w, a.Budget)
	} else {
		writeRefusedMemory(w, a.Memory, a.Levels, a.Budget)
	}
	writeLevels(w, a.Levels, seen)
	writeExplanation(w, a.Explanation, a.Warnings, restated(a.Refusal, a.Levels), seen)
	return nil
}

func suggestHeadline(a *plan.SuggestAnswer, name string, info AnswerInfo, seen reasons) string {
	if !a.Fits.Yes() {
		if a.Fits.Unknown() {
			return name + notFitVerdict(true) + notFitReason(a.Refusal, seen)
		}
		return name + " does not fit" + levelsTried(a.Levels) + notFitReason(a.Refusal, seen)
	}
	line := fmt.Sprintf("%s fits %s at %s: %s", name, deviceGroups(a.Devices, info.DeviceNames),
		a.Quant, GiB(a.Memory.TotalBytes))
	for _, l := range a.Levels {
		if l.Quant == a.Quant && l.Strategy != "" {
			line += ", " + strategyWords(l.Strategy)
			break
		}
	}
	if info.PlanCommand != "" {
		line += "; plan it: " + info.PlanCommand
		if info.PlanPlacementOpen && spareIdentical(a.Devices, info.DeviceNames) {
			// suggest planned the fewest devices (docs/requests.md,
			// placement); plan's default would spread over the idle
			// identical ones (vLLM serving layouts, llama.cpp for the
			// trained context) and print another layout than this line's.
			line += " --placement fewest"
		}
		line += " --quant " + a.Quant
	}
	return line
}

// spareIdentical says whether names lists a device of the same kind (id
// prefix: cuda, rocm) and product as the first of ids that ids leave out:
// one plan's default placement may join. An Apple CPU shares its GPU's
// name ("Apple M3 Pro": cpu:0 and metal:0) and is no such device.
func spareIdentical(ids []string, names map[string]string) bool {
	if len(ids) == 0 || names[ids[0]] == "" {
		return false
	}
	kind := func(id string) string { k, _, _ := strings.Cut(id, ":"); return k }
	used := map[string]bool{}
	for _, id := range ids {
		used[id] = true
	}
	for id, n := range names {
		if n == names[ids[0]] && kind(id) == kind(ids[0]) && !used[id] {
			return true
		}
	}
	return false
}

// levelsTried is " at <first> to <last>" of the levels a refusal tried (" at
// <level>" for one), "" for none: "at any precision" said nothing fits
// where a lower level than the request's levels does (a llama.cpp GGUF type
// below int4, which the explanation names).
func levelsTried(levels []plan.LevelRow) string {
	switch len(levels) {
	case 0:
		return ""
	case 1:
		return " at " + levels[0].Quant
	}
	return " at " + levels[0].Quant + " to " + levels[len(levels)-1].Quant
}

// WriteTraining prints an estimate_training answer.
func WriteTraining(w io.Writer, b []byte, info AnswerInfo) error {
	a, err := decode[plan.TrainingAnswer](b)
	if err != nil {
		return err
	}
	name := modelName("", info)
	seen := reasons{}
	setup := fmt.Sprintf("%s %s training", name, a.Method)
	headline := setup + notFitVerdict(a.Fits.Unknown()) + notFitReason(a.Refusal, seen)
	if a.Fits.Yes() {
		headline = fmt.Sprintf("%s fits %s: %s per device", setup, deviceGroups(trainingDevices(a), info.DeviceNames),
			GiB(a.PerDevice.TotalBytes))
		if a.MaxMicroBatch > 0 {
			headline += fmt.Sprintf(", micro-batch up to %d", a.MaxMicroBatch)
		}
	}
	writeHeadline(w, headline)
	fmt.Fprintf(w, "Setup: %s, %s optimizer, %s precision, sequence length %d, micro-batch %d\n", Text(a.Method),
		Text(a.Optimizer), Text(a.Precision), a.SeqLen, a.MicroBatch)
	parallel := []string{plural(a.NumDevices, "device")}
	if a.TensorParallel > 1 {
		parallel = append(parallel, fmt.Sprintf("tensor parallel %d", a.TensorParallel))
	}
	if a.ZeROStage > 0 {
		parallel = append(parallel, fmt.Sprintf("ZeRO stage %d", a.ZeROStage))
	}
	if a.GradientCheckpointing {
		parallel = append(parallel, "gradient checkpointing")
	}
	fmt.Fprintf(w, "Parallelism: %s\n", strings.Join(parallel, ", "))
	fmt.Fprintf(w, "Parameters: %s, %s trained\n", Params(float64(a.Params)), Params(float64(a.TrainableParams)))
	writeTrainingMemory(w, a.PerDevice)
	writeTrainingDevices(w, a.Devices, info.DeviceNames)
	writeFitsWith(w, a.FitsWith)
	if a.BaseQuant != "" {
		fmt.Fprintf(w, "base quant: %s\n", Text(a.BaseQuant))
	}
	writeExplanation(w, a.Explanation, a.Warnings, restated(a.Refusal, nil), seen)
	return nil
}

func writeHeadline(w io.Writer, line string) {
	fmt.Fprintln(w, Text(line))
	fmt.Fprintln(w)
}

// writeExplanation prints the explanation, less the lines that restate a
// reason already printed, and the warnings.
func writeExplanation(w io.Writer, explanation, warnings []string, restated map[string]string, seen reasons) {
	writeBullets(w, "Explanation", explanation, restated, seen)
	writeBullets(w, "Warnings", warnings, nil, nil)
}

// writeFitsWith prints the options that make a training setup fit.
func writeFitsWith(w io.Writer, f *plan.TrainingSuggestion) {
	if f == nil {
		return
	}
	var opts []string
	if f.GradientCheckpointing {
		opts = append(opts, "--gradient-checkpointing")
	}
	if f.ZeROStage > 0 {
		opts = append(opts, fmt.Sprintf("--zero %d", f.ZeROStage))
	}
	fmt.Fprintf(w, "Fits with: %s, %s per device\n", strings.Join(opts, " "), GiB(f.PerDeviceBytes))
}

func trainingDevices(a *plan.TrainingAnswer) []string {
	var ids []string
	for _, d := range a.Devices {
		ids = append(ids, d.DeviceID)
	}
	return ids
}

// modelName is the answer's model name, else what the user typed.
func modelName(answered string, info AnswerInfo) string {
	if answered != "" {
		return answered
	}
	if info.Model != "" {
		return info.Model
	}
	return "the model"
}

// planHeadline is "<model> fits <devices>: <how>, <quant>, <room>, about
// <r> tokens/s; run: <engine command>", the room as roomWords says it.
func planHeadline(a *plan.ShardingAnswer, name string, info AnswerInfo) string {
	var ids []string
	seen := map[string]bool{}
	for _, s := range a.Shards {
		if id := s.DeviceID; id != "" && !seen[id] {
			seen[id] = true
			ids = append(ids, id)
		}
	}
	// Host RAM after the accelerators: vLLM's and SGLang's offload plans
	// list it as their first shard, llama.cpp's as their last.
	sort.SliceStable(ids, func(i, j int) bool { return !isHostID(ids[i]) && isHostID(ids[j]) })
	parts := []string{}
	if how := parallelWords(a); how != "" {
		parts = append(parts, how)
	}
	parts = append(parts, a.Quant)
	if room := roomWords(a, info); room != "" {
		parts = append(parts, room)
	}
	if a.Throughput != nil && a.Throughput.DecodeTokensPerS > 0 && SpeedValidated(a.Throughput.ValidatedOn) {
		parts = append(parts, "about "+speedWords(a))
	}
	line := fmt.Sprintf("%s fits %s: %s", name, deviceGroups(ids, info.DeviceNames), strings.Join(parts, ", "))
	if cmd, withheld := engineCommand(a, info); cmd != "" {
		line += "; " + runWords(a, info) + cmd
	} else if withheld != "" {
		line += "; " + withheld
	}
	return line
}

// speedWords is the headline's decode rate: "<r> tokens/s", or for data
// parallel replicas, whose decode_tokens_per_s is one replica's, "<r>
// tokens/s per replica (<n> x <r> = <total> tokens/s when all <n> replicas
// are busy, <k> requests at once)": decode_tokens_per_s_total is the rate
// of every replica serving its share of sequences, which a batch smaller
// than that does not reach (one request is served at <r>), so the total is
// said with what it takes, not read as the machine's rate for the batch.
func speedWords(a *plan.ShardingAnswer) string {
	tp := a.Throughput
	if a.DPSize > 1 && tp.DecodeTokensPerSTotal > 0 {
		per := replicaRate(a.DPSize, tp.DecodeTokensPerS, tp.DecodeTokensPerSTotal)
		return fmt.Sprintf("%s tokens/s per replica (%d x %s = %s tokens/s when all %d replicas are busy, %d requests at once)",
			per, a.DPSize, per, Rate(tp.DecodeTokensPerSTotal), a.DPSize, busyRequests(a.DPSize, tp))
	}
	return Rate(tp.DecodeTokensPerS) + " tokens/s"
}

// busyRequests is the sequences dp replicas decode at once when each has
// its share (throughput.sequences, one when absent): what
// decode_tokens_per_s_total assumes in flight.
func busyRequests(dp int, tp *plan.Throughput) int {
	return dp * max(tp.Sequences, 1)
}

// replicaRate is one replica's rate per, shown with the digits that make n
// times the figure shown round to the total shown (Rate(total)): each
// rounded on its own, 4 x 160.8 read "4 x 161 = 643". The rate's own
// rounding first, then one to three decimals; the engine rounds both
// figures to three (throughput.go), where n times per is the total.
func replicaRate(n int, per, total float64) string {
	want := Rate(total)
	if s := Rate(per); Rate(float64(n)*mustFloat(s)) == want {
		return s
	}
	for d := 1; d <= 3; d++ {
		if s := strconv.FormatFloat(per, 'f', d, 64); Rate(float64(n)*mustFloat(s)) == want {
			return s
		}
	}
	return strconv.FormatFloat(per, 'f', -1, 64)
}

// mustFloat is the number a figure formatted here reads as.
func mustFloat(s string) float64 {
	f, _ := strconv.ParseFloat(s, 64)
	return f
}

// parallelWords says how a plan spreads the model: "tensor parallel 2",
// "4 replicas, tensor parallel 2", "CPU offload"; "" for one device.
func parallelWords(a *plan.ShardingAnswer) string {
	var out []string
	if a.DPSize > 1 {
		out = append(out, fmt.Sprintf("%d replicas", a.DPSize))
	}
	if a.TPSize > 1 {
		out = append(out, fmt.Sprintf("tensor parallel %d", a.TPSize))
	}
	pp := a.PPSize
	if a.Strategy == plan.StrategyOffload {
		pp = acceleratorStages(a.Shards)
	}
	if pp > 1 {
		out = append(out, fmt.Sprintf("pipeline parallel %d", pp))
	}
	if a.Strategy == plan.StrategyOffload {
		out = append(out, "CPU offload")
	}
	return strings.Join(out, ", ")
}

// acceleratorStages counts the pipeline stages of shards held by
// accelerators: an offload plan's host RAM is a stage of the answer
// (pp_size counts it) but no pipeline parallelism a user sets up.
func acceleratorStages(shards []plan.Shard) int {
	stages := map[int]bool{}
	for _, s := range shards {
		if !isHostID(s.DeviceID) {
			stages[s.Stage] = true
		}
	}
	return len(stages)
}

// isHostID reports whether a shard's device id is the host's memory
// ("cpu:0", a cluster's "node1/cpu:0").
func isHostID(id string) bool {
	if i := strings.LastIndexByte(id, '/'); i >= 0 {
		id = id[i+1:]
	}
	return strings.HasPrefix(id, "cpu:")
}

// strategyWords is a strategy name in words.
func strategyWords(s string) string {
	switch s {
	case "none":
		return "one device"
	case "cpu_offload":
		return "CPU offload"
	}
	return strings.ReplaceAll(s, "_", " ")
}

// deviceGroups names devices by product, counting repeats: "2x NVIDIA H100
// 80GB HBM3 (cuda:0-1)"; a device without a known name is its id.
func deviceGroups(ids []string, names map[string]string) string {
	if len(ids) == 0 {
		return "no device"
	}
	type group struct {
		name string
		ids  []string
	}
	var groups []*group
	byName := map[string]*group{}
	for _, id := range ids {
		n := names[id]
		if n == "" {
			n = id
		}
		g, ok := byName[n]
		if !ok {
			g = &group{name: n}
			byName[n] = g
			groups = append(groups, g)
		}
		g.ids = append(g.ids, id)
	}
	parts := make([]string, len(groups))
	for i, g := range groups {
		switch {
		case g.name == g.ids[0] && len(g.ids) == 1:
			parts[i] = g.name
		case len(g.ids) == 1:
			parts[i] = fmt.Sprintf("%s (%s)", g.name, g.ids[0])
		default:
			parts[i] = fmt.Sprintf("%dx %s (%s)", len(g.ids), g.name, CompactIDs(g.ids))
		}
	}
	return strings.Join(parts, " + ")
}

// engineCommand is the command line that runs the plan with one engine;
// when that engine's command is withheld, "" and withheldLine.
func engineCommand(a *plan.ShardingAnswer, info AnswerInfo) (cmd, withheld string) {
	if len(a.EngineArgs) == 0 {
		return "", ""
	}
	if e, args := shownEngine(a, info); e != "" {
		f := engineFacts(a, e)
		if line := engineLine(e, args, f, info); line != "" {
			return line, ""
		}
		return "", withheldLine(f)
	}
	return "", ""
}

// runWords introduces the headline's command: "run: ", or, for replicas of
// an engine with no data-parallel mode (engine.Parallelism's
// ProcessPerReplica), that the command is one of a process per replica:
// run as printed it serves one replica's devices.
func runWords(a *plan.ShardingAnswer, info AnswerInfo) string {
	if a.DPSize > 1 {
		if name, _ := shownEngine(a, info); name != "" {
			if e, ok := engine.Lookup(name); ok && e.Parallelism().ProcessPerReplica {
				return fmt.Sprintf("run one process per replica (%d, each seeing only its replica's devices; the explanation lists them), replica 0's: ", a.DPSize)
			}
		}
	}
	return "run: "
}

// shownEngine is the engine whose command a plan's headline prints, with
// its arguments: the one asked for, else the first registered one the
// answer has arguments for (a plan carries one engine's); "" when none.
func shownEngine(a *plan.ShardingAnswer, info AnswerInfo) (string, []string) {
	order := engine.Names()
	if info.Engine != "" {
		order = []string{info.Engine}
	}
	for _, e := range order {
		if args, ok := a.EngineArgs[e]; ok {
			return e, args
		}
	}
	return "", nil
}

// commandContext is the context engine e's command args run, as the
// engine names its flags (engine.CommandContextNamer): the flag and its
// value, and the sequences that share it (1 where the context is each
// request's). 0 where the engine names no flag or the command has none.
func commandContext(e string, args []string) (flag string, ctx, seqs int) {
	en, _ := engine.Lookup(e)
	n, ok := en.(engine.CommandContextNamer)
	if !ok {
		return "", 0, 1
	}
	flag = n.ContextSetting()
	ctx, _ = strconv.Atoi(flagValue(args, flag))
	seqs = 1
	if s := n.SequencesSetting(); s != "" {
		if v, _ := strconv.Atoi(flagValue(args, s)); v > 1 {
			seqs = v
		}
	}
	return flag, ctx, seqs
}

// roomWords is the headline's statement of the tokens the printed command
// holds, so that no figure contradicts it (issue 27):
//   - an engine that sizes a paged KV pool (engine_expect: vLLM, SGLang):
//     "KV room about <pool> tokens (<n> sequences of <context>)", the pool
//     it will allocate and how many requests of its context fit at once;
//   - otherwise the context the command runs, "context <c>" (llama.cpp:
//     "shared by <n> sequences" when -np splits it), and when the same
//     devices hold a longer one (max_context_length), "up to <n> fits"
//     (for a plan that keeps part of the model in host RAM, with the same
//     placement: plan.printedSplitHolds);
//   - with no command, the plan's own "context up to <n> tokens".
func roomWords(a *plan.ShardingAnswer, info AnswerInfo) string {
	e, args := shownEngine(a, info)
	_, ctx, seqs := commandContext(e, args)
	if x, ok := a.EngineExpect[e]; ok && x.KVCacheTokens > 0 {
		room := "KV room about " + Tokens(float64(x.KVCacheTokens)) + " tokens"
		n := int(x.MaxConcurrency)
		switch {
		case a.DPSize > 1 && n >= 1 && ctx > 0 && a.MaxBatchSize == n*a.DPSize:
			// engine_expect is one replica's engine; the Room line
			// (max_batch_size) counts every replica's sequences.
			room += Plurals(fmt.Sprintf(" per replica (%d sequence(s) of %d each, %d in all)", n, ctx, a.MaxBatchSize))
		case a.DPSize > 1 && n >= 1 && ctx > 0:
			room += Plurals(fmt.Sprintf(" per replica (%d sequence(s) of %d)", n, ctx))
		case a.DPSize > 1:
			room += " per replica"
		case n > 1 && ctx > 0:
			room += fmt.Sprintf(" (%d sequences of %d)", n, ctx)
		}
		return room
	}
	longest := a.MaxContextLength
	if ctx <= 0 {
		if longest <= 0 {
			return ""
		}
		return "context up to " + TokensAtMost(float64(longest)) + " tokens"
	}
	room := fmt.Sprintf("context %d", ctx)
	perSequence, each := ctx, ""
	if seqs > 1 {
		room += fmt.Sprintf(" shared by %d sequences", seqs)
		perSequence, each = ctx/seqs, " each"
	}
	// A chosen context is the longest that fits rounded down to --fit's
	// step (internal/plan/fitcontext.go): less than a step more is no
	// longer context.
	if longest-longest%engine.LlamaFitContextStep <= perSequence {
		return room
	}
	return room + " (up to " + TokensAtMost(float64(longest)) + each + " fits)"
}

// flagValue is the argument after flag in args, "" when absent.
func flagValue(args []string, flag string) string {
	for i := 0; i+1 < len(args); i++ {
		if args[i] == flag {
			return args[i+1]
		}
	}
	return ""
}

// engineFacts is what the answer says an engine loads and needs besides
// its arguments ("load" and "engine_env" of a plan answer).
type facts struct {
	load plan.Load
	env  map[string]string
}

func engineFacts(a *plan.ShardingAnswer, engine string) facts {
	return facts{load: a.Load[engine], env: a.EngineEnv[engine]}
}

// withheldLine is what stands instead of an engine's command when the plan
// needs a checkpoint that is not published (load.needs without a repo):
// serving the weights the user gave would run their level, not the plan's;
// or when nothing names weights the engine loads (a model given by its
// size or config, with no published checkpoint for the engine), where a
// placeholder such as MODEL would be a command that does not run.
func withheldLine(f facts) string {
	switch {
	case f.load.Needs != "":
	case f.load.GGUFType != "":
		// The float types are converted from the Hugging Face checkpoint,
		// the others quantized from a 16-bit GGUF (tools/quantize/README.md
		// of ggml-org/llama.cpp).
		maker := "llama-quantize writes one from a 16-bit GGUF"
		switch f.load.GGUFType {
		case "F32", "F16", "BF16":
			maker = "convert_hf_to_gguf.py writes one from the Hugging Face checkpoint"
		}
		return fmt.Sprintf("no command: no published %s GGUF of this model is known; give its file (--model FILE.gguf; %s) to get the command", f.load.GGUFType, maker)
	default:
		return "no command: no published checkpoint of this model is known; name one (--model with a Hugging Face id or a folder) to get the command"
	}
	return "no command: needs " + f.load.Needs
}

// engineLine prefixes an engine's arguments with its environment, the
// program and the model, as the engine writes them (engine.Engine.Command:
// `vllm serve MODEL ...`, `llama-server -m FILE ...`, `llama-server -hf
// REPO[:TYPE] ...`). The model is the file or directory the user gave,
// else the checkpoint the answer loads; with neither the line is "" and
// withheldLine stands instead.
func engineLine(name string, args []string, f facts, info AnswerInfo) string {
	var head []string
	for _, k := range sortedKeys(f.env) {
		head = append(head, k+"="+f.env[k])
	}
	var program []string
	if e, ok := engine.Lookup(name); ok {
		program = e.Command(engine.Served{Dir: info.ServeModel, File: info.ModelFile, Load: engine.Load{
			Repo: f.load.Repo, File: f.load.File, GGUFType: f.load.GGUFType, Needs: f.load.Needs}})
		if program == nil && (f.load.Needs != "" || servesModels(e)) {
			return "" // no published checkpoint runs the plan, or none is named (withheldLine)
		}
	}
	if len(program) == 0 {
		program = []string{name}
	}
	head = append(head, program...)
	all := append(head, args...)
	for i, s := range all {
		all[i] = ShellWord(s)
	}
	return strings.Join(all, " ")
}

// servesModels reports whether e's command names the model it serves (vLLM,
// SGLang, llama.cpp), so that no command from it means nothing to serve,
// not an engine without a program of its own (engine.Base).
func servesModels(e engine.Engine) bool {
	return e.Command(engine.Served{Dir: "m", File: "m.gguf"}) != nil
}

// shellSafe matches words a POSIX shell reads as themselves.
var shellSafe = regexp.MustCompile(`^[A-Za-z0-9_./:=,+@%-]+$`)

// ShellWord quotes a word for a POSIX shell when it needs it.
func ShellWord(s string) string {
	if shellSafe.MatchString(s) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// notFitReason is ": <why>" from the answer's refusal, or "" when it has
// none; the reason is marked as printed.
// notFitVerdict is the headline's verdict on an answer that does not fit:
// "does not fit", or, when no device's memory is known (fits null), that
// the planner cannot tell.
func notFitVerdict(unknown bool) string {
	if unknown {
		return ": cannot tell whether it fits"
	}
	return " does not fit"
}

func notFitReason(r *plan.Refusal, seen reasons) string {
	if r == nil || r.Text == "" {
		return ""
	}
	seen[r.Text] = true
	return ": " + Plurals(r.Text)
}

// reasons remembers the rejection reasons already printed, so each is
// printed once (the engine repeats a level's reason in its explanation).
type reasons map[string]bool

// levelReason is the reason of a level row as the levels table prints it:
// a row that does not fit its one pool says the pool's reason, which is the
// refusal's text when that level was the one refused.
func levelReason(l plan.LevelRow) string {
	return strings.TrimPrefix(l.Reason, plan.LevelMisfitPrefix)
}

// restated maps the explanation lines that restate a reason (the refusal's
// "does not fit:" line, each level's "rejected:" line) to that reason.
func restated(r *plan.Refusal, levels []plan.LevelRow) map[string]string {
	out := map[string]string{}
	for _, l := range levels {
		if l.Reason != "" {
			out[plan.RejectedLine(l.Quant, l.Reason)] = levelReason(l)
		}
	}
	if r != nil {
		out[plan.NotFitLine(r.Text)] = r.Text
	}
	return out
}

func writeModel(w io.Writer, m plan.ModelSummary, name string) {
	line := "Model: " + name
	if p := float64(m.Params); p > 0 {
		line += ", " + Params(p) + " parameters"
		if ap := float64(m.ActiveParams); ap > 0 && ap != p {
			line += " (" + Params(ap) + " active)"
		}
	}
	if m.Layers > 0 {
		line += ", " + plural(m.Layers, "layer")
	}
	fmt.Fprintln(w, Text(line))
	if m.Source != "" {
		fmt.Fprintf(w, "  source: %s\n", Text(m.Source))
	}
}

// writeMemory prints "Memory (bf16, 2 devices): 135.0 GiB = weights ...,
// KV cache ...": the plan's total, summed over the devices it uses, which
// the title counts so that it is not read as the levels table's figure for
// one device (issue 24). kvNote, when not "", follows the KV cache's
// figure (pagedKVNote).
func writeMemory(w io.Writer, title, quant string, devices int, m plan.Memory, kvNote string) {
	var what []string
	if quant != "" {
		what = append(what, quant)
	}
	if devices > 1 {
		what = append(what, fmt.Sprintf("%d devices", devices))
	}
	if len(what) > 0 {
		title += " (" + strings.Join(what, ", ") + ")"
	}
	kv := "KV cache " + GiB(m.KVCacheBytes)
	if kvNote != "" {
		kv += " (" + kvNote + ")"
	}
	parts := []string{"weights " + GiB(m.WeightsBytes), kv,
		"activations " + GiB(m.ActivationsBytes), "runtime overhead " + GiB(m.OverheadBytes)}
	fmt.Fprintf(w, "%s: %s = %s\n", title, GiB(m.TotalBytes), strings.Join(parts, " + "))
}

// writeRefusedMemory prints, for an answer nothing fits, what its memory
// states (schema/plan.schema.json, memory.total_bytes): the need of the
// level tried last as on one device, the figure its refusal states, in its
// parts, as "Memory needed (int4, as on one device): 207.2 GiB = ...", and
// the budget it was judged against. It is not a plan's memory (there is no
// plan), hence not the Memory line's title. An answer that cannot tell
// (fits null) because GPUs of unknown memory were left out of a refusal for
// memory states the same need, and gets the same lines; nothing where the
// answer states no need (no device's memory known).
func writeRefusedMemory(w io.Writer, m plan.Memory, levels []plan.LevelRow, b *plan.Budget) {
	if m.TotalBytes <= 0 {
		return
	}
	title := "Memory needed (as on one device)"
	if q := refusedLevel(m, levels); q != "" {
		title = "Memory needed (" + q + ", as on one device)"
	}
	writeMemory(w, title, "", 0, m, "")
	writeBudget(w, b)
}

// refusedLevel is the precision whose need a refused answer's memory
// states: the lowest level row that fits nowhere and states the same
// total (the answer names no quant: there is no plan), "" where none does.
func refusedLevel(m plan.Memory, levels []plan.LevelRow) string {
	for i := len(levels) - 1; i >= 0; i-- {
		if l := levels[i]; !l.Fits.Yes() && l.TotalBytes == m.TotalBytes {
			return l.Quant
		}
	}
	return ""
}

// pagedKVNote says what the KV cache figure of a plan on a paged KV pool
// (vLLM, SGLang) counts, so that it is not read as the engine's whole
// allocation: the engine sizes its pool at start-up from what its budget
// leaves, whatever the batch (docs/inference-servers.md), while the
// memory counts the batch's sequences (memory.kv_cache_sequences):
// "8 sequences of 32768; vLLM's pool takes the rest of its budget: up to
// 27", or, where the pool holds fewer than the batch, "27 sequences of
// 32768, all vLLM's pool holds at once". ctx (the command's context) and
// maxBatch (max_batch_size) are left out where 0 (suggest's answer has
// neither). With replicas (data parallel) each has its pool: "vLLM's
// pools ... their budgets". "" where the memory carries no such count.
func pagedKVNote(m plan.Memory, b *plan.Budget, ctx, maxBatch int, replicas bool) string {
	if m.KVCacheSequences <= 0 || b == nil {
		return ""
	}
	title := b.Engine
	if e, ok := engine.Lookup(b.Engine); ok {
		title = e.Title()
	}
	seqs := plural(m.KVCacheSequences, "sequence")
	if ctx > 0 {
		seqs += fmt.Sprintf(" of %d", ctx)
	}
	pool, holds, takes := title+"'s pool", "holds", "takes the rest of its budget"
	if replicas {
		pool, holds, takes = title+"'s pools", "hold", "take the rest of their budgets"
	}
	switch {
	case maxBatch > 0 && m.KVCacheSequences >= maxBatch:
		return seqs + ", all " + pool + " " + holds + " at once"
	case maxBatch > 0:
		return fmt.Sprintf("%s; %s %s: up to %d", seqs, pool, takes, maxBatch)
	}
	return seqs + "; " + pool + " " + takes
}

// writeBudget prints the memory budget in one line: the engine, the share
// of each device and what the engine holds itself.
func writeBudget(w io.Writer, b *plan.Budget) {
	if b == nil || b.Engine == "" {
		return
	}
	who := b.Engine
	switch {
	case b.EngineChosenFor != "" && len(b.EngineChosenOn) > 0:
		// A pool whose devices default to different engines (an H200
		// beside a P40): only some defaults were overridden.
		who += " (chosen for " + b.EngineChosenFor + " over the default of " + strings.Join(b.EngineChosenOn, ", ") + "; the other devices' default)"
	case b.EngineChosenFor != "":
		who += " (chosen for " + b.EngineChosenFor + " over these devices' default)"
	case b.EngineDefault:
		who += " (default for these devices)"
	}
	parts := []string{who}
	// An engine that keeps its workspace outside its fraction (SGLang's
	// --mem-fraction-static) takes the fraction of the memory free once its
	// CUDA context exists, for the weights and its KV pool only; what the
	// engine holds itself sits beside it (engine.Memory.WorkspaceOutside).
	share, reserved := "%g of each device's total memory", "the engine holds %s per device of it"
	if en, ok := engine.Lookup(b.Engine); ok && en.Memory(0).WorkspaceOutside {
		share, reserved = "%g of each device's memory free once its CUDA context exists, for the weights and its KV pool", "the engine holds %s per device beside it"
	}
	if f := b.MemoryFraction; f > 0 && f < 1 {
		parts = append(parts, fmt.Sprintf(share, f))
	}
	if m := b.MarginBytes; m > 0 {
		parts = append(parts, GiB(m)+" kept free per device")
	}
	if r := b.EngineReservedBytes; r > 0 {
		parts = append(parts, fmt.Sprintf(reserved, GiB(r)))
	}
	fmt.Fprintf(w, "Budget: %s\n", strings.Join(parts, "; "))
}

// writeRoom prints the plan's maxima: the longest context and the largest
// batch on the same devices (max_context_length, max_batch_size), the
// context exact, with what the printed command runs where that is the
// maximum rounded down (commandContextNote).
func writeRoom(w io.Writer, a *plan.ShardingAnswer, info AnswerInfo) {
	var parts []string
	if c := a.MaxContextLength; c > 0 {
		parts = append(parts, fmt.Sprintf("context up to %d tokens", c)+commandContextNote(a, info))
	}
	if b := a.MaxBatchSize; b > 0 {
		parts = append(parts, "up to "+plural(b, "sequence")+" at once")
	}
	if len(parts) == 0 {
		return
	}
	// An offloaded plan's maxima keep its placement (plan.printedSplitHolds),
	// as every other plan's do.
	fmt.Fprintf(w, "Room: %s\n", strings.Join(parts, "; "))
}

// commandContextNote says, when the printed command's context per
// sequence is the plan's maximum rounded down to a multiple of
// engine.LlamaFitContextStep (a chosen context: internal/plan/fitcontext.go),
// that it is, so that the Room line's exact figure and the command's do not
// read as two answers: " (the command's -c 57600 is that rounded down to a
// multiple of 256, as llama.cpp's --fit rounds)". "" otherwise.
func commandContextNote(a *plan.ShardingAnswer, info AnswerInfo) string {
	e, args := shownEngine(a, info)
	flag, ctx, n := commandContext(e, args)
	longest := a.MaxContextLength
	if ctx <= 0 || longest <= 0 {
		return ""
	}
	perSequence := ctx / n
	const step = engine.LlamaFitContextStep
	if longest == perSequence || longest-longest%step != perSequence {
		return ""
	}
	what := fmt.Sprintf("the command's %s %d is that", flag, ctx)
	if n > 1 {
		what = fmt.Sprintf("the command's %s %d gives each of its %d sequences %d: that", flag, ctx, n, perSequence)
	}
	why := ""
	if en, _ := engine.Lookup(e); en != nil {
		if f, ok := en.(engine.FitNamer); ok {
			why = ", as " + f.FitRounding() + " rounds"
		}
	}
	return fmt.Sprintf(" (%s rounded down to a multiple of %d%s)", what, step, why)
}

func writeShards(w io.Writer, shards []plan.Shard, names map[string]string) {
	if len(shards) == 0 {
		return
	}
	replicas := false
	for _, s := range shards {
		if s.Replica != nil {
			replicas = true
		}
	}
	fmt.Fprintln(w, "Shards:")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	head := "  DEVICE\tNAME\tLAYERS\tSTAGE\tTP RANK"
	if replicas {
		head += "\tREPLICA"
	}
	fmt.Fprintln(tw, head+"\tMEMORY\tAVAILABLE")
	for _, s := range shards {
		id := s.DeviceID
		row := fmt.Sprintf("  %s\t%s\t%s\t%d\t%d", cell(id), cell(names[id]), layerRange(s), s.Stage, s.TPRank)
		if replicas {
			replica := 0
			if s.Replica != nil {
				replica = *s.Replica
			}
			row += fmt.Sprintf("\t%d", replica)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", row, GiB(s.MemoryBytes), sizeCell(s.MemoryAvailableBytes))
	}
	tw.Flush()
}

// layerRange is a shard's layers, first to last inclusive ("0-39"); the
// answer's layer_end is exclusive.
func layerRange(s plan.Shard) string {
	start, end := s.LayerStart, s.LayerEnd
	if end <= start {
		return Unknown
	}
	if end-start == 1 {
		return strconv.Itoa(start)
	}
	return strconv.Itoa(start) + "-" + strconv.Itoa(end-1)
}

// SpeedValidated reports whether a throughput's validated_on names a
// measured set (not empty, not "not validated: ..."): a headline or a
// summary table shows a speed only then.
func SpeedValidated(validatedOn string) bool {
	return validatedOn != "" && !strings.HasPrefix(validatedOn, plan.NotValidated)
}

// writeThroughput prints the Throughput line of an answer of dp replicas
// (1: none): a data-parallel plan's decode and prefill rates are one
// replica's, and its decode_tokens_per_s_total the rate when every replica
// is busy (busyRequests), as the line says.
func writeThroughput(w io.Writer, t *plan.Throughput, dp int) {
	if t == nil {
		return
	}
	each := ""
	if dp > 1 {
		each = " on each replica"
	}
	var parts []string
	switch d, n := t.DecodeTokensPerS, t.Sequences; {
	case d > 0 && n > 1:
		// The rate of n sequences decoding together, not of each.
		parts = append(parts, fmt.Sprintf("decode %s tokens/s over %d sequences (%s per sequence)", Rate(d), n, Rate(d/float64(n))))
	case d > 0:
		parts = append(parts, "decode "+Rate(d)+" tokens/s per sequence")
	}
	// bound is what limits decode (schema/plan.schema.json): said beside
	// the decode rate, so that it is not read as the prompt's limit.
	if b := t.Bound; b != "" && len(parts) > 0 {
		parts[0] += " (bound by " + strings.ReplaceAll(b, "_", " ") + ")"
	}
	if len(parts) > 0 {
		parts[0] += each
	}
	if d := t.DecodeTokensPerSTotal; d > 0 && dp > 1 {
		parts = append(parts, fmt.Sprintf("%s tokens/s in all when all %d replicas are busy (%d sequences at once)", Rate(d), dp, busyRequests(dp, t)))
	} else if d > 0 {
		parts = append(parts, Rate(d)+" tokens/s in all")
	}
	// A prefill rate is shown only with what vouches for it
	// (prefill_validated_on, issue 22): one without is not printed.
	prefill := t.PrefillTokensPerS > 0 && t.PrefillValidatedOn != ""
	if prefill {
		parts = append(parts, "prefill "+Rate(t.PrefillTokensPerS)+" tokens/s"+each)
	}
	line := "Throughput: " + strings.Join(parts, ", ")
	if len(parts) == 0 {
		line = "Throughput: not estimated"
	}
	fmt.Fprintln(w, Text(line))
	if t.ValidatedOn != "" {
		fmt.Fprintf(w, "  Validated on: %s\n", Text(t.ValidatedOn))
	}
	if prefill {
		fmt.Fprintf(w, "  Prefill validated on: %s\n", Text(t.PrefillValidatedOn))
	}
	for _, s := range t.Assumptions {
		// How a rate the answer omits would have been computed is not
		// printed: under an empty or partial heading it read as if the
		// rate were there (issue 24 item 5); its "omitted:" line says why.
		if (t.DecodeTokensPerS <= 0 && strings.HasPrefix(s, "decode ") && !strings.HasPrefix(s, "decode omitted")) ||
			(!prefill && strings.HasPrefix(s, "prefill ") && !strings.HasPrefix(s, "prefill omitted")) {
			continue
		}
		fmt.Fprintf(w, "  - %s\n", Text(Plurals(OptionWords.Replace(s))))
	}
}

func writeEngineArgs(w io.Writer, a *plan.ShardingAnswer, info AnswerInfo) {
	if len(a.EngineArgs) == 0 {
		return
	}
	fmt.Fprintln(w, "Engine commands:")
	for _, e := range sortedKeys(a.EngineArgs) {
		f := engineFacts(a, e)
		line := engineLine(e, a.EngineArgs[e], f, info)
		if line == "" {
			line = withheldLine(f)
		}
		fmt.Fprintf(w, "  %s: %s\n", Text(e), Text(line))
	}
}

// writeLevels prints the per-level table: QUANT and ON ONE DEVICE first,
// the reason last, each reason once ("same as bf16" after its first row).
// ON ONE DEVICE is the row's total_bytes, the level's need counting one
// device's runtime overhead and activations (one replica's for data
// parallel): it is not the plan's total, which the Memory line sums over
// every device the plan uses, so it is not headed TOTAL (issue 24). A
// row whose strategy is cpu_offload (the level an offload plan was made
// at, and every other level that fits offloaded: plan.markOffloaded) reads
// "offload" and CPU offload rather than "no": it fits, with part of the
// model in host RAM. Where the row cannot tell whether the level fits
// (fits null: no available device's memory is known), FITS reads
// "unknown", as the headline and fit --all say, not "no".
func writeLevels(w io.Writer, levels []plan.LevelRow, seen reasons) {
	if len(levels) == 0 {
		return
	}
	fmt.Fprintln(w, "Levels:")
	tw := newTable(w)
	fmt.Fprintln(tw, "  QUANT\tON ONE DEVICE\tFITS\tSTRATEGY\tREASON")
	first := map[string]string{}
	for _, l := range levels {
		reason := ""
		if l.Reason != "" {
			k := levelReason(l)
			if q, ok := first[k]; ok {
				reason = "same as " + q
			} else if seen[k] {
				first[k] = l.Quant
				reason = "see above"
			} else {
				first[k] = l.Quant
				reason = Plurals(k)
				seen[k] = true
			}
		}
		strategy := Unknown
		if l.Strategy != "" {
			strategy = strategyWords(l.Strategy)
		}
		fits := "no"
		switch {
		case l.Fits.Yes():
			fits = "yes"
		case l.Strategy == plan.StrategyOffload:
			// Fits with cpu_offload, not on the accelerators alone
			// (its reason says why): every such level, not only the
			// one chosen, as the explanation's lines count them.
			fits = "offload"
		case l.Fits.Unknown():
			fits = "unknown"
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\n", cell(l.Quant), GiB(l.TotalBytes), fits,
			strategy, Text(reason))
	}
	tw.Flush()
}

// table is a tabwriter whose lines lose the padding after their last
// non-empty cell (an empty last column would leave trailing spaces).
type table struct {
	*tabwriter.Writer
	buf *bytes.Buffer
	out io.Writer
}

func newTable(w io.Writer) *table {
	buf := &bytes.Buffer{}
	return &table{Writer: tabwriter.NewWriter(buf, 0, 0, 2, ' ', 0), buf: buf, out: w}
}

func (t *table) Flush() error {
	if err := t.Writer.Flush(); err != nil {
		return err
	}
	for _, line := range strings.SplitAfter(t.buf.String(), "\n") {
		if line == "" {
			continue
		}
		if _, err := io.WriteString(t.out, strings.TrimRight(line, " \n")+"\n"); err != nil {
			return err
		}
	}
	t.buf.Reset()
	return nil
}

func writeTrainingMemory(w io.Writer, m plan.TrainingMemory) {
	parts := []string{}
	for _, c := range []struct {
		v     int64
		label string
	}{{m.WeightsBytes, "weights"}, {m.GradientsBytes, "gradients"}, {m.OptimizerBytes, "optimizer"},
		{m.ActivationsBytes, "activations"}, {m.FrozenModelsBytes, "frozen models"}, {m.OverheadBytes, "runtime overhead"}} {
		if c.v > 0 {
			parts = append(parts, c.label+" "+GiB(c.v))
		}
	}
	fmt.Fprintf(w, "Memory per device: %s = %s\n", GiB(m.TotalBytes), strings.Join(parts, " + "))
}

func writeTrainingDevices(w io.Writer, devs []plan.TrainingDevice, names map[string]string) {
	if len(devs) == 0 {
		return
	}
	fmt.Fprintln(w, "Devices:")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  DEVICE\tNAME\tAVAILABLE")
	for _, d := range devs {
		id := d.DeviceID
		fmt.Fprintf(tw, "  %s\t%s\t%s\n", cell(id), cell(names[id]), sizeCell(d.MemoryAvailableBytes))
	}
	tw.Flush()
}

// writeBullets prints a titled list, dropping repeated items and the items
// that restate (restated) a reason already printed (seen).
func writeBullets(w io.Writer, title string, items []string, restated map[string]string, seen reasons) {
	var out []string
	printed := map[string]bool{}
	for _, s := range items {
		k, restates := restated[s]
		if printed[s] || (restates && seen[k]) {
			continue
		}
		printed[s] = true
		if restates {
			seen[k] = true
		}
		out = append(out, s)
	}
	if len(out) == 0 {
		fmt.Fprintf(w, "%s: none\n", title)
		return
	}
	fmt.Fprintf(w, "%s:\n", title)
	for _, s := range out {
		fmt.Fprintf(w, "  - %s\n", Text(Plurals(OptionWords.Replace(s))))
	}
}

// sortedKeys is the keys of m in order.
func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Params formats a parameter count: "70.6B", "8.3M", "1.2T".
func Params(n float64) string {
	for _, u := range []struct {
		v float64
		s string
	}{{1e12, "T"}, {1e9, "B"}, {1e6, "M"}, {1e3, "K"}} {
		if math.Abs(n) >= u.v*0.9995 { // 999.96M prints as 1B, not 1000M
			return strconv.FormatFloat(round1(n/u.v), 'f', -1, 64) + u.s
		}
	}
	return strconv.FormatFloat(n, 'f', -1, 64)
}

// Tokens formats a token count the way --context reads it: "79k" is 79 x
// 1024 tokens (context windows are powers of two: "128k" is 131072).
func Tokens(n float64) string {
	if n >= 1024 {
		return strconv.FormatFloat(math.Round(n/1024), 'f', -1, 64) + "k"
	}
	return count(n)
}

// TokensAtMost formats a maximum token count as Tokens does, rounded down
// rather than to the nearest k: read back as --context, "6k" of 6667
// tokens fits where "7k" (7168) would not.
func TokensAtMost(n float64) string {
	if n >= 1024 {
		return strconv.FormatFloat(math.Floor(n/1024), 'f', -1, 64) + "k"
	}
	return count(n)
}

func count(n float64) string { return strconv.FormatFloat(math.Round(n), 'f', -1, 64) }

// Rate formats tokens per second: one decimal below 100, none above.
func Rate(f float64) string { return strconv.FormatFloat(round1(f), 'f', -1, 64) }

// plural is "1 device", "2 devices".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}

// pluralMark is a noun written "device(s)" by the engine, and the number
// before it within a few words, none of them a number ("8672 bytes, 1
// device(s)" counts 1 device).
var pluralMark = regexp.MustCompile(`\b(\d+)((?:\s+[^\s\d]\S*){0,3}?\s+)([a-z]+)\(s\)`)

// Plurals resolves the engine's "N noun(s)": "1 cuda_gpu (nvidia)
// device(s)" reads "1 cuda_gpu (nvidia) device", "4096 token(s)" reads
// "4096 tokens". A "(s)" with no number before it is left alone.
func Plurals(s string) string {
	if !strings.Contains(s, "(s)") {
		return s
	}
	return pluralMark.ReplaceAllStringFunc(s, func(m string) string {
		g := pluralMark.FindStringSubmatch(m)
		noun := g[3]
		if g[1] != "1" {
			noun += "s"
		}
		return g[1] + g[2] + noun
	})
}

// OptionWords rewrites the request options an answer's hints name
// (plan.Hint*) into the flags a CLI user types: "cpu_offload: true would
// keep ..." reads "--cpu-offload would keep ..." here, while the library's
// answer, read by programs that set the request's fields, keeps the wire
// spelling. A level (plan.HintQuant) is any of the quant names, so it is
// matched by its phrase's form rather than listed.
var OptionWords = optionWords{fixed: func() *strings.Replacer {
	pairs := []string{
		plan.HintCPUOffload, "--cpu-offload",
		plan.HintIncludeCPU, "--include-cpu",
		plan.HintPlacementFewest, "--placement fewest",
		plan.HintCheckpointing, "--gradient-checkpointing",
		plan.HintZeRO3, "--zero 3",
		model.HintGiveModel, GiveModel,
	}
	for _, e := range engine.Names() {
		pairs = append(pairs, plan.HintEngine(e), "--engine "+e)
	}
	return strings.NewReplacer(pairs...)
}()}

// GiveModel is model.HintGiveModel in the CLI's words: what a model flag
// takes.
const GiveModel = "give a size (70b), a catalog name (ai-hwaccel models) or a model file instead"

// optionWords is OptionWords: the fixed phrases, then the levels.
type optionWords struct{ fixed *strings.Replacer }

// quantHint matches plan.HintQuant's phrase; its group is the level.
var quantHint = regexp.MustCompile(regexp.QuoteMeta(strings.TrimSuffix(plan.HintQuant(""), `""`)) + `"([a-z0-9_]+)"`)

// trainingHint matches the training hints with a value (plan.HintMethod,
// HintOptimizer, HintLoRARank, HintMicroBatch, HintSeqLen); its groups are the field and
// the value.
var trainingHint = regexp.MustCompile(`"(method|optimizer|lora_rank|micro_batch|seq_len)": "?([a-z0-9_]+)"?`)

// trainingFlags is the flag of each field trainingHint matches.
var trainingFlags = map[string]string{
	"method": "--method", "optimizer": "--optimizer", "lora_rank": "--lora-rank", "micro_batch": "--micro-batch", "seq_len": "--seq-len",
}

// Replace returns s with every hint phrase spelled as the CLI's flag.
func (o optionWords) Replace(s string) string {
	s = quantHint.ReplaceAllString(o.fixed.Replace(s), "--quant $1")
	return trainingHint.ReplaceAllStringFunc(s, func(m string) string {
		g := trainingHint.FindStringSubmatch(m)
		return trainingFlags[g[1]] + " " + g[2]
	})
}
