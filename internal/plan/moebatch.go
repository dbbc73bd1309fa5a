package plan

import (
	"fmt"
	"math"
)

// batchExpertShare is the share of a MoE layer's routed experts a decode
// step of batch tokens reads, if each token picks its experts uniformly
// and independently: 1 - (1 - a)^batch, a = ExpertActive (experts per
// token / experts), a itself at one token; 0 for a dense model. The
// expected number of distinct experts among batch draws of k of E
// (E (1 - (1 - k/E)^batch)); real routers are skewed, so fewer distinct
// experts are the rule and this is an upper estimate.
func (c *costs) batchExpertShare(batch int) float64 {
	a := c.ExpertActive
	if c.ExpertLayerWeights <= 0 || a <= 0 || a >= 1 {
		return 0
	}
	return 1 - math.Pow(1-a, float64(max(batch, 1)))
}

// batchExpertReads is the routed-expert bytes one device of a stage of
// layers [start, end) split over tp devices reads in a decode step of
// batch tokens beyond what one token reads (ActiveRatio counts one
// token's): each MoE layer reads every expert any of the tokens routes to
// (a fused MoE kernel streams each used expert once a step), the share
// batchExpertShare of them. The data behind it:
// internal/calibration/data/serving_concurrency.json (point 5 of its
// description; docs/accuracy.md, "Serving engines at concurrency above 1").
func (c *costs) batchExpertReads(start, end, tp, batch int) float64 {
	if tp < 1 {
		return 0
	}
	return c.expertsIn(start, end) / float64(tp) * c.batchExtraShare(batch)
}

// batchExtraShare is the share of a MoE layer's routed experts a decode
// step of batch tokens reads beyond one token's (batchExpertShare less
// ExpertActive); 0 at one token and for a dense model.
func (c *costs) batchExtraShare(batch int) float64 {
	if batch <= 1 {
		return 0
	}
	share := c.batchExpertShare(batch)
	if share <= c.ExpertActive {
		return 0
	}
	return share - c.ExpertActive
}

// batchExpertNote is the assumption of a MoE plan decoding batch sequences
// a step.
func (c *costs) batchExpertNote(batch int) string {
	return fmt.Sprintf("MoE at %d sequences a step: each layer reads the routed experts any of them routes to, %.0f%% of its experts under uniform routing (one sequence reads %.1f%%); real routing is skewed, so this is an upper estimate of the expert reads",
		batch, c.batchExpertShare(batch)*100, c.ExpertActive*100)
}
