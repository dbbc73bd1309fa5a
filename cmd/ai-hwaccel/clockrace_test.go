package main

import (
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"
)

// clockEnded are the warning codes of a tool run that a kill ended: at the
// run's timeout (tool_timeout) or when its stdout passed the cap
// (output_too_large; internal/detect/machine/runner_exec.go). Whether a run
// ends so, or by itself, is decided by the clock when the machine is loaded,
// not by the machine detected: the hostile fixture's vulkaninfo prints 50 MB
// and reaches the 4 MiB cap in about half a second on an idle machine, after
// the 2 s timeout on a loaded one, and its xpu-smi (about 0.3 s: a child it
// leaves holds stdout) can pass the timeout too. Two detections of hostile
// compared on a machine of 2 cores shared by 6 agents once differed there and
// nowhere else. Reproduced with the hostile timeout set to 500 ms and
// 350 ms under GOMAXPROCS=1 (-count 20 -cpu 1): 2 and 1 runs in 20 failed on
// vulkan tool_timeout against output_too_large, and 3 in 30 on xpu-smi
// tool_timeout against its two conflicting_sources warnings.
var clockEnded = map[string]bool{"tool_timeout": true, "output_too_large": true}

// withoutClockRaces returns a and b, two detection answers without timing
// (withoutTiming), with the warnings of every backend one of whose tool runs
// raced the clock replaced in both by one placeholder: a run a kill ended in
// one answer and not in the other, or by the other kill. Everything else is
// left to compare exactly: the devices, every other backend's warnings, and a
// tool killed the same way in both (a hung tool's "killed after 2s" names the
// timeout the command passed, so a different timeout still differs).
func withoutClockRaces(a, b map[string]any) (map[string]any, map[string]any) {
	ka, kb := killedRuns(a), killedRuns(b)
	raced := map[string]bool{}
	for _, pair := range [][2]map[[2]string]string{{ka, kb}, {kb, ka}} {
		for run, code := range pair[0] {
			if pair[1][run] != code {
				raced[run[0]] = true
			}
		}
	}
	if len(raced) == 0 {
		return a, b
	}
	return withoutRaced(a, raced), withoutRaced(b, raced)
}

// killedRuns maps each (backend, tool) of a warning of a clockEnded code to
// that code.
func killedRuns(answer map[string]any) map[[2]string]string {
	out := map[[2]string]string{}
	ws, _ := answer["warnings"].([]any)
	for _, x := range ws {
		w, _ := x.(map[string]any)
		code, _ := w["code"].(string)
		if !clockEnded[code] {
			continue
		}
		backend, _ := w["backend"].(string)
		tool, _ := w["tool"].(string)
		out[[2]string{backend, tool}] = code
	}
	return out
}

// withoutRaced is answer with the warnings of the raced backends replaced
// by one placeholder each, in backend order; answer itself is not changed.
func withoutRaced(answer map[string]any, raced map[string]bool) map[string]any {
	out := make(map[string]any, len(answer))
	for k, v := range answer {
		out[k] = v
	}
	ws, _ := answer["warnings"].([]any)
	var kept []any
	for _, x := range ws {
		w, _ := x.(map[string]any)
		if b, _ := w["backend"].(string); !raced[b] {
			kept = append(kept, x)
		}
	}
	backends := make([]string, 0, len(raced))
	for b := range raced {
		backends = append(backends, b)
	}
	sort.Strings(backends)
	for _, b := range backends {
		kept = append(kept, map[string]any{"backend": b, "code": "a tool run raced the clock; its warnings are not compared"})
	}
	out["warnings"] = kept
	return out
}

// assertSameDetection asserts that two detections of one fixture machine
// give the same answer but for timing and for the warnings of a backend
// whose tool run raced the clock (withoutClockRaces).
func assertSameDetection(t *testing.T, want, got []byte) {
	t.Helper()
	a, b := withoutClockRaces(withoutTiming(t, want), withoutTiming(t, got))
	assert.Equal(t, a, b)
}

// withoutClockRaces forgives the two races seen on hostile (vulkaninfo
// killed at the cap in one detection and at the timeout in the other;
// xpu-smi killed at the timeout in one and read in the other) and nothing
// else: a hung tool killed after another timeout, a warning of a backend that
// did not race, a warning fewer, a device more still differ.
func TestWithoutClockRaces(t *testing.T) {
	w := func(backend, tool, code, msg string) map[string]any {
		return map[string]any{"backend": backend, "tool": tool, "code": code, "message": msg}
	}
	answer := func(ws ...map[string]any) map[string]any {
		l := make([]any, len(ws))
		for i, x := range ws {
			l[i] = x
		}
		return map[string]any{"devices": []any{"cpu:0"}, "warnings": l}
	}
	hang := w("cuda", "nvidia-smi", "tool_timeout", "nvidia-smi: killed after 2s: timed out")
	gaudi := w("gaudi", "hl-smi", "tool_failed", "hl-smi: killed by signal segmentation fault")
	rows := []map[string]any{
		w("intel_gpu", "xpu-smi", "conflicting_sources", "xpu-smi reports a device at 0000:1c:00.0 but sysfs shows a function of PCI vendor 1002 there; the row is ignored"),
		w("intel_gpu", "xpu-smi", "conflicting_sources", "xpu-smi reports a device at 0000:18:00.0 but sysfs shows a function of PCI vendor 10de there; the row is ignored"),
	}
	xpuKilled := w("intel_gpu", "xpu-smi", "tool_timeout", "xpu-smi discovery --dump 1,2,4,8,11,16: killed after 2s: timed out")
	capped := w("vulkan", "vulkaninfo", "output_too_large", "vulkaninfo --summary: printed more than 4194304 bytes: output too large")
	timed := w("vulkan", "vulkaninfo", "tool_timeout", "vulkaninfo --summary: killed after 2s: timed out")
	base := answer(hang, gaudi, rows[0], rows[1], capped)

	for name, other := range map[string]map[string]any{
		"vulkaninfo killed by the clock, not the cap": answer(hang, gaudi, rows[0], rows[1], timed),
		"xpu-smi killed by the clock, not read":       answer(hang, gaudi, xpuKilled, capped),
	} {
		a, b := withoutClockRaces(base, other)
		assert.Equal(t, a, b, name)
	}
	assert.Equal(t, "output_too_large", base["warnings"].([]any)[4].(map[string]any)["code"], "inputs untouched")

	for name, other := range map[string]map[string]any{
		"a hung tool killed after another timeout":       answer(w("cuda", "nvidia-smi", "tool_timeout", "nvidia-smi: killed after 5s: timed out"), gaudi, rows[0], rows[1], capped),
		"another warning of a backend that did not race": answer(hang, w("gaudi", "hl-smi", "tool_failed", "hl-smi: exit status 1"), rows[0], rows[1], capped),
		"a warning fewer":                    answer(hang, gaudi, rows[0], capped),
		"a device more, races forgiven":      {"devices": []any{"cpu:0", "vulkan:0"}, "warnings": []any{hang, gaudi, rows[0], rows[1], timed}},
		"a device more, no race":             {"devices": []any{"cpu:0", "vulkan:0"}, "warnings": []any{hang, gaudi, rows[0], rows[1], capped}},
		"a gaudi warning lost beside a race": answer(hang, rows[0], rows[1], timed),
	} {
		a, b := withoutClockRaces(base, other)
		assert.NotEqual(t, a, b, name)
	}
}
