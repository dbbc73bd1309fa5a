package nvml

import (
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
)

var h200Fixed = fixedFacts{MaxClockSM: fixedRead{1980, Success}, MaxClockMemory: fixedRead{3201, Success},
	PCIeGenMax: fixedRead{5, Success}, PCIeWidthMax: fixedRead{16, Success}}

func counting(f fixedFacts) (func() fixedFacts, *atomic.Int32) {
	var n atomic.Int32
	return func() fixedFacts { n.Add(1); return f }, &n
}

// A GPU whose UUID or bus id NVML did not give is never cached; one with
// both is read once.
func TestFixedCacheNeedsTheWholeKey(t *testing.T) {
	var c fixedCache
	read, n := counting(h200Fixed)
	for _, k := range []deviceKey{{UUID: "GPU-a"}, {BusID: "00000000:00:06.0"}, {}} {
		c.facts(k, read)
		c.facts(k, read)
	}
	assert.Equal(t, int32(6), n.Load())
	assert.Zero(t, c.size())
	k := deviceKey{UUID: "GPU-a", BusID: "00000000:00:06.0"}
	assert.Equal(t, h200Fixed, c.facts(k, read))
	assert.Equal(t, h200Fixed, c.facts(k, read))
	assert.Equal(t, int32(7), n.Load())
}

// NotSupported is settled (cached); another error is asked again.
func TestFixedCacheKeepsOnlySettledAnswers(t *testing.T) {
	var c fixedCache
	k := deviceKey{UUID: "GPU-a", BusID: "00000000:00:06.0"}
	notSupported := h200Fixed
	notSupported.PCIeGenMax = fixedRead{0, ErrorNotSupported}
	read, n := counting(notSupported)
	c.facts(k, read)
	assert.Equal(t, notSupported, c.facts(k, read))
	assert.Equal(t, int32(1), n.Load())

	lost := h200Fixed
	lost.MaxClockSM = fixedRead{0, ErrorGPUIsLost}
	k2 := deviceKey{UUID: "GPU-b", BusID: "00000000:00:07.0"}
	read, n = counting(lost)
	c.facts(k2, read)
	c.facts(k2, read)
	assert.Equal(t, int32(2), n.Load())
}

// The MIG device count is cached when above zero and read without error
// (NVML says 0 when MIG is off or unsupported).
func TestFixedCacheMaxMIG(t *testing.T) {
	var c fixedCache
	k := deviceKey{UUID: "GPU-a", BusID: "00000000:00:06.0"}
	calls := 0
	answer := func(n uint32, r Return) func() (uint32, Return) {
		return func() (uint32, Return) { calls++; return n, r }
	}
	c.maxMIG(k, answer(0, Success))
	c.maxMIG(k, answer(7, ErrorUnknown))
	assert.Equal(t, 2, calls)
	c.maxMIG(k, answer(7, Success))
	n, r := c.maxMIG(k, answer(0, ErrorUnknown))
	assert.Equal(t, uint32(7), n)
	assert.Equal(t, Success, r)
	assert.Equal(t, 3, calls)
}

// keep drops the GPUs a read no longer saw.
func TestFixedCacheKeep(t *testing.T) {
	var c fixedCache
	a, b := deviceKey{"GPU-a", "00000000:00:06.0"}, deviceKey{"GPU-b", "00000000:00:07.0"}
	read, n := counting(h200Fixed)
	c.facts(a, read)
	c.facts(b, read)
	c.keep(map[deviceKey]bool{b: true})
	assert.Equal(t, 1, c.size())
	c.facts(a, read)
	c.facts(b, read)
	assert.Equal(t, int32(3), n.Load())
}

// Callers on many goroutines get the facts read (run with -race).
func TestFixedCacheConcurrent(t *testing.T) {
	var c fixedCache
	read, _ := counting(h200Fixed)
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Go(func() {
			k := deviceKey{UUID: "GPU-a", BusID: "00000000:00:06.0"}
			if i%2 == 1 {
				c.keep(map[deviceKey]bool{k: true})
			}
			assert.Equal(t, h200Fixed, c.facts(k, read))
			n, _ := c.maxMIG(k, func() (uint32, Return) { return 7, Success })
			assert.Equal(t, uint32(7), n)
		})
	}
	wg.Wait()
	assert.Equal(t, 1, c.size())
}
