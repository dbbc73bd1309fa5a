package engine

import (
	"github.com/ai-hwaccel/ai-hwaccel/internal/model"
	"github.com/ai-hwaccel/ai-hwaccel/internal/quant"
	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// Base is an engine without rules of its own: it runs on every kind,
// claims no device by default, lets a plan use the fraction asked (else
// all) of each device, keeps the planner's KV cache, levels and cache
// types, splits tensors, and writes no load, flags, environment or
// command. An engine embeds it and overrides what it knows.
type Base struct{}

// RunsOn implements Engine: every kind.
func (Base) RunsOn(registry.Kind) bool { return true }

// Preference implements Engine: never a default.
func (Base) Preference(Device) Preference { return Never }

// Memory implements Engine: the fraction asked, else the whole device.
func (Base) Memory(asked float64) Memory {
	if asked == 0 {
		asked = 1
	}
	return Memory{Fraction: asked}
}

// BudgetSource implements Engine: the planner's sentence.
func (Base) BudgetSource(string, Memory) string { return "" }

// KVRules implements Engine: no rules of its own.
func (Base) KVRules(o quant.KVOptions, _ *model.Model) quant.KVOptions { return o }

// CacheTypes implements Engine: none beyond CommonCacheTypes.
func (Base) CacheTypes() []CacheType { return nil }

// Levels implements Engine: the levels unchanged.
func (Base) Levels(levels []quant.Level) ([]quant.Level, []string) { return levels, nil }

// CannotLoad implements Engine: every level.
func (Base) CannotLoad(quant.Level) string { return "" }

// Parallelism implements Engine: tensor parallelism allowed.
func (Base) Parallelism() Parallelism { return Parallelism{Tensor: true} }

// Load implements Engine: nothing.
func (Base) Load(*Placement) (*Load, string) { return nil, "" }

// Args implements Engine: no flags, and nothing to say.
func (Base) Args(*Placement) ([]string, []string, bool) { return nil, nil, false }

// Env implements Engine: none.
func (Base) Env(*Placement) map[string]string { return nil }

// StartNotes implements Engine: none.
func (Base) StartNotes(*Placement) []string { return nil }

// Command implements Engine: no program.
func (Base) Command(Served) []string { return nil }

// none is the engine of plans no inference engine's rules apply to:
// training estimates (which ask for it), and devices no registered engine
// runs on (its Fallback preference). A request may name it to plan on
// each device's usable memory.
type none struct{ Base }

// Name implements Engine.
func (none) Name() string { return NameNone }

// Title implements Engine.
func (none) Title() string { return NameNone }

// Preference: the default only where no engine runs.
func (none) Preference(Device) Preference { return Fallback }
