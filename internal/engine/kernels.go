package engine

import (
	"fmt"

	"github.com/ai-hwaccel/ai-hwaccel/internal/model"
	"github.com/ai-hwaccel/ai-hwaccel/internal/precision"
	"github.com/ai-hwaccel/ai-hwaccel/internal/quant"
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
	return capabilityOf(d.Kind, d.ComputeCapability)
}

// capabilityOf is compute capability cc of a device of kind k, as
// cudaCapability reads it.
func capabilityOf(k registry.Kind, cc string) (capability, bool) {
	if k != registry.KindCUDA {
		return 0, false
	}
	major, minor, ok := precision.ComputeCapability(cc)
	if !ok {
		return 0, false
	}
	return capability(major*10 + minor), true
}

// cudaFloor is the lowest compute capability an engine runs on at all,
// whatever the weights: below it the engine's published builds carry no
// kernels for the GPU, or the engine stops at start-up.
type cudaFloor struct {
	title  string
	floor  capability
	source string
}

// refusal says why the engine cannot run on device d of compute capability
// cc, "" when cc meets the floor.
func (f cudaFloor) refusal(d *registry.Device, cc capability) string {
	if cc >= f.floor {
		return ""
	}
	return fmt.Sprintf("%s needs compute capability %s or higher (%s); %s has %s", f.title, f.floor, f.source, deviceName(d), cc)
}

// admits reports whether a device the engine is asked to claim by default
// meets the floor; one whose capability is not known does.
func (f cudaFloor) admits(d Device) bool {
	cc, ok := capabilityOf(d.Kind, d.ComputeCapability)
	return !ok || cc >= f.floor
}

// deviceName is how a refusal names a device: its name, else its id.
func deviceName(d *registry.Device) string {
	if d.Name != "" {
		return d.Name
	}
	return d.ID
}

// quantMethod is one of a Hugging Face engine's quantization methods (vLLM's
// or SGLang's QuantizationConfig) with the minimum compute capability its
// get_min_capability returns, which the engine checks against the GPU when
// it builds its configuration (vLLM: VllmConfig._get_quantization_config,
// vllm/config/vllm.py): below it the engine stops with "The quantization
// method awq is not supported for the current GPU. Minimum capability: 75.
// Current capability: 70." (as on a V100).
type quantMethod struct {
	name   string
	floor  capability
	source string
}

// refusal says why engine title cannot run q on device d of compute
// capability cc, "" when it can.
func (q quantMethod) refusal(title string, d *registry.Device, cc capability) string {
	if cc >= q.floor {
		return ""
	}
	return fmt.Sprintf("%s's %s kernels need compute capability %s (%s); %s has %s", title, q.name, q.floor, q.source, deviceName(d), cc)
}

// publishedMethod is the quantization method declared by the published
// Hugging Face checkpoint of model m at level l that a plan loads
// (checkpointFor, as Load picks it), "" when none is published or its
// config declares none.
func publishedMethod(m *model.Model, l quant.Level) string {
	if m == nil {
		return ""
	}
	if ck := checkpointFor(m, l, false); ck != nil {
		return ck.Method
	}
	return ""
}
