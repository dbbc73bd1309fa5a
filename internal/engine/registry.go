package engine

import (
	"fmt"
	"sync"
	"sync/atomic"
)

// set is one state of the registry; it is never changed once published,
// so planning reads it without a lock.
type set struct {
	list   []Engine
	byName map[string]Engine
	// cacheTypes are CommonCacheTypes and every engine's, by name;
	// cacheNames the same in order, each once.
	cacheTypes map[string]CacheType
	cacheNames []string
	// gen counts the changes to the registry (Generation).
	gen uint64
}

var (
	current atomic.Pointer[set]
	writes  sync.Mutex
)

func init() {
	for _, e := range []Engine{vllm{}, llamaCPP{}, sglang{}, none{}} {
		Register(e)
	}
}

// Register adds an engine; engines are listed in the order registered. It
// panics on an empty or repeated name or a cache type named twice with
// different sizes: both are programming errors.
func Register(e Engine) {
	writes.Lock()
	defer writes.Unlock()
	old := current.Load()
	var list []Engine
	if old != nil {
		list = old.list
	}
	name := e.Name()
	if name == "" {
		panic("engine: Register with an empty name")
	}
	for _, x := range list {
		if x.Name() == name {
			panic(fmt.Sprintf("engine: %q registered twice", name))
		}
	}
	current.Store(build(append(append([]Engine(nil), list...), e), generation(old)+1))
}

func generation(s *set) uint64 {
	if s == nil {
		return 0
	}
	return s.gen
}

// Generation changes whenever an engine is registered or removed: what a
// caller remembers of the engines (the planner's pools, with their
// budgets) is valid while it stays the same.
func Generation() uint64 { return current.Load().gen }

// Unregister removes the named engine (tests register engines of their
// own and remove them afterwards).
func Unregister(name string) {
	writes.Lock()
	defer writes.Unlock()
	var list []Engine
	for _, x := range current.Load().list {
		if x.Name() != name {
			list = append(list, x)
		}
	}
	old := current.Load()
	current.Store(build(list, old.gen+1))
}

func build(list []Engine, gen uint64) *set {
	s := &set{list: list, byName: map[string]Engine{}, cacheTypes: map[string]CacheType{}, gen: gen}
	add := func(t CacheType) {
		if old, ok := s.cacheTypes[t.Name]; ok {
			if old != t {
				panic(fmt.Sprintf("engine: cache type %q has two sizes", t.Name))
			}
			return
		}
		s.cacheTypes[t.Name] = t
		s.cacheNames = append(s.cacheNames, t.Name)
	}
	for _, t := range CommonCacheTypes {
		add(t)
	}
	for _, e := range list {
		s.byName[e.Name()] = e
		for _, t := range e.CacheTypes() {
			add(t)
		}
	}
	return s
}

// Lookup is the engine of that name; "" (a request naming no engine) is
// none.
func Lookup(name string) (Engine, bool) {
	if name == "" {
		return nil, false
	}
	e, ok := current.Load().byName[name]
	return e, ok
}

// Names are the registered engines' names, in registration order: the
// list requests, the CLI, the schema and the docs offer.
func Names() []string {
	list := current.Load().list
	out := make([]string, len(list))
	for i, e := range list {
		out[i] = e.Name()
	}
	return out
}

// All are the registered engines, in registration order.
func All() []Engine {
	return append([]Engine(nil), current.Load().list...)
}

// Alternatives are the engines other than Default(d) that would also plan
// device d as a default (a Preference above Fallback: llama.cpp beside vLLM
// on a CUDA GPU, not engine none), in registration order: what a request
// naming no engine may try when the default does not hold the model.
func Alternatives(d Device) []Engine {
	def := Default(d)
	var out []Engine
	for _, e := range current.Load().list {
		if e != def && e.Preference(d) > Fallback {
			out = append(out, e)
		}
	}
	return out
}

// Default is the engine that claims device d when the request names none:
// the highest Preference, the first registered of equal ones.
func Default(d Device) Engine {
	var best Engine
	bestP := Never
	for _, e := range current.Load().list {
		if p := e.Preference(d); p > bestP {
			best, bestP = e, p
		}
	}
	if best == nil {
		best, _ = Lookup(NameNone)
	}
	return best
}
