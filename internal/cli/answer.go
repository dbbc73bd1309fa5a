package cli

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"
	"text/tabwriter"

	json "github.com/goccy/go-json"

	"github.com/ai-hwaccel/ai-hwaccel/internal/engine"
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
	// "" prints a MODEL placeholder.
	ServeModel string
	// ModelFile is a .gguf file for llama.cpp; "" prints a placeholder.
	ModelFile string
	// Engine is the engine asked for (--engine), "" when none.
	Engine string
	// PlanCommand is the ai-hwaccel command line that plans the suggested
	// precision (suggest's headline), without --quant.
	PlanCommand string
}

// answer is a decoded planning answer with typed accessors; numbers stay
// json.Number so nothing is lost.
type answer map[string]any

func decodeAnswer(b []byte) (answer, error) {
	var m map[string]any
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("answer is not a JSON object: %w", err)
	}
	return m, nil
}

func (a answer) str(k string) string {
	s, _ := a[k].(string)
	return s
}

func (a answer) num(k string) float64 {
	n, ok := a[k].(json.Number)
	if !ok {
		return 0
	}
	f, _ := n.Float64()
	return f
}

func (a answer) flag(k string) bool {
	b, _ := a[k].(bool)
	return b
}

func (a answer) obj(k string) answer {
	m, _ := a[k].(map[string]any)
	return m
}

func (a answer) list(k string) []any {
	l, _ := a[k].([]any)
	return l
}

func (a answer) strings(k string) []string {
	var out []string
	for _, v := range a.list(k) {
		if s, ok := v.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

func (a answer) objects(k string) []answer {
	var out []answer
	for _, v := range a.list(k) {
		if m, ok := v.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}

// layout is the human form of one kind of answer: a headline, then the
// body; keys neither prints follow, then the explanation and warnings.
type layout struct {
	known    []string
	headline func(a answer, name string, info AnswerInfo, seen reasons) string
	body     func(w io.Writer, a answer, name string, info AnswerInfo, seen reasons)
}

func (l layout) write(w io.Writer, b []byte, info AnswerInfo) error {
	a, err := decodeAnswer(b)
	if err != nil {
		return err
	}
	name := modelName(a, info)
	seen := reasons{}
	fmt.Fprintln(w, Text(l.headline(a, name, info, seen)))
	fmt.Fprintln(w)
	l.body(w, a, name, info, seen)
	writeRest(w, a, append(l.known, "explanation", "warnings"))
	writeBullets(w, "Explanation", a.strings("explanation"), seen)
	writeBullets(w, "Warnings", a.strings("warnings"), nil)
	return nil
}

// WritePlan prints a plan_sharding answer: a headline a person can act on,
// then the details in human units.
func WritePlan(w io.Writer, b []byte, info AnswerInfo) error { return planLayout.write(w, b, info) }

// WriteSuggestion prints a suggest_quant answer.
func WriteSuggestion(w io.Writer, b []byte, info AnswerInfo) error {
	return suggestLayout.write(w, b, info)
}

// WriteTraining prints an estimate_training answer.
func WriteTraining(w io.Writer, b []byte, info AnswerInfo) error {
	return trainingLayout.write(w, b, info)
}

var planLayout = layout{
	known: []string{"fits", "strategy", "quant", "model", "memory", "shards", "tp_size", "pp_size",
		"dp_size", "throughput", "engine_args", "load", "engine_env", "max_context_length", "max_batch_size", "levels", "budget", "idle_devices"},
	headline: func(a answer, name string, info AnswerInfo, seen reasons) string {
		if a.flag("fits") {
			return planHeadline(a, name, info)
		}
		return name + " does not fit" + notFitReason(a, seen)
	},
	body: func(w io.Writer, a answer, name string, info AnswerInfo, seen reasons) {
		writeModel(w, a.obj("model"), name)
		if a.flag("fits") {
			writeMemory(w, "Memory", a.str("quant"), a.obj("memory"))
			writeBudget(w, a.obj("budget"))
			writeRoom(w, a)
			if idle := a.strings("idle_devices"); len(idle) > 0 {
				fmt.Fprintf(w, "Idle: %s\n", strings.Join(idle, ", "))
			}
			writeShards(w, a.objects("shards"), info.DeviceNames)
			writeThroughput(w, a.obj("throughput"))
			writeEngineArgs(w, a, info)
		}
		writeLevels(w, a.objects("levels"), seen)
	},
}

var suggestLayout = layout{
	known: []string{"quant", "fits", "devices", "memory", "levels", "budget"},
	headline: func(a answer, name string, info AnswerInfo, seen reasons) string {
		if !a.flag("fits") {
			return name + " does not fit at any precision" + notFitReason(a, seen)
		}
		quant := a.str("quant")
		line := fmt.Sprintf("%s fits %s at %s: %s", name, deviceGroups(a.strings("devices"), info.DeviceNames),
			quant, GiB(int64(a.obj("memory").num("total_bytes"))))
		for _, l := range a.objects("levels") {
			if l.str("quant") == quant && l.str("strategy") != "" {
				line += ", " + strategyWords(l.str("strategy"))
				break
			}
		}
		if info.PlanCommand != "" {
			line += "; plan it: " + info.PlanCommand + " --quant " + quant
		}
		return line
	},
	body: func(w io.Writer, a answer, _ string, _ AnswerInfo, seen reasons) {
		if a.flag("fits") {
			writeMemory(w, "Memory", a.str("quant"), a.obj("memory"))
			writeBudget(w, a.obj("budget"))
		}
		writeLevels(w, a.objects("levels"), seen)
	},
}

var trainingLayout = layout{
	known: []string{"fits", "method", "optimizer", "precision", "seq_len", "micro_batch", "gradient_checkpointing",
		"zero_stage", "num_devices", "tensor_parallel", "params", "trainable_params", "per_device", "devices",
		"max_micro_batch", "fits_with"},
	headline: func(a answer, name string, info AnswerInfo, seen reasons) string {
		setup := fmt.Sprintf("%s %s training", name, a.str("method"))
		if !a.flag("fits") {
			return setup + " does not fit" + notFitReason(a, seen)
		}
		line := fmt.Sprintf("%s fits %s: %s per device", setup, deviceGroups(trainingDevices(a), info.DeviceNames),
			GiB(int64(a.obj("per_device").num("total_bytes"))))
		if mb := a.num("max_micro_batch"); mb > 0 {
			line += fmt.Sprintf(", micro-batch up to %s", count(mb))
		}
		return line
	},
	body: func(w io.Writer, a answer, _ string, info AnswerInfo, _ reasons) {
		fmt.Fprintf(w, "Setup: %s, %s optimizer, %s precision, sequence length %s, micro-batch %s\n", Text(a.str("method")),
			Text(a.str("optimizer")), Text(a.str("precision")), count(a.num("seq_len")), count(a.num("micro_batch")))
		parallel := []string{plural(int(a.num("num_devices")), "device")}
		if tp := a.num("tensor_parallel"); tp > 1 {
			parallel = append(parallel, "tensor parallel "+count(tp))
		}
		if z := a.num("zero_stage"); z > 0 {
			parallel = append(parallel, "ZeRO stage "+count(z))
		}
		if a.flag("gradient_checkpointing") {
			parallel = append(parallel, "gradient checkpointing")
		}
		fmt.Fprintf(w, "Parallelism: %s\n", strings.Join(parallel, ", "))
		fmt.Fprintf(w, "Parameters: %s, %s trained\n", Params(a.num("params")), Params(a.num("trainable_params")))
		writeTrainingMemory(w, a.obj("per_device"))
		writeTrainingDevices(w, a.objects("devices"), info.DeviceNames)
		writeFitsWith(w, a.obj("fits_with"))
	},
}

// writeFitsWith prints the options that make a training setup fit.
func writeFitsWith(w io.Writer, f answer) {
	if f == nil {
		return
	}
	var opts []string
	if f.flag("gradient_checkpointing") {
		opts = append(opts, "--gradient-checkpointing")
	}
	if z := f.num("zero_stage"); z > 0 {
		opts = append(opts, "--zero "+count(z))
	}
	fmt.Fprintf(w, "Fits with: %s, %s per device\n", strings.Join(opts, " "), GiB(int64(f.num("per_device_bytes"))))
}

func trainingDevices(a answer) []string {
	var ids []string
	for _, d := range a.objects("devices") {
		ids = append(ids, d.str("device_id"))
	}
	return ids
}

// modelName is the answer's model name, else what the user typed.
func modelName(a answer, info AnswerInfo) string {
	if n := a.obj("model").str("name"); n != "" {
		return n
	}
	if info.Model != "" {
		return info.Model
	}
	return "the model"
}

// planHeadline is "<model> fits <devices>: <how>, <quant>, KV room about
// <n> tokens, about <r> tokens/s; run: <engine command>".
func planHeadline(a answer, name string, info AnswerInfo) string {
	var ids []string
	seen := map[string]bool{}
	for _, s := range a.objects("shards") {
		if id := s.str("device_id"); id != "" && !seen[id] {
			seen[id] = true
			ids = append(ids, id)
		}
	}
	parts := []string{}
	if how := parallelWords(a); how != "" {
		parts = append(parts, how)
	}
	parts = append(parts, a.str("quant"))
	if kv := a.num("max_context_length"); kv > 0 {
		parts = append(parts, "KV room about "+Tokens(kv)+" tokens")
	}
	if tps := a.obj("throughput").num("decode_tokens_per_s"); tps > 0 {
		parts = append(parts, "about "+rate(tps)+" tokens/s")
	}
	line := fmt.Sprintf("%s fits %s: %s", name, deviceGroups(ids, info.DeviceNames), strings.Join(parts, ", "))
	if cmd := engineCommand(a, info); cmd != "" {
		line += "; run: " + cmd
	}
	return line
}

// parallelWords says how a plan spreads the model: "tensor parallel 2",
// "4 replicas, tensor parallel 2", "CPU offload"; "" for one device.
func parallelWords(a answer) string {
	var out []string
	if dp := a.num("dp_size"); dp > 1 {
		out = append(out, count(dp)+" replicas")
	}
	if tp := a.num("tp_size"); tp > 1 {
		out = append(out, "tensor parallel "+count(tp))
	}
	if pp := a.num("pp_size"); pp > 1 {
		out = append(out, "pipeline parallel "+count(pp))
	}
	if a.str("strategy") == "cpu_offload" {
		out = append(out, "CPU offload")
	}
	return strings.Join(out, ", ")
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

// engineCommand is the command line that runs the plan with one engine.
func engineCommand(a answer, info AnswerInfo) string {
	args := a.obj("engine_args")
	if len(args) == 0 {
		return ""
	}
	// The engine shown when none was asked for: the first registered one
	// the answer has arguments for (a plan carries one engine's).
	order := engine.Names()
	if info.Engine != "" {
		order = []string{info.Engine}
	}
	for _, e := range order {
		if _, ok := args[e]; ok {
			return engineLine(e, args.strings(e), engineFacts(a, e), info)
		}
	}
	return ""
}

// engineFacts is what the answer says an engine loads and needs besides
// its arguments ("load" and "engine_env" of a plan answer).
type facts struct {
	load answer
	env  answer
}

func engineFacts(a answer, engine string) facts {
	return facts{load: a.obj("load").obj(engine), env: a.obj("engine_env").obj(engine)}
}

// engineLine prefixes an engine's arguments with its environment, the
// program and the model, as the engine writes them (engine.Engine.Command:
// `vllm serve MODEL ...`, `llama-server -m FILE ...`, `llama-server -hf
// REPO[:TYPE] ...`). The model is the file or directory the user gave,
// else the checkpoint the answer loads, else a placeholder.
func engineLine(name string, args []string, f facts, info AnswerInfo) string {
	var head []string
	for _, k := range orderedKeys(f.env) {
		head = append(head, k+"="+f.env.str(k))
	}
	var program []string
	if e, ok := engine.Lookup(name); ok {
		program = e.Command(engine.Served{Dir: info.ServeModel, File: info.ModelFile, Load: engine.Load{
			Repo: f.load.str("repo"), File: f.load.str("file"), GGUFType: f.load.str("gguf_type")}})
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

// shellSafe matches words a POSIX shell reads as themselves.
var shellSafe = regexp.MustCompile(`^[A-Za-z0-9_./:=,+@%-]+$`)

// shellWord quotes a word for a POSIX shell when it needs it.
func ShellWord(s string) string {
	if shellSafe.MatchString(s) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// notFitReason is ": <why>" from the answer's "does not fit: ..." line, or
// "" when it gives none; the reason is marked as printed.
func notFitReason(a answer, seen reasons) string {
	ex := a.strings("explanation")
	for i := len(ex) - 1; i >= 0; i-- {
		if r, ok := strings.CutPrefix(ex[i], "does not fit: "); ok {
			seen[reasonKey(r)] = true
			return ": " + Plurals(r)
		}
	}
	for _, l := range a.objects("levels") {
		if r := l.str("reason"); r != "" {
			seen[reasonKey(r)] = true
			return ": " + Plurals(reasonKey(r))
		}
	}
	return ""
}

// reasons remembers the rejection reasons already printed, so each is
// printed once (the engine repeats a level's reason in its explanation).
type reasons map[string]bool

// reasonPrefix is what the engine puts before a reason: "int4 rejected: ",
// "does not fit: ", "doesn't fit: ".
var reasonPrefix = regexp.MustCompile(`^(?:[a-z0-9_]+ rejected: |does not fit: |doesn't fit: )+`)

func reasonKey(s string) string { return reasonPrefix.ReplaceAllString(s, "") }

func writeModel(w io.Writer, m answer, name string) {
	if len(m) == 0 {
		return
	}
	line := "Model: " + name
	if p := m.num("params"); p > 0 {
		line += ", " + Params(p) + " parameters"
		if ap := m.num("active_params"); ap > 0 && ap != p {
			line += " (" + Params(ap) + " active)"
		}
	}
	if l := m.num("layers"); l > 0 {
		line += ", " + plural(int(l), "layer")
	}
	fmt.Fprintln(w, Text(line))
	if s := m.str("source"); s != "" {
		fmt.Fprintf(w, "  source: %s\n", Text(s))
	}
	writeRest(w, m, []string{"name", "params", "active_params", "layers", "source"})
}

// writeMemory prints "Memory (bf16): 135.0 GiB = weights ..., KV cache ...".
func writeMemory(w io.Writer, title, quant string, m answer) {
	if len(m) == 0 {
		return
	}
	if quant != "" {
		title += " (" + quant + ")"
	}
	parts := []string{}
	for _, c := range []struct{ key, label string }{{"weights_bytes", "weights"}, {"kv_cache_bytes", "KV cache"},
		{"activations_bytes", "activations"}, {"overhead_bytes", "runtime overhead"}} {
		if _, ok := m[c.key]; ok {
			parts = append(parts, c.label+" "+GiB(int64(m.num(c.key))))
		}
	}
	fmt.Fprintf(w, "%s: %s = %s\n", title, GiB(int64(m.num("total_bytes"))), strings.Join(parts, " + "))
}

// writeBudget prints the memory budget in one line: the engine, the share
// of each device and what the engine holds itself.
func writeBudget(w io.Writer, b answer) {
	if b == nil || b.str("engine") == "" {
		return
	}
	engine := b.str("engine")
	if b.flag("engine_default") {
		engine += " (default for these devices)"
	}
	parts := []string{engine}
	if f := b.num("memory_fraction"); f > 0 && f < 1 {
		parts = append(parts, fmt.Sprintf("%g of each device's total memory", f))
	}
	if m := b.num("margin_bytes"); m > 0 {
		parts = append(parts, GiB(int64(m))+" kept free per device")
	}
	if r := b.num("engine_reserved_bytes"); r > 0 {
		parts = append(parts, "the engine holds "+GiB(int64(r))+" per device of it")
	}
	fmt.Fprintf(w, "Budget: %s\n", strings.Join(parts, "; "))
}

func writeRoom(w io.Writer, a answer) {
	var parts []string
	if c := a.num("max_context_length"); c > 0 {
		parts = append(parts, "context up to "+count(c)+" tokens")
	}
	if b := a.num("max_batch_size"); b > 0 {
		parts = append(parts, "up to "+plural(int(b), "sequence")+" at once")
	}
	if len(parts) > 0 {
		fmt.Fprintf(w, "Room: %s\n", strings.Join(parts, "; "))
	}
}

func writeShards(w io.Writer, shards []answer, names map[string]string) {
	if len(shards) == 0 {
		return
	}
	replicas := false
	for _, s := range shards {
		if _, ok := s["replica"]; ok {
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
		id := s.str("device_id")
		row := fmt.Sprintf("  %s\t%s\t%s\t%s\t%s", cell(id), cell(names[id]), layerRange(s), count(s.num("stage")), count(s.num("tp_rank")))
		if replicas {
			row += "\t" + count(s.num("replica"))
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", row, GiB(int64(s.num("memory_bytes"))), sizeCell(int64(s.num("memory_available_bytes"))))
	}
	tw.Flush()
}

// layerRange is a shard's layers, first to last inclusive ("0-39"); the
// answer's layer_end is exclusive.
func layerRange(s answer) string {
	start, end := s.num("layer_start"), s.num("layer_end")
	if end <= start {
		return Unknown
	}
	if end-start == 1 {
		return count(start)
	}
	return count(start) + "-" + count(end-1)
}

func writeThroughput(w io.Writer, t answer) {
	if len(t) == 0 {
		return
	}
	var parts []string
	if d := t.num("decode_tokens_per_s"); d > 0 {
		parts = append(parts, "decode "+rate(d)+" tokens/s per sequence")
	}
	if d := t.num("decode_tokens_per_s_total"); d > 0 {
		parts = append(parts, rate(d)+" tokens/s in all")
	}
	if p := t.num("prefill_tokens_per_s"); p > 0 {
		parts = append(parts, "prefill "+rate(p)+" tokens/s")
	}
	line := "Throughput: " + strings.Join(parts, ", ")
	if b := t.str("bound"); b != "" {
		line += " (bound by " + strings.ReplaceAll(b, "_", " ") + ")"
	}
	fmt.Fprintln(w, Text(line))
	for _, s := range t.strings("assumptions") {
		fmt.Fprintf(w, "  - %s\n", Text(Plurals(s)))
	}
	writeRest(w, t, []string{"decode_tokens_per_s", "decode_tokens_per_s_total", "prefill_tokens_per_s", "bound", "assumptions"})
}

func writeEngineArgs(w io.Writer, a answer, info AnswerInfo) {
	args := a.obj("engine_args")
	if len(args) == 0 {
		return
	}
	fmt.Fprintln(w, "Engine commands:")
	for _, e := range orderedKeys(args) {
		fmt.Fprintf(w, "  %s: %s\n", Text(e), Text(engineLine(e, args.strings(e), engineFacts(a, e), info)))
	}
}

// writeLevels prints the per-level table: QUANT and TOTAL first, the
// reason last, each reason once ("same as bf16" after its first row).
func writeLevels(w io.Writer, levels []answer, seen reasons) {
	if len(levels) == 0 {
		return
	}
	fmt.Fprintln(w, "Levels:")
	tw := newTable(w)
	fmt.Fprintln(tw, "  QUANT\tTOTAL\tFITS\tSTRATEGY\tREASON")
	first := map[string]string{}
	for _, l := range levels {
		reason := ""
		if r := l.str("reason"); r != "" {
			k := reasonKey(r)
			if q, ok := first[k]; ok {
				reason = "same as " + q
			} else if seen[k] {
				first[k] = l.str("quant")
				reason = "see above"
			} else {
				first[k] = l.str("quant")
				reason = Plurals(k)
				seen[k] = true
			}
		}
		strategy := Unknown
		if s := l.str("strategy"); s != "" {
			strategy = strategyWords(s)
		}
		fits := "no"
		if l.flag("fits") {
			fits = "yes"
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\n", cell(l.str("quant")), GiB(int64(l.num("total_bytes"))), fits,
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

func writeTrainingMemory(w io.Writer, m answer) {
	if len(m) == 0 {
		return
	}
	parts := []string{}
	for _, c := range []struct{ key, label string }{{"weights_bytes", "weights"}, {"gradients_bytes", "gradients"},
		{"optimizer_bytes", "optimizer"}, {"activations_bytes", "activations"}, {"frozen_models_bytes", "frozen models"},
		{"overhead_bytes", "runtime overhead"}} {
		if v := int64(m.num(c.key)); v > 0 {
			parts = append(parts, c.label+" "+GiB(v))
		}
	}
	fmt.Fprintf(w, "Memory per device: %s = %s\n", GiB(int64(m.num("total_bytes"))), strings.Join(parts, " + "))
}

func writeTrainingDevices(w io.Writer, devs []answer, names map[string]string) {
	if len(devs) == 0 {
		return
	}
	fmt.Fprintln(w, "Devices:")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  DEVICE\tNAME\tAVAILABLE")
	for _, d := range devs {
		id := d.str("device_id")
		fmt.Fprintf(tw, "  %s\t%s\t%s\n", cell(id), cell(names[id]), sizeCell(int64(d.num("memory_available_bytes"))))
	}
	tw.Flush()
}

// writeBullets prints a titled list, dropping items whose reason was
// already printed and repeated items.
func writeBullets(w io.Writer, title string, items []string, seen reasons) {
	var out []string
	printed := map[string]bool{}
	for _, s := range items {
		k := reasonKey(s)
		if printed[s] || (seen != nil && k != s && seen[k]) {
			continue
		}
		printed[s] = true
		if seen != nil && k != s {
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
		fmt.Fprintf(w, "  - %s\n", Text(Plurals(s)))
	}
}

// writeRest prints the keys of m not in known with the generic renderer, so
// a field the engine adds later still shows.
func writeRest(w io.Writer, m answer, known []string) {
	skip := map[string]bool{}
	for _, k := range known {
		skip[k] = true
	}
	for _, k := range orderedKeys(m) {
		if !skip[k] {
			writeField(w, "", k, m[k])
		}
	}
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

func count(n float64) string { return strconv.FormatFloat(math.Round(n), 'f', -1, 64) }

// rate formats tokens per second: one decimal below 100.
func rate(f float64) string { return strconv.FormatFloat(round1(f), 'f', -1, 64) }

// plural is "1 device", "2 devices".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}

// pluralMark is a noun written "device(s)" by the engine, and the number
// before it within a few words.
var pluralMark = regexp.MustCompile(`\b(\d+)((?:\s+\S+){0,3}?\s+)([a-z]+)\(s\)`)

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
