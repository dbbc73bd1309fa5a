package intel

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

func FuzzIntelGPUParseXPUDump(f *testing.F) {
	f.Add("Device ID,Device Name,UUID,Driver Version,PCI BDF Address,Memory Physical Size\n" +
		`0,"Intel(R) Data Center GPU Max 1100","u","d","0000:29:00.0","49136.00 MiB"` + "\n")
	f.Add("Device ID,PCI BDF Address\n,\"\"\n")
	f.Add("\"unterminated,\n")
	f.Add("PCI BDF Address,Memory Physical Size\n0000:00:00.0,\"-1e308 MiB\"\n")
	f.Fuzz(func(t *testing.T, s string) {
		devs, err := ParseXPUDump(s)
		if err != nil {
			return
		}
		assert.LessOrEqual(t, len(devs), maxXPUDevices)
		for _, d := range devs {
			assert.GreaterOrEqual(t, d.MemoryBytes, int64(0))
			assert.LessOrEqual(t, d.MemoryBytes, registry.MaxDeviceMemory)
			assert.GreaterOrEqual(t, d.ID, -1)
		}
	})
}
