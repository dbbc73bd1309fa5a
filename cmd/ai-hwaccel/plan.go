package main

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	json "github.com/goccy/go-json"

	"github.com/ai-hwaccel/ai-hwaccel/internal/api"
	"github.com/ai-hwaccel/ai-hwaccel/internal/cli"
	"github.com/ai-hwaccel/ai-hwaccel/internal/errs"
)

// The quantization names and engines of the wire contract; the command
// checks them so a typo is a usage error, not a silent default.
var (
	quantNames  = []string{"auto", "fp32", "fp16", "bf16", "fp8", "int8", "int4"}
	engineNames = []string{"vllm", "llama.cpp", "none"}
)

// planFlags are the flags of plan, suggest and train.
type planFlags struct {
	model, quant, devices, engine string
	replicas                      string
	method, precision, optimizer  string
	context, batch                int
	json, pretty                  bool
}

const modelHelp = "give a size (70b, 7.5B, 7000m), a catalog name (Llama-2-7B) or a model file or directory"

func newPlanFlags(cmd, usage, about string) (*flags, *planFlags, *detectFlags) {
	f := newFlags(cmd, usage, about)
	p := &planFlags{}
	f.StringVar(&p.model, "model", "", "the `MODEL` (required): a size (70b, 7.5B, 7000m), a catalog name (Llama-2-7B) or a model file or directory")
	names := []string{"model"}
	if cmd == "plan" {
		f.StringVar(&p.quant, "quant", "auto", "precision `QUANT`: "+strings.Join(quantNames, ", "))
		names = append(names, "quant")
	}
	if cmd == "train" {
		f.StringVar(&p.method, "method", "", "training `METHOD` (required): full, lora, qlora, prefix, dpo, rlhf, distillation")
		f.StringVar(&p.precision, "precision", "", "training `PRECISION`: bf16 or fp16 (mixed precision), fp32 (default bf16)")
		f.StringVar(&p.optimizer, "optimizer", "", "`OPTIMIZER` whose state is counted: adamw, adamw_8bit, sgd, adafactor (default adamw)")
		names = append(names, "method", "precision", "optimizer")
	}
	f.IntVar(&p.context, "context", 0, "context length in tokens, `N` >= 1 (default 4096)")
	f.IntVar(&p.batch, "batch", 0, "batch size, `N` >= 1 (default 1)")
	f.StringVar(&p.devices, "devices", "", "use only these device `IDS`, comma-separated (cuda:0,cuda:1)")
	names = append(names, "context", "batch", "devices")
	if cmd == "plan" {
		f.StringVar(&p.engine, "engine", "", "write the arguments of inference `ENGINE`: "+strings.Join(engineNames, ", "))
		f.StringVar(&p.replicas, "replicas", "", "data parallel: `N` copies of the model on disjoint identical devices, each serving batch/N sequences; max = as many as fit")
		names = append(names, "engine", "replicas")
	}
	f.BoolVar(&p.json, "json", false, "print the engine's JSON answer instead of text")
	f.BoolVar(&p.pretty, "pretty", false, "indent the JSON (with --json)")
	names = append(names, "json", "pretty")
	f.group("Flags", names...)
	d := &detectFlags{}
	d.register(f)
	return f, p, d
}

func (a *app) plan(args []string) error {
	f, p, d := newPlanFlags("plan",
		"  ai-hwaccel plan --model MODEL [--quant QUANT] [--context N] [--batch N] [--devices IDS] [--engine ENGINE] [--replicas N] [--json]",
		"Plans how to run a model on the detected devices: the strategy (one device, tensor or pipeline\nparallel, CPU offload, data parallel replicas with --replicas), the shard of every device, the memory breakdown, the expected throughput\nand the arguments for the inference engine. A model that does not fit is an answer (fits: no,\nand why), not an error.")
	return a.planning(f, p, d, args, api.PlanSharding)
}

func (a *app) suggest(args []string) error {
	f, p, d := newPlanFlags("suggest",
		"  ai-hwaccel suggest --model MODEL [--context N] [--batch N] [--devices IDS] [--json]",
		"Suggests the best precision for a model on the detected devices, and why.")
	return a.planning(f, p, d, args, api.SuggestQuant)
}

func (a *app) train(args []string) error {
	f, p, d := newPlanFlags("train",
		"  ai-hwaccel train --model MODEL --method METHOD [--precision P] [--optimizer O] [--context N] [--batch N] [--devices IDS] [--json]",
		"Estimates the memory needed to fine-tune or train a model with a method (lora, qlora, full, ...)\non the detected devices: weights, gradients, optimizer state, activations, per device.")
	return a.planning(f, p, d, args, api.EstimateTraining)
}

// planning builds the request of the wire contract from the flags, calls the
// engine entry point and prints its answer.
func (a *app) planning(f *flags, p *planFlags, d *detectFlags, args []string,
	call func([]byte, api.Env) []byte) error {
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
	model, err := parseModel(f.cmd, p.model)
	if err != nil {
		return err
	}
	out, err := a.callWithModel(f.cmd, req, model, p.model, call)
	if err != nil {
		return err
	}
	if p.json {
		return a.writeJSON(out, p.pretty)
	}
	return cli.WriteAnswer(a.stdout, out)
}

// request turns the flags other than the model into request fields.
func (p *planFlags) request(f *flags) (map[string]any, error) {
	req := map[string]any{}
	if p.pretty && !p.json {
		return nil, usagef(f.cmd, "--pretty applies to --json output")
	}
	if f.Lookup("quant") != nil {
		q := strings.ToLower(strings.TrimSpace(p.quant))
		if !contains(quantNames, q) {
			return nil, usagef(f.cmd, "--quant %q: want one of %s", p.quant, strings.Join(quantNames, ", "))
		}
		req["quant"] = q
	}
	if f.Lookup("method") != nil {
		m := strings.TrimSpace(p.method)
		if m == "" {
			return nil, usagef(f.cmd, "--method is required (e.g. lora, qlora, full)")
		}
		training := map[string]any{"method": m}
		for _, x := range []struct{ flag, key, val string }{
			{"precision", "precision", p.precision}, {"optimizer", "optimizer", p.optimizer}} {
			if f.isSet(x.flag) {
				if strings.TrimSpace(x.val) == "" {
					return nil, usagef(f.cmd, "--%s needs a value", x.flag)
				}
				training[x.key] = strings.TrimSpace(x.val)
			}
		}
		req["training"] = training
	}
	for _, x := range []struct {
		name, key string
		v         int
	}{{"context", "context_length", p.context}, {"batch", "batch_size", p.batch}} {
		if !f.isSet(x.name) {
			continue
		}
		if x.v < 1 {
			return nil, usagef(f.cmd, "--%s must be >= 1, got %d", x.name, x.v)
		}
		req[x.key] = x.v
	}
	if f.isSet("devices") {
		ids, err := deviceList(f.cmd, p.devices)
		if err != nil {
			return nil, err
		}
		req["devices"] = ids
	}
	if f.isSet("engine") {
		if !contains(engineNames, p.engine) {
			return nil, usagef(f.cmd, "--engine %q: want one of %s", p.engine, strings.Join(engineNames, ", "))
		}
		req["engine"] = p.engine
	}
	if f.isSet("replicas") {
		v, err := replicasValue(f.cmd, p.replicas)
		if err != nil {
			return nil, err
		}
		req["replicas"] = v
	}
	return req, nil
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
// {"path": ...}.
type modelArg struct {
	key string
	val any
}

// sizePattern is a parameter count with a unit: 70b, 7.5B, 7000m, 1.2t, 500k.
var sizePattern = regexp.MustCompile(`^([0-9]+(?:\.[0-9]+)?)\s*([kKmMbBtT])$`)

var sizeUnit = map[byte]float64{'k': 1e3, 'm': 1e6, 'b': 1e9, 't': 1e12}

// maxParams bounds a size given on the command line (1000 T parameters);
// beyond it the number is a typo, not a model.
const maxParams = 1e15

// parseModel reads --model: a size with a unit is a parameter count; a value
// that names an existing file or directory and looks like a path is a path;
// anything else is a catalog name (callWithModel falls back to a file of that
// name when the catalog does not know it).
func parseModel(cmd, s string) (modelArg, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return modelArg{}, usagef(cmd, "--model is required: "+modelHelp)
	}
	if m := sizePattern.FindStringSubmatch(s); m != nil {
		v, err := strconv.ParseFloat(m[1], 64)
		n := v * sizeUnit[strings.ToLower(m[2])[0]]
		if err != nil || n < 1 || n > maxParams || math.IsInf(n, 0) {
			return modelArg{}, usagef(cmd, "--model %q: parameter count out of range", s)
		}
		return modelArg{"params", int64(math.Round(n))}, nil
	}
	if _, err := strconv.ParseFloat(s, 64); err == nil {
		if !exists(s) {
			return modelArg{}, usagef(cmd, "--model %q: a bare number is ambiguous; give a unit (%sb for billions, %sm for millions)", s, s, s)
		}
	}
	if looksLikePath(s) && exists(s) {
		return pathArg(s), nil
	}
	return modelArg{"name", s}, nil
}

func looksLikePath(s string) bool {
	if strings.ContainsRune(s, os.PathSeparator) || strings.HasPrefix(s, ".") {
		return true
	}
	switch strings.ToLower(filepath.Ext(s)) {
	case ".gguf", ".safetensors", ".json":
		return true
	}
	return false
}

func exists(s string) bool {
	_, err := os.Stat(s)
	return err == nil
}

func pathArg(s string) modelArg {
	if abs, err := filepath.Abs(s); err == nil {
		s = abs
	}
	return modelArg{"path", s}
}

// callWithModel calls the engine. A name the catalog does not know is tried
// as a file when one exists by that name; otherwise it is a usage error
// carrying the engine's message (which suggests close names).
func (a *app) callWithModel(cmd string, req map[string]any, m modelArg, raw string,
	call func([]byte, api.Env) []byte) ([]byte, error) {
	ask := func(m modelArg) ([]byte, error) {
		req["model"] = map[string]any{m.key: m.val}
		body, err := json.Marshal(req)
		if err != nil {
			return nil, err
		}
		out := call(body, a.getenv)
		return out, answerError(out)
	}
	out, err := ask(m)
	var ee *engineError
	if m.key == "name" && errors.As(err, &ee) && ee.code == errs.UnknownModel {
		if exists(raw) {
			return ask(pathArg(raw))
		}
		return nil, usagef(cmd, "--model %q is not a size like 70b, not a model the catalog knows and not an existing file (%s)", raw, ee.message)
	}
	return out, err
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
