// What one planning request remembers across its passes (PlanSharding
// plans twice): answers that depend on the request only through what both
// passes share.

package plan

import (
	"slices"

	"github.com/ai-hwaccel/ai-hwaccel/internal/model"
	"github.com/ai-hwaccel/ai-hwaccel/internal/quant"
)

// search is what one of maxFitting's searches depends on besides the
// request's model, level sizes, KV cache and engine settings: the question
// (the longest context, or the largest batch at context ctx), its limit,
// and the plan's pool (the pool it restricts and its devices: a plan
// spread by the placement is on a pool of its own, made again in each
// pass), level, batch per replica, host offload and the devices of its
// distinct replicas.
type search struct {
	context   bool
	ctx       int // the context held fixed: 0 for a context search
	limit     int
	origin    *pool
	devices   []*device
	level     quant.Level
	batch     int
	offloaded bool
	units     [][]stage
}

// same reports whether a and b are the same search.
func (a *search) same(b *search) bool {
	return a.context == b.context && a.ctx == b.ctx && a.limit == b.limit && a.origin == b.origin && a.level == b.level &&
		a.batch == b.batch && a.offloaded == b.offloaded && slices.Equal(a.devices, b.devices) && sameDevices(a.units, b.units) &&
		(a.context || sameSplits(a.units, b.units))
}

// sameSplits reports whether two lists of replicas split the layers alike,
// stage by stage: a batch search holds the plan's split (maxFitting).
func sameSplits(a, b [][]stage) bool {
	return slices.EqualFunc(a, b, func(x, y []stage) bool {
		return slices.EqualFunc(x, y, func(s, t stage) bool { return s.Start == t.Start && s.End == t.End })
	})
}

// sameDevices reports whether two lists of replicas hold the same devices,
// stage by stage.
func sameDevices(a, b [][]stage) bool {
	return slices.EqualFunc(a, b, func(x, y []stage) bool {
		return slices.EqualFunc(x, y, func(s, t stage) bool { return slices.Equal(s.Devices, t.Devices) })
	})
}

// memo is what a request remembers. It is shared by the two passes of
// PlanSharding, whose requests differ only in the context; planning calls
// never share one.
type memo struct {
	searches searches
	// refusals is poolRefuses of a pool and a level.
	refusals map[poolLevel]string
	// runners is runnersOf of a pool and a level: one pool for both
	// passes, whose searches (keyed by pool) it then shares.
	runners map[poolLevel]*pool
}

type poolLevel struct {
	pool  *pool
	level quant.Level
}

// poolRefuses is poolRefuses(p, m, l), read through the memo: every level
// of every pass asks it of every pool, and it reads every device. The
// model is the request's, the same in every pass.
func (m *memo) poolRefuses(p *pool, mod *model.Model, l quant.Level) string {
	k := poolLevel{p, l}
	why, found := m.refusals[k]
	if !found {
		if m.refusals == nil {
			m.refusals = map[poolLevel]string{}
		}
		why = poolRefuses(p, mod, l)
		m.refusals[k] = why
	}
	return why
}

// searches remembers maxFitting's answers: the second pass of
// PlanSharding, at the chosen context, asks the longest context of the
// replicas fitContext asked it of in the first when the placement stays,
// and a batch search keyed by its context is asked again by the answer's
// maxima.
type searches struct {
	done []searched
}

type searched struct {
	key search
	n   int
}

// largest is the answer of search k, run by find unless it was run before.
func (s *searches) largest(k search, find func() int) int {
	for i := range s.done {
		if s.done[i].key.same(&k) {
			return s.done[i].n
		}
	}
	n := find()
	s.done = append(s.done, searched{key: k, n: n})
	return n
}

// runnersOf is runnersOf(req, p, l), read through the memo.
func (m *memo) runnersOf(req *planning, p *pool, l quant.Level) *pool {
	k := poolLevel{p, l}
	r, found := m.runners[k]
	if !found {
		if m.runners == nil {
			m.runners = map[poolLevel]*pool{}
		}
		r = runnersOf(req, p, l)
		m.runners[k] = r
	}
	return r
}
