package detect

import (
	"context"

	"github.com/ai-hwaccel/ai-hwaccel/internal/detect/machine"
	"github.com/ai-hwaccel/ai-hwaccel/internal/errs"
	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
	"github.com/ai-hwaccel/ai-hwaccel/internal/snapshot"
)

// Capture runs a detection of the live machine of opts with everything it
// reads recorded: every file, listing and link of the sysroot's machine
// trees, every tool run and tool lookup, every environment variable
// consulted. It returns the registry and the recording, which the caller
// writes (Recorder.WriteFile). It never uses the cache: a cached answer
// read nothing.
func Capture(ctx context.Context, opts Options, so snapshot.Options) (*registry.Registry, *snapshot.Recorder, error) {
	if opts.Snapshot != "" {
		return nil, nil, errs.New(errs.InvalidArgument, "a capture reads a live machine: snapshot and a capture exclude each other")
	}
	opts = opts.withDefaults()
	live, err := machine.SysrootSource(opts.Sysroot)
	if err != nil {
		return nil, nil, err
	}
	opts.record = snapshot.NewRecorder(live, so)
	reg, err := Detect(ctx, opts)
	if err != nil {
		return nil, nil, err
	}
	return reg, opts.record, nil
}

// newView builds the machine view of one detection and the runner under
// its per-detection sharing: the live sysroot and PATH, a snapshot replayed
// (opts.Snapshot: files, tools and environment from the archive; no process
// starts), or the live machine recorded (opts.record, set by Capture).
func newView(opts Options) (machine.Config, error) {
	cfg := machine.Config{Sysroot: opts.Sysroot, Runner: opts.Runner, NoExec: opts.NoExec, LookupEnv: opts.lookupEnv,
		NVML: opts.nvmlLibrary(), AMDSMI: opts.amdsmiLibrary()}
	switch {
	case opts.Snapshot != "":
		s, err := snapshot.Open(opts.Snapshot)
		if err != nil {
			return cfg, err
		}
		cfg.FS, cfg.Runner = s, machine.SnapshotRunner(s)
		// The env option still overrides, to ask what the captured machine
		// would answer under other visibility variables.
		cfg.LookupEnv = func(name string) (string, bool) {
			if v, ok := opts.Env[name]; ok {
				return v, true
			}
			return s.LookupEnv(name)
		}
		return cfg, nil
	case opts.record != nil:
		if cfg.Runner == nil {
			cfg.Runner = machine.NewExecRunner(opts.Path, opts.Timeout)
		}
		cfg.Source = opts.record
		cfg.Runner = machine.RecordingRunner(cfg.Runner, opts.record)
		cfg.LookupEnv = machine.RecordingEnv(opts.lookupEnv, opts.record)
		return cfg, nil
	}
	if cfg.Runner == nil {
		cfg.Runner = machine.NewExecRunner(opts.Path, opts.Timeout)
	}
	return cfg, nil
}
