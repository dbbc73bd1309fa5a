package machine

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

func TestParseMemory(t *testing.T) {
	const mib = int64(1) << 20
	for _, tc := range []struct {
		in      string
		unit    int64
		want    int64
		verdict memVerdict
	}{
		{"206141652992", 1, 206141652992, MemOK},
		{" 98304\n", mib, 98304 * mib, MemOK},
		{"49135.62", mib, 51522431877, MemOK}, // xpu-smi "%.2f MiB": 51522431877.12 rounded
		{"0", 1, 0, MemOK},                    // 0 B used is a figure
		{"", 1, 0, memUnknown},
		{"N/A", mib, 0, memUnknown},
		{"nan", mib, 0, memUnknown},
		{"-1", 1, 0, MemAbsurd},
		{"-49136.00", mib, 0, MemAbsurd},
		{"18446744073709551615", 1, 0, MemAbsurd}, // 2^64-1 from sysfs
		{"1152921504606846976", 1, 0, MemAbsurd},  // 1 EiB
		{"99999999999999999999.00", mib, 0, MemAbsurd},
		{"1e400", 1, 0, MemAbsurd},
		{"inf", mib, 0, MemAbsurd},
		{"1125899906842624", 1, registry.MaxDeviceMemory, MemOK}, // exactly 1 PiB
		{"1125899906842625", 1, 0, MemAbsurd},
		{"1073741825", mib, 0, MemAbsurd}, // 1 PiB + 1 MiB
	} {
		got, v := ParseMemory(tc.in, tc.unit)
		assert.Equal(t, tc.verdict, v, tc.in)
		assert.Equal(t, tc.want, got, tc.in)
	}
}

func TestWarnAbsurdMemory(t *testing.T) {
	var f Findings
	f.WarnAbsurdMemory("rocm", "", "sys/class/drm/card1/device/mem_info_vram_total", "0000:1c:00.0 mem_info_vram_total", "18446744073709551615")
	f.WarnAbsurdMemory("intel_gpu", "xpu-smi", "", "0000:29:00.0 Memory Physical Size", "-49136.00 MiB")
	assert.Equal(t, []registry.Warning{
		{Backend: "rocm", Code: registry.WarnAbsurdValue, Path: "/sys/class/drm/card1/device/mem_info_vram_total",
			Message: `0000:1c:00.0 mem_info_vram_total "18446744073709551615" is negative or more than 1 PiB; left out`},
		{Backend: "intel_gpu", Code: registry.WarnAbsurdValue, Tool: "xpu-smi",
			Message: `0000:29:00.0 Memory Physical Size "-49136.00 MiB" is negative or more than 1 PiB; left out`},
	}, f.Warnings)
}
