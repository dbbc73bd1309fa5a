// Package detect finds the accelerators of a machine. Every backend reads the
// machine through one injectable view (Machine): a filesystem rooted at the
// sysroot option for /sys, /proc and /dev, and a Runner for vendor tools
// resolved on the path option. Tests point both at fixture machines under
// testdata/machines/.
package detect

import (
	"os"
	"time"

	"github.com/ai-hwaccel/ai-hwaccel/internal/detect/machine"
)

// Defaults for Options fields left zero.
const (
	DefaultTimeout = machine.DefaultRunTimeout
	MaxTimeout     = 10 * time.Minute
)

// Options are the detection options of the wire contract.
type Options struct {
	Sysroot  string            `json:"sysroot"`
	Path     string            `json:"path"`
	Backends []string          `json:"backends"`
	Exclude  []string          `json:"exclude"`
	NoExec   bool              `json:"no_exec"`
	Timeout  time.Duration     `json:"-"`
	CacheTTL time.Duration     `json:"-"`
	Env      map[string]string `json:"env"`

	// LookupEnv reads the process environment at call time: PATH when the
	// path option is empty, and the visibility variables the env option does
	// not set. It tells a variable set to "" (CUDA_VISIBLE_DEVICES="" hides
	// every GPU in the CUDA runtime) from an unset one. The C ABI sets it to a
	// C getenv wrapper that answers false for NULL, because Go's os.LookupEnv
	// only sees the environment the process was started with
	// (../shared/cabi-notes.md §1.9). Nil means os.LookupEnv.
	LookupEnv func(string) (string, bool) `json:"-"`
	// Runner replaces the live command runner (tests, benchmarks).
	Runner machine.Runner `json:"-"`
}

// NewMachine builds the machine view for opts: the sysroot, and the live
// runner on opts.Path (or opts.Runner when given).
func NewMachine(opts Options) (*machine.Machine, error) {
	opts = opts.withDefaults()
	r := opts.Runner
	if r == nil {
		r = machine.NewExecRunner(opts.Path, opts.Timeout)
	}
	return machine.New(machine.Config{Sysroot: opts.Sysroot, Runner: r, NoExec: opts.NoExec, LookupEnv: opts.lookupEnv})
}

// withDefaults returns a copy of o with every zero field given its default.
func (o Options) withDefaults() Options {
	if o.Sysroot == "" {
		o.Sysroot = "/"
	}
	if o.LookupEnv == nil {
		o.LookupEnv = os.LookupEnv
	}
	if o.Path == "" {
		o.Path, _ = o.LookupEnv("PATH")
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.Timeout > MaxTimeout {
		o.Timeout = MaxTimeout
	}
	return o
}

// lookupEnv returns a visibility variable: the env option first, then the
// process environment at call time (LookupEnv; nil reads nothing).
func (o Options) lookupEnv(name string) (string, bool) {
	if v, ok := o.Env[name]; ok {
		return v, true
	}
	if o.LookupEnv == nil {
		return "", false
	}
	return o.LookupEnv(name)
}

// enabled reports whether backend name runs under these options.
func (o Options) enabled(name string) bool {
	for _, x := range o.Exclude {
		if x == name {
			return false
		}
	}
	if len(o.Backends) == 0 {
		return true
	}
	for _, x := range o.Backends {
		if x == name {
			return true
		}
	}
	return false
}
