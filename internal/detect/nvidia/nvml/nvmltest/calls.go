//go:build linux && cgo

package nvmltest

import (
	"sync/atomic"
	"testing"
	"unsafe"

	"github.com/ai-hwaccel/ai-hwaccel/internal/detect/vendorlib/dl"
)

// symbol is the address of the fake library's exported variable name.
// dlopen of a path already loaded returns the same library, so the
// variable is the one the fake's entry points use.
func symbol(t testing.TB, lib, name string) unsafe.Pointer {
	t.Helper()
	h, err := dl.Open(lib)
	if err != nil {
		t.Fatalf("fake nvml: %v", err)
	}
	p := dl.Sym(h, name)
	if p == nil {
		t.Fatalf("fake nvml %s: no symbol %s", lib, name)
	}
	return p
}

// Calls is how often the fake library at lib has been called for call (the
// fake's name: "MaxClockInfo", "MemoryInfo_v2"; fake_nvml.c, FAKE_CALLS)
// since it was loaded.
func Calls(t testing.TB, lib, call string) uint64 {
	t.Helper()
	return atomic.LoadUint64((*uint64)(symbol(t, lib, "fake_calls_"+call)))
}

// SwapUUID makes GPU 0 of the fake library at lib answer uuid from now on,
// as if another GPU had taken its PCI slot; "" gives its own back. Call it
// between reads only.
func SwapUUID(t testing.TB, lib, uuid string) {
	t.Helper()
	buf := (*[96]byte)(symbol(t, lib, "fake_uuid_gpu0"))
	if len(uuid) >= len(buf) {
		t.Fatalf("fake nvml: UUID %q too long", uuid)
	}
	clear(buf[:])
	copy(buf[:], uuid)
}

// MaxInFlight is the most calls of a GPU's memory (nvmlDeviceGetMemoryInfo_v2)
// that the fake library at lib, built with -DFAKE_BARRIER=n, has seen in
// flight at once: n or more when that many GPUs were read in parallel, 1
// when they were read one after another (each then waited a second at the
// barrier).
func MaxInFlight(t testing.TB, lib string) uint64 {
	t.Helper()
	return atomic.LoadUint64((*uint64)(symbol(t, lib, "fake_max_in_flight")))
}
