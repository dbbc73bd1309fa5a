package main

import (
	"context"
	"fmt"
	"io"
	"sync"
	"time"

	json "github.com/goccy/go-json"

	"github.com/ai-hwaccel/ai-hwaccel/internal/api"
	"github.com/ai-hwaccel/ai-hwaccel/internal/cli"
	"github.com/ai-hwaccel/ai-hwaccel/internal/detect"
	"github.com/ai-hwaccel/ai-hwaccel/internal/detect/machine"
	"github.com/ai-hwaccel/ai-hwaccel/internal/errs"
	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// progressDelay is how long a vendor tool may run before the command says,
// on a terminal, what it is waiting for: about the point where a person
// starts to wonder whether the command hangs.
const progressDelay = 500 * time.Millisecond

// toolWatcher is a detection Runner (the seam detect.Options.Runner offers)
// that runs tools with the live runner and reports on w each tool still
// running after delay, once per tool.
type toolWatcher struct {
	*machine.ExecRunner // Run is wrapped; Has and Resolve pass through
	w                   io.Writer
	delay               time.Duration
	mu                  sync.Mutex
	said                map[string]bool
}

func (t *toolWatcher) Run(ctx context.Context, tool string, args ...string) machine.Result {
	timer := time.AfterFunc(t.delay, func() { t.say(tool) })
	defer timer.Stop()
	return t.ExecRunner.Run(ctx, tool, args...)
}

func (t *toolWatcher) say(tool string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.said[tool] {
		return
	}
	t.said[tool] = true
	fmt.Fprintf(t.w, "ai-hwaccel: waiting for %s (a vendor tool; --timeout bounds it, --no-exec skips tools)\n", cli.Text(tool))
}

// watchedOptions decodes detection options as the engine does and, when the
// command reports progress (stderr is a terminal), puts a toolWatcher in
// front of the live runner. ok is false when there is nothing to watch (no
// progress wanted, tools disabled) and the plain engine call should be used.
func (a *app) watchedOptions(optsJSON []byte) (opts detect.Options, ok bool, err error) {
	if a.progress == nil {
		return opts, false, nil
	}
	opts, err = api.DecodeOptions(optsJSON, a.getenv)
	if err != nil || opts.NoExec {
		return opts, false, err
	}
	// The live runner with the engine's defaults (detect.Options.withDefaults):
	// the caller's PATH and a 5 s timeout unless the options say otherwise.
	path, timeout := opts.Path, opts.Timeout
	if path == "" {
		path, _ = a.getenv("PATH")
	}
	if timeout <= 0 {
		timeout = detect.DefaultTimeout
	}
	opts.Runner = &toolWatcher{ExecRunner: machine.NewExecRunner(path, timeout), w: a.progress,
		delay: a.progressDelay, said: map[string]bool{}}
	return opts, true, nil
}

// detectJSON is api.Detect, with progress reports when wanted: the same
// shared cache and the same encoding, so the answer is the same bytes.
func (a *app) detectJSON(optsJSON []byte) []byte {
	a.send("detect", optsJSON)
	opts, ok, err := a.watchedOptions(optsJSON)
	if err != nil || !ok {
		return api.Detect(a.ctx, optsJSON, a.getenv) // errors are answered by the engine
	}
	b, err := detect.Shared.DetectJSON(a.ctx, opts, func(r *registry.Registry) ([]byte, error) {
		return json.Marshal(r)
	})
	if err != nil {
		return api.ErrorJSON(errs.Wrap(errs.DetectionFailed, err, "detect"))
	}
	return b
}

// warmPlanning runs the detection a planning request will make, with
// progress reports, before the engine call: planning reuses a detection up
// to 30 s old (include/ai_hwaccel.h), so the engine then finds it cached.
func (a *app) warmPlanning(req map[string]any, opts map[string]any) {
	if a.progress == nil || req["registry"] != nil || req["cluster"] != nil {
		return
	}
	var b []byte
	if opts != nil {
		b, _ = json.Marshal(opts)
	}
	o, ok, err := a.watchedOptions(b)
	if err != nil || !ok {
		return
	}
	_, _ = detect.Shared.Detect(a.ctx, o)
}
