package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"regexp"
	"strings"
	"time"

	json "github.com/goccy/go-json"

	"github.com/ai-hwaccel/ai-hwaccel/internal/cli"
	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

const rootUsage = `  ai-hwaccel [--pretty]              the device registry as JSON (what hwaccel_detect_json returns)
  ai-hwaccel --table                 the devices as a table, why any is unavailable, then interconnects, NUMA nodes, warnings
  ai-hwaccel --summary [--pretty]    counts, accelerator memory, best device, as JSON
  ai-hwaccel --watch N               the table every N seconds (or 500ms, 1m) with free-memory changes and utilisation, power, temperature, until Ctrl-C
  ai-hwaccel <command> [flags]`

func rootAbout() string {
	var b strings.Builder
	b.WriteString("Finds the AI accelerators of this machine (GPUs, TPUs, NPUs, AI ASICs) and plans models on them.\n\nCommands:\n")
	for _, c := range commands {
		fmt.Fprintf(&b, "  %-9s %s\n", c.name, c.summary)
	}
	b.WriteString("\nRun 'ai-hwaccel <command> --help' for a command's flags. Errors go to stderr as\n'ai-hwaccel: <code>: <message>' (code \"usage\" for a wrong command line).")
	return b.String()
}

func rootFlags() (*flags, *rootOptions, *detectFlags) {
	f := newFlags("", rootUsage, rootAbout())
	o := &rootOptions{}
	f.BoolVar(&o.pretty, "pretty", false, "indent the JSON")
	f.BoolVar(&o.table, "table", false, "print a table for humans instead of JSON: devices, an Unavailable: section with each unavailable device and why, interconnects, NUMA nodes, warnings")
	f.BoolVar(&o.summary, "summary", false, "print a short JSON summary (see docs/cli.md)")
	o.watch.bare = time.Second
	f.Var(&o.watch, "watch", "refresh the table every `N` seconds (or a duration: 2s, 500ms, 1m) until interrupted")
	f.IntVar(&o.watchCount, "watch-count", 0, "stop --watch after K refreshes (tests)")
	f.hidden["watch-count"] = true
	f.BoolVar(&o.version, "version", false, "print the version and exit")
	f.group("Flags", "pretty", "table", "summary", "watch", "version")
	d := &detectFlags{}
	d.register(f)
	return f, o, d
}

type rootOptions struct {
	pretty, table, summary, version bool
	watch                           durationFlag
	watchCount                      int
}

// root is the command without a subcommand: detection.
func (a *app) root(args []string) error {
	f, o, d := rootFlags()
	if err := f.parse(a, args); err != nil {
		return ignoreHelp(err)
	}
	if o.version {
		return a.versionCmd(nil)
	}
	modes := 0
	for _, on := range []bool{o.table, o.summary, f.isSet("watch")} {
		if on {
			modes++
		}
	}
	if modes > 1 {
		return usagef("", "--table, --summary and --watch exclude each other")
	}
	if o.pretty && (o.table || f.isSet("watch")) {
		return usagef("", "--pretty applies to JSON output, not to --table or --watch")
	}
	if f.isSet("watch-count") && !f.isSet("watch") {
		return usagef("", "--watch-count needs --watch")
	}
	optsJSON, err := d.optionsJSON(f)
	if err != nil {
		return err
	}
	if f.isSet("watch") {
		// Leaving the flag out runs until Ctrl-C; a count of 0 refreshes
		// is refused, as --watch 0 is, rather than taken for that.
		if f.isSet("watch-count") && o.watchCount < 1 {
			return usagef("", "--watch-count: %d is not a number of refreshes >= 1", o.watchCount)
		}
		return a.watchLoop(optsJSON, o)
	}
	out := a.detectJSON(optsJSON)
	if err := answerError(out); err != nil {
		return err
	}
	switch {
	case o.table:
		reg, err := decodeRegistry(out)
		if err != nil {
			return err
		}
		return cli.WriteTable(a.stdout, reg, nil)
	case o.summary:
		reg, err := decodeRegistry(out)
		if err != nil {
			return err
		}
		b, err := json.Marshal(cli.Summarize(reg))
		if err != nil {
			return err
		}
		return a.writeJSON(b, o.pretty)
	default:
		return a.writeJSON(out, o.pretty)
	}
}

func (a *app) watchLoop(optsJSON []byte, o *rootOptions) error {
	w := cli.Watch{
		Interval: o.watch.d,
		Count:    o.watchCount,
		Sleep:    a.sleep,
		Now:      a.now,
		Clear:    a.terminal,
		Detect: func(context.Context) (*registry.Registry, error) {
			return a.detectRegistry(optsJSON)
		},
	}
	return w.Run(a.ctx, a.stdout)
}

// writeJSON writes an answer as the library returned it (compact) or
// indented, followed by a newline, with <, > and & written as themselves
// rather than the encoder's \u003c, \u003e, \u0026 (the same JSON value).
func (a *app) writeJSON(b []byte, pretty bool) error {
	b = cli.UnescapeHTML(b)
	if pretty {
		var buf bytes.Buffer
		if err := json.Indent(&buf, b, "", "  "); err != nil {
			return err
		}
		b = buf.Bytes()
	}
	_, err := fmt.Fprintf(a.stdout, "%s\n", b)
	return err
}

// optionsJSON is the detection options of the command line as the engine's
// options JSON (nil when no option is given).
func (d *detectFlags) optionsJSON(f *flags) ([]byte, error) {
	opts, err := d.options(f)
	if err != nil || opts == nil {
		return nil, err
	}
	return json.Marshal(opts)
}

// detectRegistry runs a detection and decodes its answer, turning an engine
// error answer into an error.
func (a *app) detectRegistry(optsJSON []byte) (*registry.Registry, error) {
	out := a.detectJSON(optsJSON)
	if err := answerError(out); err != nil {
		return nil, err
	}
	return decodeRegistry(out)
}

// answerError returns the engine error carried by an answer, or nil when the
// answer is not an error object.
func answerError(out []byte) error {
	var e struct {
		Error *struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if !bytes.HasPrefix(bytes.TrimSpace(out), []byte(`{"error"`)) {
		return nil
	}
	if err := json.Unmarshal(out, &e); err != nil || e.Error == nil {
		return nil
	}
	ee := &engineError{code: e.Error.Code, message: flagWords(e.Error.Message)}
	if m := requestField.FindStringSubmatch(e.Error.Message); m != nil {
		ee.field = m[1]
	}
	return ee
}

// requestFlags are the request fields the commands set from a flag of
// their own, by the field's name in the engine's errors ("request:
// training.zero_stage 4 is outside 0..3").
var requestFlags = map[string]string{
	"context_length": "--context", "batch_size": "--batch", "kv_cache_dtype": "--kv-cache",
	"devices": "--devices", "engine": "--engine", "quant": "--quant", "replicas": "--replicas",
	"tensor_parallel_size": "--tensor-parallel-size", "memory_fraction": "--memory-fraction",
	"engine_version": "--engine-version", "placement": "--placement", "draft_model": "--draft-model",
	"training.zero_stage": "--zero", "training.method": "--method", "training.precision": "--precision",
	"training.optimizer": "--optimizer", "training.num_devices": "--num-devices",
	"training.lora_targets": "--lora-targets", "training.base_quant": "--base-quant", "training.fsdp": "--fsdp",
	"training.seq_len": "--seq-len", "training.micro_batch": "--micro-batch", "training.tensor_parallel": "--tensor-parallel",
	"training.lora_rank": "--lora-rank", "training.teacher": "--teacher", "training.reference": "--reference",
	"training.reward": "--reward", "training.critic": "--critic", "rent.providers": "--provider",
}

// requestField is the field an engine error's "request: FIELD ..." names.
var requestField = regexp.MustCompile(`^request: ([a-z_]+(?:\.[a-z_]+)?)`)

// fieldPath is a field named inside an error's text: a member path
// ("training.zero_stage") or a top-level member with an underscore
// ("batch_size"); a bare word ("devices", "engine") is prose there.
var fieldPath = regexp.MustCompile(`\b[a-z]+(?:_[a-z]+)*(?:\.[a-z_]+)?\b`)

// flagWords names, in an engine error about a request field the user set
// with a flag, the flag instead of the field: "--zero 4 is outside 0..3";
// so too the fields named further in ("--fsdp shards like ZeRO stage 3;
// --zero 2 contradicts it") and a fix it names (plan.Hint*: "use 1 or
// --engine vllm", cli.OptionWords). The library's answer keeps the
// field's name.
func flagWords(msg string) string {
	if m := requestField.FindStringSubmatchIndex(msg); m != nil {
		if flag, ok := requestFlags[msg[m[2]:m[3]]]; ok {
			msg = flag + msg[m[3]:]
		}
	}
	msg = fieldPath.ReplaceAllStringFunc(msg, func(w string) string {
		if flag, ok := requestFlags[w]; ok && strings.ContainsAny(w, "._") {
			return flag
		}
		return w
	})
	return cli.OptionWords.Replace(msg)
}

func decodeRegistry(out []byte) (*registry.Registry, error) {
	var reg registry.Registry
	if err := json.Unmarshal(out, &reg); err != nil {
		return nil, fmt.Errorf("cannot read the registry: %w", err)
	}
	return &reg, nil
}

func ignoreHelp(err error) error {
	if err == errHelp {
		return nil
	}
	return err
}

func (a *app) versionCmd(args []string) error {
	f := newFlags("version", "  ai-hwaccel version", "Prints the version of the command and the registry schema version.")
	if err := f.parse(a, args); err != nil {
		return ignoreHelp(err)
	}
	_, err := fmt.Fprintf(a.stdout, "ai-hwaccel %s (registry schema %d)\n", version, registry.SchemaVersion)
	return err
}

func (a *app) helpCmd(args []string) error {
	f := newFlags("help", "  ai-hwaccel help [command]", "Prints the help of the command, or of ai-hwaccel itself.")
	if err := f.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			f.printHelp(a.stdout)
			return nil
		}
		return usagef("help", "%v", err)
	}
	switch f.NArg() {
	case 0:
		rf, _, _ := rootFlags()
		rf.printHelp(a.stdout)
		return nil
	case 1:
		c := findCommand(f.Arg(0))
		if c == nil {
			return usagef("help", "unknown command %q", f.Arg(0))
		}
		return c.run(a, []string{"--help"})
	}
	return usagef("help", "help takes one command name")
}
