package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/ai-hwaccel/ai-hwaccel/internal/cli"
	"github.com/ai-hwaccel/ai-hwaccel/internal/detect"
)

// command is one subcommand.
type command struct {
	name    string
	summary string // one line for the root help
	run     func(a *app, args []string) error
}

// commands lists the subcommands in help order. It is filled in init to
// break the cycle with help (which lists the commands).
var commands []command

func init() {
	commands = []command{
		{"plan", "how to spread a model over the devices: strategy, shards, memory, throughput, engine args", (*app).plan},
		{"suggest", "the best precision (quantization) for a model on the devices", (*app).suggest},
		{"train", "memory needed to fine-tune or train a model (lora, qlora, full, ...)", (*app).train},
		{"fit", "which catalog models run on this machine: precision, context, tokens/s", (*app).fit},
		{"models", "the model catalog: sizes, context, Hugging Face ids, sources", (*app).models},
		{"rent", "which cloud machine to rent for a model, ranked by cost per million output tokens", (*app).rent},
		{"nfd", "Kubernetes Node Feature Discovery labels (features.d file)", (*app).nfd},
		{"snapshot", "capture what detection reads of this machine in one file, for a bug report", (*app).snapshot},
		{"version", "print the version", (*app).versionCmd},
		{"help", "help for a command: ai-hwaccel help plan", (*app).helpCmd},
	}
}

func findCommand(name string) *command {
	for i := range commands {
		if commands[i].name == name {
			return &commands[i]
		}
	}
	return nil
}

// flags wraps a FlagSet with the help text of its command and the flags
// that help does not show.
type flags struct {
	*flag.FlagSet
	cmd    string // "" for the root
	usage  string // usage lines
	about  string // paragraph after the usage lines
	groups []flagGroup
	hidden map[string]bool
}

type flagGroup struct {
	title string
	names []string
}

func newFlags(cmd, usage, about string) *flags {
	name := "ai-hwaccel"
	if cmd != "" {
		name += " " + cmd
	}
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard) // errors are reported by app.exit, help by printHelp
	fs.Usage = func() {}
	return &flags{FlagSet: fs, cmd: cmd, usage: usage, about: about, hidden: map[string]bool{}}
}

func (f *flags) group(title string, names ...string) {
	f.groups = append(f.groups, flagGroup{title, names})
}

// parse parses args; it returns errHelp after printing help for -h/--help,
// and a usage error for an unknown flag, a bad value or a stray argument.
func (f *flags) parse(a *app, args []string) error {
	err := f.Parse(args)
	if errors.Is(err, flag.ErrHelp) {
		f.printHelp(a.stdout)
		return errHelp
	}
	if err != nil {
		return usagef(f.cmd, "%s", f.explain(err))
	}
	if err := f.flagAsValue(); err != nil {
		return err
	}
	if f.NArg() > 0 {
		extra := f.Arg(0)
		if f.cmd == "" {
			if findCommand(extra) != nil {
				return usagef("", "the command %q must come before any flag", extra)
			}
			return usagef("", "unknown command %q%s", extra, didYouMean(extra, commandNames(), ""))
		}
		return usagef(f.cmd, "unexpected argument %q (flags take the form --name value)", extra)
	}
	a.noteRelativePath(f)
	return nil
}

// noteRelativePath says on stderr which entries of the PATH a detection
// will search are not absolute: the engine never searches them (tool
// resolution must not depend on the working directory, NewExecRunner in
// internal/detect/machine/runner_exec.go), so a tool found only there is
// reported as not installed, with no word of why. Nothing is said where
// the PATH is not searched: --path, --snapshot or --no-exec decide, a
// registry replaces the detection (--registry, --cluster), rent runs
// without --here, or --version is all that is asked.
func (a *app) noteRelativePath(f *flags) {
	if f.Lookup("path") == nil || f.cmd == "rent" && !f.isSet("here") {
		return
	}
	for _, name := range []string{"path", "snapshot", "no-exec", "registry", "cluster", "version"} {
		if f.isSet(name) {
			return
		}
	}
	path, _ := a.getenv("PATH")
	var relative []string
	for _, d := range filepath.SplitList(path) {
		if d != "" && !filepath.IsAbs(d) {
			relative = append(relative, d)
		}
	}
	if len(relative) > 0 {
		fmt.Fprintf(a.stderr, "ai-hwaccel: note: PATH entries that are not absolute are not searched for vendor tools: %s; give them with --path, which makes them absolute\n",
			cli.Text(strings.Join(relative, ", ")))
	}
}

// flagAsValue is the usage error of a flag given without its value, which
// then took the next flag as its value ('--model --context 8k' reads
// --model "--context" and leaves "8k" over): a flag taking a value whose
// value is "-name" or "--name" of a flag of the command.
func (f *flags) flagAsValue() error {
	var err error
	f.Visit(func(fl *flag.Flag) {
		if b, ok := fl.Value.(interface{ IsBoolFlag() bool }); err != nil || ok && b.IsBoolFlag() {
			return
		}
		v := fl.Value.String()
		name, _, _ := strings.Cut(strings.TrimLeft(v, "-"), "=")
		if strings.HasPrefix(v, "-") && name != "" && f.Lookup(name) != nil {
			err = usagef(f.cmd, "--%s has no value: it took the flag %q as its value", fl.Name, v)
		}
	})
	return err
}

// errHelp ends a command after its help was printed: exit status 0.
var errHelp = errors.New("help printed")

// isSet reports whether the flag was given on the command line.
func (f *flags) isSet(name string) bool {
	set := false
	f.Visit(func(fl *flag.Flag) {
		if fl.Name == name {
			set = true
		}
	})
	return set
}

func (f *flags) printHelp(w io.Writer) {
	fmt.Fprintf(w, "Usage:\n%s\n", f.usage)
	if f.about != "" {
		fmt.Fprintf(w, "\n%s\n", f.about)
	}
	for _, g := range f.groups {
		fmt.Fprintf(w, "\n%s:\n", g.title)
		for _, name := range g.names {
			fl := f.Lookup(name)
			if fl == nil || f.hidden[name] {
				continue
			}
			arg, text := flag.UnquoteUsage(fl)
			head := "  --" + name
			if arg != "" {
				head += " " + arg
			}
			if fl.DefValue != "" && fl.DefValue != "false" && fl.DefValue != "0" {
				text += fmt.Sprintf(" (default %s)", fl.DefValue)
			}
			if len(head) < 24 {
				fmt.Fprintf(w, "%-24s%s\n", head, text)
			} else {
				fmt.Fprintf(w, "%s\n%24s%s\n", head, "", text)
			}
		}
	}
	fmt.Fprint(w, "\nExit status: 0 success, 1 error (detection failed, engine error), 2 usage error.\n")
}

// detectFlags are the detection options every command takes.
type detectFlags struct {
	sysroot, path, timeout, backends, exclude string
	snapshot                                  string
	noExec, inlineReads                       bool
}

var detectFlagNames = []string{"sysroot", "path", "no-exec", "inline-kernel-reads", "timeout", "backends", "exclude", "snapshot"}

func (d *detectFlags) register(f *flags) {
	f.StringVar(&d.sysroot, "sysroot", "", "read /sys, /proc and /dev under `DIR` (containers, fixture machines)")
	f.StringVar(&d.path, "path", "", "search vendor tools on this `PATH` instead of $PATH (empty: run none)")
	f.BoolVar(&d.noExec, "no-exec", false, "never run a vendor tool; sysfs and procfs only")
	f.BoolVar(&d.inlineReads, "inline-kernel-reads", false, "read the kernel's own files (meminfo, cpuinfo, cgroup limits, PCI attributes) on the calling thread: faster repeated detection (--watch), but those reads are not bounded by --timeout")
	f.StringVar(&d.timeout, "timeout", "", "bound each tool and the whole detection: a `DURATION` (500ms, 2s; a bare number is milliseconds; default 5s)")
	f.StringVar(&d.backends, "backends", "", "run only these detection backends: a comma-separated `LIST` of "+strings.Join(detect.BackendNames(), ","))
	f.StringVar(&d.exclude, "exclude", "", "skip these detection backends: a comma-separated `LIST`")
	f.StringVar(&d.snapshot, "snapshot", "", "detect from the snapshot `FILE` (ai-hwaccel snapshot) instead of this machine; runs no tool")
	f.group("Detection flags", detectFlagNames...)
}

// options returns the detection options object of the wire contract, or
// nil when every option is left at its default.
func (d *detectFlags) options(f *flags) (map[string]any, error) {
	o := map[string]any{}
	if f.isSet("sysroot") {
		if d.sysroot == "" {
			return nil, usagef(f.cmd, "--sysroot needs a directory")
		}
		o["sysroot"] = d.sysroot
	}
	if f.isSet("path") {
		o["path"] = absPathList(d.path)
	}
	if d.noExec {
		o["no_exec"] = true
	}
	if d.inlineReads {
		o["inline_kernel_reads"] = true
	}
	if f.isSet("snapshot") {
		if err := d.snapshotOption(f, o); err != nil {
			return nil, err
		}
	}
	if f.isSet("timeout") {
		ms, err := parseTimeout(d.timeout)
		if err != nil {
			return nil, usagef(f.cmd, "--timeout: %v", err)
		}
		o["timeout_ms"] = ms
	}
	for _, x := range []struct{ flag, key, val string }{{"backends", "backends", d.backends}, {"exclude", "exclude", d.exclude}} {
		if !f.isSet(x.flag) {
			continue
		}
		list, err := backendList(x.val)
		if err != nil {
			return nil, usagef(f.cmd, "--%s: %v", x.flag, err)
		}
		o[x.key] = list
	}
	if len(o) == 0 {
		return nil, nil
	}
	return o, nil
}

// absPathList resolves relative entries of a PATH list against the current
// directory. The library refuses relative entries in its path option (a tool
// must not be found through the working directory of a host process), but on
// a command line a relative directory is what the user typed on purpose.
func absPathList(list string) string {
	parts := filepath.SplitList(list)
	for i, p := range parts {
		if p != "" && !filepath.IsAbs(p) {
			if abs, err := filepath.Abs(p); err == nil {
				parts[i] = abs
			}
		}
	}
	return strings.Join(parts, string(filepath.ListSeparator))
}

// parseTimeout reads --timeout as milliseconds for the engine's timeout_ms;
// a bare number is milliseconds, like timeout_ms.
func parseTimeout(s string) (float64, error) {
	d, err := parseDuration(s, time.Millisecond)
	if err != nil {
		return 0, err
	}
	if d > detect.MaxTimeout {
		return 0, fmt.Errorf("%q is outside (0, %s]", strings.TrimSpace(s), detect.MaxTimeout)
	}
	return float64(d) / float64(time.Millisecond), nil
}

// backendList splits a comma-separated list of backend names and checks
// each against the registered backends.
func backendList(s string) ([]string, error) {
	known := map[string]bool{}
	for _, n := range detect.BackendNames() {
		known[n] = true
	}
	var out []string
	for _, n := range strings.Split(s, ",") {
		n = strings.TrimSpace(n)
		if n == "" {
			return nil, fmt.Errorf("empty backend name in %q", s)
		}
		if !known[n] {
			return nil, fmt.Errorf("unknown backend %q (known: %s)", n, strings.Join(detect.BackendNames(), ", "))
		}
		out = append(out, n)
	}
	return out, nil
}
