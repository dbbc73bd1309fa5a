package engine

import (
	"fmt"

	"github.com/ai-hwaccel/ai-hwaccel/internal/precision"
	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// capability is a CUDA compute capability as vLLM's get_min_capability
// writes it: major*10 + minor (75 for 7.5).
type capability int

// String is the capability as NVIDIA writes it ("7.5").
func (c capability) String() string { return fmt.Sprintf("%d.%d", c/10, c%10) }

// cudaCapability is the compute capability of a CUDA device; ok is false for
// another kind or a device whose capability is not known (the engine then
// has no rule, and the device's precision list decides).
func cudaCapability(d *registry.Device) (capability, bool) {
	if d.Kind != registry.KindCUDA {
		return 0, false
	}
	major, minor, ok := precision.ComputeCapability(d.ComputeCapability)
	if !ok {
		return 0, false
	}
	return capability(major*10 + minor), true
}

// deviceName is how a refusal names a device: its name, else its id.
func deviceName(d *registry.Device) string {
	if d.Name != "" {
		return d.Name
	}
	return d.ID
}
