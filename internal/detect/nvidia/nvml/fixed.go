package nvml

import "sync"

// What a GPU cannot change while it exists is read once per loaded library
// and GPU, not on every Read: its maximum SM and memory clocks
// (nvmlDeviceGetMaxClockInfo, the board's limits, not the clocks it runs
// at), the maximum PCIe generation and width of the device in its slot
// (nvmlDeviceGetMaxPcieLinkGeneration, -Width) and the most MIG devices it
// can hold (nvmlDeviceGetMaxMigDeviceCount) — NVML API reference, "Device
// Queries", https://docs.nvidia.com/deploy/nvml-api/group__nvmlDeviceQueries.html.
// nvmlDeviceGetMaxClockInfo alone cost 1.72 ms a call at the median on a
// real H200 (testdata/nvmlcalls-h200-2026-11-28.json), and it was asked
// twice per GPU on every Read: 3.4 ms of the 4.5-5.0 ms a steady-state
// detection took there (docs/performance.md, "NVML in-process").
//
// Everything else is read on every Read: memory, processes, MIG mode, ECC
// mode and counters, remapped rows, power limit (an administrator sets it),
// clocks-event reasons, current PCIe link, temperature, utilisation.
//
// A GPU is known by its UUID and PCI bus id together: a GPU swapped for
// another in the same slot has a new UUID, and one moved to another slot a
// new bus id, so either reads its facts afresh. The cache belongs to one
// loaded library (one path, loaded and initialised once per process; see
// Open), so another library path starts with nothing cached; entries of
// GPUs a Read no longer sees are dropped.

// deviceKey identifies a GPU: its UUID and PCI bus id as NVML gives them.
type deviceKey struct{ UUID, BusID string }

// known is a key whose two parts NVML gave.
func (k deviceKey) known() bool { return k.UUID != "" && k.BusID != "" }

// fixedRead is one fixed fact: the value and what NVML answered.
type fixedRead struct {
	Value uint32
	Code  Return
}

// settled is an answer that will not change while the device exists: a
// value, or NotSupported (by the driver, or no entry point). Any other
// error (no permission, GPU lost, unknown) may pass and is asked again.
func (f fixedRead) settled() bool {
	return f.Code == Success || f.Code == ErrorNotSupported || f.Code == ErrorFunctionNotFound
}

// fixedFacts are the fixed facts of one GPU read together on each Read
// until cached.
type fixedFacts struct {
	MaxClockSM, MaxClockMemory, PCIeGenMax, PCIeWidthMax fixedRead
}

func (f fixedFacts) settled() bool {
	return f.MaxClockSM.settled() && f.MaxClockMemory.settled() && f.PCIeGenMax.settled() && f.PCIeWidthMax.settled()
}

// fixedEntry is what is cached of one GPU; MaxMIG is read only when the GPU
// is in MIG mode (it says 0 otherwise), so it has its own flag.
type fixedEntry struct {
	facts     fixedFacts
	hasFacts  bool
	maxMIG    uint32
	hasMaxMIG bool
}

// fixedCache holds the fixed facts of the GPUs of one library. Its methods
// are safe for concurrent use: a Read reads up to 8 GPUs at once, each
// asking for its own key.
type fixedCache struct {
	mu sync.Mutex
	m  map[deviceKey]*fixedEntry
}

// facts reads the fixed facts of the GPU k with read, unless they are
// cached; settled answers of a known GPU are cached.
func (c *fixedCache) facts(k deviceKey, read func() fixedFacts) fixedFacts {
	if !k.known() {
		return read()
	}
	c.mu.Lock()
	e := c.m[k]
	if e != nil && e.hasFacts {
		f := e.facts
		c.mu.Unlock()
		return f
	}
	c.mu.Unlock()
	f := read()
	if f.settled() {
		c.entry(k, func(e *fixedEntry) { e.facts, e.hasFacts = f, true })
	}
	return f
}

// maxMIG reads the most MIG devices the GPU k can hold with read, unless
// cached; a count above zero read without error is cached.
func (c *fixedCache) maxMIG(k deviceKey, read func() (uint32, Return)) (uint32, Return) {
	if !k.known() {
		return read()
	}
	c.mu.Lock()
	if e := c.m[k]; e != nil && e.hasMaxMIG {
		n := e.maxMIG
		c.mu.Unlock()
		return n, Success
	}
	c.mu.Unlock()
	n, r := read()
	if r == Success && n > 0 {
		c.entry(k, func(e *fixedEntry) { e.maxMIG, e.hasMaxMIG = n, true })
	}
	return n, r
}

// entry runs set on k's entry, made if missing, under the lock.
func (c *fixedCache) entry(k deviceKey, set func(*fixedEntry)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = map[deviceKey]*fixedEntry{}
	}
	e := c.m[k]
	if e == nil {
		e = &fixedEntry{}
		c.m[k] = e
	}
	set(e)
}

// keep drops the entries of GPUs not in seen (a Read's GPUs): a GPU gone
// and back is read afresh, and the cache holds no more GPUs than a Read.
func (c *fixedCache) keep(seen map[deviceKey]bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for k := range c.m {
		if !seen[k] {
			delete(c.m, k)
		}
	}
}

// size is the number of GPUs cached; for tests.
func (c *fixedCache) size() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.m)
}
