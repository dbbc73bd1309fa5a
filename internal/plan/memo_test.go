package plan

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/ai-hwaccel/ai-hwaccel/internal/quant"
)

// A remembered search answers only the same question on the same devices:
// the pool a restricted pool was cut from and its devices, the context a
// batch search holds, the replicas' devices stage by stage.
func TestSearchesAnswerOnlyTheSameSearch(t *testing.T) {
	ds := []*device{{ID: "cuda:0"}, {ID: "cuda:1"}, {ID: "cuda:2"}, {ID: "cuda:3"}}
	root := &pool{Devices: ds}
	sub := restrict(root, map[*device]bool{ds[0]: true, ds[1]: true}, ds[:2])
	again := restrict(root, map[*device]bool{ds[0]: true, ds[1]: true}, append([]*device(nil), ds[:2]...))
	unit := func(devs ...*device) [][]stage { return [][]stage{{{Devices: devs}}} }
	base := search{context: false, ctx: 4096, limit: 4096, origin: sub.origin(), devices: sub.Devices, level: quant.BF16, batch: 1, units: unit(ds[0], ds[1])}

	var s searches
	runs := 0
	find := func(n int) func() int { return func() int { runs++; return n } }
	assert.Equal(t, 7, s.largest(base, find(7)))

	same := base
	same.origin, same.devices, same.units = again.origin(), again.Devices, unit(ds[0], ds[1])
	assert.Equal(t, 7, s.largest(same, find(8)), "the same devices in new slices of a pool cut again")
	assert.Equal(t, 1, runs)

	for name, k := range map[string]search{
		"another context":  func() search { k := base; k.ctx = 8192; return k }(),
		"a context search": func() search { k := base; k.context, k.ctx = true, 0; return k }(),
		"another pool":     func() search { k := base; k.origin, k.devices = root, root.Devices; return k }(),
		"other devices":    func() search { k := base; k.units = unit(ds[2], ds[3]); return k }(),
		"two stages":       func() search { k := base; k.units = [][]stage{{{Devices: ds[:1]}, {Devices: ds[1:2]}}}; return k }(),
		"another level":    func() search { k := base; k.level = quant.FP8; return k }(),
		"another batch":    func() search { k := base; k.batch = 2; return k }(),
		"host offload":     func() search { k := base; k.offloaded = true; return k }(),
	} {
		before := runs
		assert.Equal(t, 9, s.largest(k, find(9)), name)
		assert.Equal(t, before+1, runs, name)
	}
}
