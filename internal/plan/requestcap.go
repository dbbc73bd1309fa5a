package plan

import "github.com/ai-hwaccel/ai-hwaccel/internal/engine"

// requestCap is the most requests one replica of plan pl runs at once by a
// limit of its engine's own beside the KV pool (engine.RequestCapper:
// SGLang's mamba state pool, sized from the static pool engine_expect
// reports), the least over the replica's stages, with the engine's words
// for it; ok false where the engine sets none, and for a plan with part of
// the model in host memory, whose pool the planner does not lay out as the
// engine does.
func requestCap(pl *planned, req *planning) (int, string, bool) {
	if pl.Pool == nil || pl.Offloaded || !pl.Pool.Budget.WorkspaceOutside {
		return 0, "", false
	}
	rc, ok := pl.Pool.Budget.Engine.(engine.RequestCapper)
	if !ok {
		return 0, "", false
	}
	fraction := planFraction(pl)
	least, why, found := 0, "", false
	for _, r := range pl.replicas() {
		for _, s := range r {
			if len(s.Devices) == 0 {
				continue
			}
			n, w, ok := rc.MaxRequests(req.Model, kvPoolOf(pl, s, fraction).Bytes, max(pl.TP, 1))
			if ok && (!found || n < least) {
				least, why, found = n, w, true
			}
		}
	}
	return least, why, found
}

// replicaRequests is the most requests each replica of pl runs at once,
// the pool's batch n under the engine's own cap (requestCap), and the
// engine's words where that cap binds ("" otherwise).
func replicaRequests(pl *planned, req *planning, n int) (int, string) {
	c, why, ok := requestCap(pl, req)
	if !ok || c >= n {
		return n, ""
	}
	return c, why
}
