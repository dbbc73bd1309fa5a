package plan

import (
	"fmt"
	"strings"

	"github.com/ai-hwaccel/ai-hwaccel/internal/engine"
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
	usedMIG := map[string]bool{} // MIG instance UUIDs of the used devices
	for _, r := range pl.replicas() {
		for _, s := range r {
			for _, d := range s.Devices {
				used[d.ID] = true
				if m := d.Dev.MIG; m != nil && m.Instance != "" {
					usedMIG[m.Instance] = true
				}
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
			if !used[d.ID] && d.Dev.MemoryShared == first.MemoryShared && !sharesUsedMemory(d, usedMIG) {
				idle = append(idle, d.ID)
			}
		}
	}
	return idle
}

// sharesUsedMemory reports whether d is a MIG compute instance whose GPU
// instance's memory a used device holds (registry.MIG.SharesMemoryWith):
// the plan already fills that memory, so d is not idle room.
func sharesUsedMemory(d *device, usedMIG map[string]bool) bool {
	if m := d.Dev.MIG; m != nil {
		for _, u := range m.SharesMemoryWith {
			if usedMIG[u] {
				return true
			}
		}
	}
	return false
}

// explainIdle says which devices stay idle and what would use them: the
// chosen engine's own devices with more tensor parallelism or replicas;
// a device another default engine plans (a P40 below vLLM's floor, beside
// an H200) only in a plan of its own.
func explainIdle(ch *choice, idle []string) []string {
	if len(idle) == 0 {
		return nil
	}
	pl := &ch.Plan
	used := pl.devices()
	if pl.Offloaded {
		// The host stage is no device of the pool's kind.
		used = pl.accelerators()
	}
	what := "present"
	if ch.Devices != nil {
		what = "named"
	}
	same, others := splitByEngine(ch, idle)
	var hints []string
	if len(same) > 0 {
		hint := "replicas (data parallel) would serve more sequences on them"
		if pl.streamed() {
			// streamedOffloadAt: the engine's weight offload is per
			// GPU, planned without tensor parallelism or replicas.
			hint = fmt.Sprintf("%s's cpu_offload runs on one GPU, combined here with neither tensor parallelism nor replicas", pl.Pool.Budget.Engine.Title())
		} else if pl.Pool.tensorParallel() && pl.DP == 0 && pl.Costs.validTP(used+len(same)) && inPlanDomain(ch, same) {
			hint = fmt.Sprintf("tensor_parallel_size %d or replicas would use them (more KV room and speed, or more sequences)", used+len(same))
		}
		if len(others) > 0 {
			hint = strings.Join(same, ", ") + ": " + hint
		}
		hints = append(hints, hint)
	}
	hints = append(hints, others...)
	return []string{fmt.Sprintf("idle: %s of the %d %s %s %s %s unused: the plan needs %d; %s",
		strings.Join(idle, ", "), used+len(idle), what, pl.Pool.label(), nounOf(used+len(idle), "device"), stayOrStays(len(idle)), used, strings.Join(hints, "; "))}
}

// stayOrStays is the verb after a list of n idle devices: "cuda:1
// stays", "cuda:1, cuda:2 stay".
func stayOrStays(n int) string {
	if n == 1 {
		return "stays"
	}
	return "stay"
}

// splitByEngine splits idle device ids into those the plan's engine plans
// (same) and, for those another default engine plans, one phrase per
// device saying which (others).
func splitByEngine(ch *choice, idle []string) (same, others []string) {
	mine := ch.Plan.Pool.Budget.Engine.Name()
	byID := map[string]*device{}
	engineOf := map[string]string{}
	for _, p := range ch.Pools {
		for _, d := range p.Devices {
			byID[d.ID], engineOf[d.ID] = d, p.Budget.Engine.Name()
		}
	}
	for _, id := range idle {
		if e := engineOf[id]; e != "" && e != mine {
			others = append(others, fmt.Sprintf("%s is planned by %s, not %s: a plan of its own would use it", idWithName(id, byID[id]), e, mine))
			continue
		}
		if why := ch.LevelLeftOut[id]; why != "" {
			// A GPU that does not run the plan's level: the plan was
			// made on those that do (levelPool).
			others = append(others, why)
			continue
		}
		if d := byID[id]; d != nil {
			if why := engine.CannotRunDevice(ch.Plan.Pool.Budget.Engine, &d.Dev); why != "" {
				// A GPU below the named engine's floor: no layout of
				// this engine uses it (buildPools keeps it apart).
				others = append(others, fmt.Sprintf("%s runs nothing under %s: %s", idWithName(id, d), mine, why))
				continue
			}
		}
		same = append(same, id)
	}
	return same, others
}

// idWithName is a device's id with its registry name in parentheses, or
// the id alone where the registry gives no name (a CPU whose model name was
// not read), as devicesByName writes it.
func idWithName(id string, d *device) string {
	if d == nil || d.Dev.Name == "" {
		return id
	}
	return fmt.Sprintf("%s (%s)", id, d.Dev.Name)
}

// inPlanDomain reports whether every device of ids is in the high-bandwidth
// domain of the plan's first device, so that a larger tensor-parallel group
// could take them: MIG slices (no domain) and devices beyond the link
// cannot.
func inPlanDomain(ch *choice, ids []string) bool {
	dom := ch.Plan.Stages[0].Devices[0].Domain
	if dom < 0 {
		return false
	}
	want := map[string]bool{}
	for _, id := range ids {
		want[id] = true
	}
	for _, p := range ch.Pools {
		for _, d := range p.Devices {
			if want[d.ID] && d.Domain != dom {
				return false
			}
		}
	}
	return true
}
