package machine

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// memVerdict classifies a memory figure read from a tool or sysfs.
type memVerdict int

const (
	// memUnknown: absent or not a number; left out without comment.
	memUnknown memVerdict = iota
	// memOK: a believable size, 0 included (0 B used is a figure; callers
	// that read a total treat 0 as unknown).
	MemOK
	// memAbsurd: negative, or more than registry.MaxDeviceMemory (1 PiB, which
	// no device has) including numbers too large for int64 such as a sysfs
	// 2^64-1; left out with an absurd_value warning.
	MemAbsurd
)

// ParseMemory reads a decimal memory figure counted in units of unit bytes:
// "206141652992" (unit 1), "49135.62" (unit 1<<20, xpu-smi's "%.2f MiB"),
// "98304" (unit 1<<20). Fractions are rounded to the byte.
func ParseMemory(s string, unit int64) (int64, memVerdict) {
	s = strings.TrimSpace(s)
	n, err := strconv.ParseInt(s, 10, 64)
	switch {
	case err == nil:
		if n < 0 || n > registry.MaxDeviceMemory/unit {
			return 0, MemAbsurd
		}
		return n * unit, checkMemory(n * unit)
	case errors.Is(err, strconv.ErrRange):
		return 0, MemAbsurd // beyond int64, either sign
	}
	v, err := strconv.ParseFloat(s, 64)
	switch {
	case errors.Is(err, strconv.ErrRange):
		return 0, MemAbsurd
	case err != nil || math.IsNaN(v):
		return 0, memUnknown
	case v < 0 || v*float64(unit) > float64(registry.MaxDeviceMemory): // +Inf too
		return 0, MemAbsurd
	}
	return checkMemoryRounded(v * float64(unit))
}

func checkMemoryRounded(bytes float64) (int64, memVerdict) {
	b := int64(math.Round(bytes))
	return b, checkMemory(b)
}

// checkMemory classifies a figure already read as bytes.
func checkMemory(bytes int64) memVerdict {
	if bytes < 0 || bytes > registry.MaxDeviceMemory {
		return MemAbsurd
	}
	return MemOK
}

// AbsurdValue is a memory figure a pure parser left out as absurd, for the
// backend to report with warnAbsurdMemory.
type AbsurdValue struct{ What, Raw string }

// ReadMemoryFile reads a sysfs attribute holding a size in bytes. An absurd
// figure is reported (absurd_value with the path) and, like an unreadable or
// non-numeric one, gives false.
func (m *Machine) ReadMemoryFile(f *Findings, backend, what, p string) (int64, bool) {
	s, err := m.ReadString(p)
	if err != nil {
		return 0, false
	}
	b, v := ParseMemory(s, 1)
	if v == MemAbsurd {
		f.WarnAbsurdMemory(backend, "", p, what, s)
	}
	return b, v == MemOK
}

// WarnAbsurdMemory reports a memory figure left out as absurd. what names the
// figure ("0000:1c:00.0 memory.total"); tool or path is where it came from
// (a sysfs path is given relative to the sysroot, as Machine reads it).
func (f *Findings) WarnAbsurdMemory(backend, tool, path, what, raw string) {
	w := registry.Warning{Backend: backend, Code: registry.WarnAbsurdValue, Tool: tool,
		Message: fmt.Sprintf("%s %q is negative or more than 1 PiB; left out", what, ClipMsg(CleanText(raw), 40))}
	if path != "" {
		w.Path = "/" + strings.TrimPrefix(path, "/")
	}
	f.Warnings = append(f.Warnings, w)
}

// ClipMsg shortens s for an error message.
func ClipMsg(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
