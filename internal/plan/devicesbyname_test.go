package plan

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// A level row's reason names each pool's devices with their name: a
// device the registry gives no name (the CPU of the
// thinkpad-p16s-krackan fixture, named in a cluster beside an ARM host)
// was written "node0/cpu:0 () under vLLM: ..."; it is now its id alone.
func TestDevicesByNameLeavesNoEmptyName(t *testing.T) {
	named := &device{ID: "node1/cpu:0", Dev: registry.Device{Name: "ARM Neoverse-V1"}}
	unnamed := &device{ID: "node0/cpu:0"}
	assert.Equal(t, "node0/cpu:0", devicesByName([]*pool{{Devices: []*device{unnamed}}}))
	assert.Equal(t, "node0/cpu:0, node1/cpu:0 (ARM Neoverse-V1)", devicesByName([]*pool{{Devices: []*device{unnamed, named}}}))
	assert.Equal(t, "node1/cpu:0 (ARM Neoverse-V1), node0/cpu:0", devicesByName([]*pool{{Devices: []*device{named}}, {Devices: []*device{unnamed}}}))
}

// The idle-device sentences (splitByEngine) name a device the same way: a
// device with no registry name is its id alone, not "node0/cpu:0 ()".
func TestIdleDeviceSentencesLeaveNoEmptyName(t *testing.T) {
	assert.Equal(t, "node0/cpu:0", idWithName("node0/cpu:0", &device{ID: "node0/cpu:0"}))
	assert.Equal(t, "cuda:1", idWithName("cuda:1", nil))
	assert.Equal(t, "node1/cpu:0 (ARM Neoverse-V1)", idWithName("node1/cpu:0", &device{ID: "node1/cpu:0", Dev: registry.Device{Name: "ARM Neoverse-V1"}}))
}
