package plan

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The placement line compares layouts at the plan's context, while a plan
// whose context was chosen states its speed at a KV depth of 4096
// (chosenSpeedDepth). On eight H100s Qwen3-30B-A3B printed "Throughput:
// decode 187 tokens/s" beside "placement: TP8 ... (176.2 against 121 tokens/s
// per sequence)" for the same TP8 layout, with nothing saying the second is
// at the full 40960-token depth. The placement line now names its depth, and
// its figure for the chosen layout is the full-depth decode the assumptions
// give.
func TestPlacementLineSaysItsDepth(t *testing.T) {
	a := shard(t, request(t, `{"model":{"name":"Qwen3-30B-A3B"}}`, eightH100(t, false)))
	require.True(t, a.Fits.Yes())
	require.NotNil(t, a.Throughput)
	var placement, full string
	for _, l := range a.Explanation {
		if strings.HasPrefix(l, "placement: ") {
			placement = l
		}
	}
	for _, l := range a.Throughput.Assumptions {
		if strings.HasPrefix(l, "speeds are stated at a KV depth of 4096") {
			full = l
		}
	}
	require.NotEmpty(t, placement, dump(t, a.Explanation))
	require.NotEmpty(t, full, dump(t, a.Throughput.Assumptions))
	ctx := a.MaxContextLength
	require.Greater(t, ctx, 4096)
	assert.Contains(t, placement, fmt.Sprintf("at a KV depth of %d tokens per sequence", ctx), placement)

	m := regexp.MustCompile(`at that full depth decode is ([0-9.]+) tokens/s`).FindStringSubmatch(full)
	require.NotNil(t, m, full)
	assert.Contains(t, placement, "("+m[1]+" against", "the chosen layout's figure is the full-depth decode: %s", placement)
}
