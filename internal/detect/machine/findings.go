package machine

import (
	"context"
	"fmt"

	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// Findings is what one backend contributes to the registry. Device IDs in
// Findings are keys local to the backend (any unique string); Interconnect
// device lists refer to those keys. Detect renames them to contract ids.
type Findings struct {
	Devices       []registry.Device
	Interconnects []registry.Interconnect
	NUMANodes     []registry.NUMANode
	Environment   *registry.Environment
	Storage       []registry.Storage
	Warnings      []registry.Warning
	// DroppedWarnings counts warnings Warn and AddWarning did not keep
	// because Warnings already held MaxWarningsPerBackend.
	DroppedWarnings int
}

// MaxWarningsPerBackend caps the warnings one backend contributes to an
// answer: a tool printing megabytes of malformed lines raised one warning a
// line (two million, a 267 MB answer; issue 14 item 4). The rest are counted
// and reported in one warnings_dropped warning.
const MaxWarningsPerBackend = 20

// Warn appends a warning, or counts it as dropped past the cap.
func (f *Findings) Warn(backend, code, format string, args ...any) {
	if f.full() {
		return
	}
	f.Warnings = append(f.Warnings, registry.Warning{Backend: backend, Code: code, Message: fmt.Sprintf(format, args...)})
}

// AddWarning appends w when it is not nil, or counts it as dropped past the cap.
func (f *Findings) AddWarning(w *registry.Warning) {
	if w != nil && !f.full() {
		f.Warnings = append(f.Warnings, *w)
	}
}

// full reports whether the cap is reached, counting the warning that found it so.
func (f *Findings) full() bool {
	if len(f.Warnings) < MaxWarningsPerBackend {
		return false
	}
	f.DroppedWarnings++
	return true
}

// Backend is one detection source: a name (the backends and exclude
// options, timing) and what it reads from the machine.
type Backend struct {
	Name   string
	Detect func(ctx context.Context, m *Machine) Findings
}

// NounOf is noun in the number n asks for, "device" for 1 and "devices"
// otherwise, for a warning that counts things ("8 Gaudi devices", "1
// NVIDIA GPU") rather than writing "device(s)". Every noun given takes a
// plain "s".
func NounOf(n int, noun string) string {
	if n == 1 {
		return noun
	}
	return noun + "s"
}
