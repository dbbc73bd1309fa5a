package registry

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// Issue 23 item 11: strings that reach a registry from a machine (a device
// name with a right-to-left override, warning messages with terminal escape
// sequences and newlines copied from sysfs paths) leave no control or
// bidirectional formatting character in the answer.
func TestScrubTextReplacesUnsafeCharacters(t *testing.T) {
	r := &Registry{
		Devices: []Device{{ID: "cuda:0", Name: "NVIDIA \u202eH100\u202c", PCIBusID: "0000:18:00.0"}},
		Warnings: []Warning{{Backend: "machine", Code: WarnSysfsRead,
			Message: "read /sys/bus/pci/devices/x\x1b[2J\nfake: permission denied\r\x9b31m", Path: "/sys/x\x1b]0;t\x07"}},
		Timing: &Timing{Backends: map[string]float64{"cu\nda": 1}},
	}
	ScrubText(r)
	assert.Equal(t, "NVIDIA \uFFFDH100\uFFFD", r.Devices[0].Name)
	assert.Equal(t, "read /sys/bus/pci/devices/x\uFFFD[2J\uFFFDfake: permission denied\uFFFD\uFFFD31m", r.Warnings[0].Message)
	assert.Equal(t, "/sys/x\uFFFD]0;t\uFFFD", r.Warnings[0].Path)
	assert.Contains(t, r.Timing.Backends, "cu\uFFFDda")
	assert.Equal(t, "0000:18:00.0", r.Devices[0].PCIBusID, "plain strings are kept")
	for _, c := range []rune{'\t', '\n', 0x7f, 0x85, 0x061c, 0x200e, 0x200f, 0x202a, 0x202e, 0x2066, 0x2069} {
		assert.True(t, IsUnsafeText(c), "%U", c)
	}
	for _, c := range []rune{' ', 'A', 0xa0, 0x2013, 0x200d} {
		assert.False(t, IsUnsafeText(c), "%U", c)
	}
	assert.Equal(t, "a\uFFFDb", ScrubString("a\xffb"), "invalid UTF-8")
}

// Maps of strings are scrubbed in keys and values; clean entries stay as
// they are.
func TestScrubTextScrubsStringMaps(t *testing.T) {
	r := &Registry{Devices: []Device{{ID: "cuda:0", Sources: map[string]string{
		"name": "nvidia-smi\x1b[31m", "memory\u202e": "sysfs", "cores": "datasheet"}}}}
	ScrubText(r)
	assert.Equal(t, map[string]string{"name": "nvidia-smi\uFFFD[31m", "memory\uFFFD": "sysfs", "cores": "datasheet"},
		r.Devices[0].Sources)
}
