package plan

import (
	"fmt"
	"strings"
)

// idleDevices lists the devices of the chosen plan's pool (the devices the
// request named, or all present ones of that kind and vendor) that a fitting
// plan leaves unused, in pool order.
func idleDevices(ch *choice) []string {
	pl := &ch.Plan
	if !pl.Fits || pl.Pool == nil || len(pl.Pool.Devices) == 0 {
		return nil
	}
	used := map[string]bool{}
	for _, r := range pl.replicas() {
		for _, s := range r {
			for _, d := range s.Devices {
				used[d.ID] = true
			}
		}
	}
	first := pl.Pool.Devices[0].Dev
	var idle []string
	for _, p := range ch.Pools {
		if p.Kind != pl.Pool.Kind || p.Vendor != pl.Pool.Vendor {
			continue
		}
		for _, d := range p.Devices {
			if !used[d.ID] && d.Dev.MemoryShared == first.MemoryShared {
				idle = append(idle, d.ID)
			}
		}
	}
	return idle
}

// explainIdle says which devices stay idle and what would use them.
func explainIdle(ch *choice, idle []string) []string {
	if len(idle) == 0 {
		return nil
	}
	pl := &ch.Plan
	used := pl.devices()
	what := "present"
	if ch.Devices != nil {
		what = "named"
	}
	hint := "replicas (data parallel) would serve more sequences on them"
	if pl.Pool.tensorParallel() && pl.DP == 0 {
		hint = fmt.Sprintf("tensor_parallel_size %d or replicas would use them (more KV room and speed, or more sequences)", used+len(idle))
		if !pl.Costs.validTP(used + len(idle)) {
			hint = "replicas (data parallel) would serve more sequences on them"
		}
	}
	return []string{fmt.Sprintf("idle: %s of the %d %s %s device(s) stay unused: the plan needs %d; %s",
		strings.Join(idle, ", "), used+len(idle), what, pl.Pool.label(), used, hint)}
}
