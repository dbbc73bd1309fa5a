package planreq

import (
	"math/bits"

	"github.com/ai-hwaccel/ai-hwaccel/internal/errs"
	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// CheckMemoryBounds refuses a request whose machines hold more than
// MaxPlanBytes (1 EiB) of memory in total. Every figure of a plan is a sum of
// per-device parts that each fit their device, so with the total bounded no
// sum can leave int64: without this bound 24 000 devices of 1 PiB (each
// within registry.MaxDeviceMemory) holding 24 000 replicas of a 1e14-parameter
// fp32 model summed to a wrapped, negative weights_bytes (issue 14 item 6).
// The wire decoder checks a registry or cluster given by the host; the api
// layer calls it again after filling the registry by detection.
func (r *Request) CheckMemoryBounds() error {
	var total uint64
	regs := r.Cluster
	if len(regs) == 0 && r.Registry != nil {
		regs = []*registry.Registry{r.Registry}
	}
	for _, g := range regs {
		for _, d := range g.Devices {
			var carry uint64 // a negative figure reads as > 2^63, so it fails too
			total, carry = bits.Add64(total, uint64(d.MemoryBytes), 0)
			if carry != 0 || total > MaxPlanBytes {
				return errs.New(errs.InvalidArgument, "registry: the devices hold more than 1 EiB of memory in total; no machine or cluster does")
			}
		}
	}
	return nil
}
