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
}

// Warn appends a warning.
func (f *Findings) Warn(backend, code, format string, args ...any) {
	f.Warnings = append(f.Warnings, registry.Warning{Backend: backend, Code: code, Message: fmt.Sprintf(format, args...)})
}

// AddWarning appends w when it is not nil.
func (f *Findings) AddWarning(w *registry.Warning) {
	if w != nil {
		f.Warnings = append(f.Warnings, *w)
	}
}

// Backend is one detection source: a name (the backends and exclude
// options, timing) and what it reads from the machine.
type Backend struct {
	Name   string
	Detect func(ctx context.Context, m *Machine) Findings
}
