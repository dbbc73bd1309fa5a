package nvmltest

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	json "github.com/goccy/go-json"
)

// LatencyPath is the per-call timing of NVML on a real H200 (driver
// 580.159.04), 2026-11-28: scripts/device/nvml-calls.py through pynvml, 50
// calls each (../testdata/README.md).
func LatencyPath() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "testdata", "nvmlcalls-h200-2026-11-28.json")
}

// timedCalls names, for the timing script's calls that carry an argument in
// their name (link 0, field 1, the device with itself), the fake's call.
var timedCalls = map[string]string{
	"NvLinkState0": "NvLinkState", "NvLinkVersion0": "NvLinkVersion", "NvLinkRemotePciInfo0": "NvLinkRemotePciInfo",
	"FieldValues1": "FieldValues", "TopologyCommonAncestorSelf": "TopologyCommonAncestor",
}

// H200Latency is the median cost of each call on that H200, by the fake's
// call name, for Machine.Latency: a benchmark on the fake then pays what
// the driver made the detection pay per call (MaxClockInfo 1.72 ms, the
// name 3 µs), and nvmlInit what it took once there ("Init", 12.5 ms:
// pynvml's nvmlInit, which loads the library too). The medians include
// pynvml's own few microseconds per call. Calls the script did not time
// cost nothing.
func H200Latency(t testing.TB) map[string]time.Duration {
	t.Helper()
	b, err := os.ReadFile(LatencyPath())
	if err != nil {
		t.Fatalf("nvml timing: %v", err)
	}
	var timing struct {
		InitMS float64 `json:"init_ms"`
		Calls  map[string]struct {
			MedianMS float64 `json:"median_ms"`
		} `json:"calls"`
	}
	if err := json.Unmarshal(b, &timing); err != nil || len(timing.Calls) == 0 || timing.InitMS <= 0 {
		t.Fatalf("nvml timing: %v (%d calls, init %v ms)", err, len(timing.Calls), timing.InitMS)
	}
	out := map[string]time.Duration{"Init": time.Duration(timing.InitMS * float64(time.Millisecond))}
	for name, c := range timing.Calls {
		if fake, ok := timedCalls[name]; ok {
			name = fake
		}
		out[name] = time.Duration(c.MedianMS * float64(time.Millisecond))
	}
	return out
}
