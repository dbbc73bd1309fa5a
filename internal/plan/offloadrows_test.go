package plan

import (
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The levels table marked only the level chosen with cpu_offload while the
// explanation's published: line said another "also fits" (offloaded):
// DeepSeek-R1 under llama.cpp with cpu_offload on the h200-vm fixture
// chose q2_k (unsloth publishes it) and said "published: iq3_xs (254.9
// GiB ...) also fits but no published IQ3_XS GGUF of this model is known",
// while iq3_xs's row read fits false with no strategy, as q3_k_m's, which
// fits nowhere. Every level that fits offloaded, and only those, now
// carries the strategy cpu_offload (its reason still says why it does not
// fit on the accelerators alone).
func TestOffloadRowsMarkEveryLevelThatFitsOffloaded(t *testing.T) {
	a := shard(t, deepSeekR1WithGGUFs(t, h200BesideHostRAM(t), unslothR1Types...))
	require.True(t, a.Fits.Yes(), a.Explanation)
	require.Equal(t, StrategyOffload, a.Strategy)
	chosen := lineOfLevel(a.Levels, a.Quant)
	require.NotNil(t, chosen)
	assert.Equal(t, StrategyOffload, chosen.Strategy, "the level chosen")
	assert.Equal(t, FitNo, chosen.Fits, "it does not fit on the accelerators alone")

	var also string
	for _, l := range a.Explanation {
		if strings.HasPrefix(l, "published: ") && strings.Contains(l, " also fits but ") {
			also = l
		}
	}
	require.NotEmpty(t, also, "%q", a.Explanation)
	m := regexp.MustCompile(`^published: ([a-z0-9_]+) \(`).FindStringSubmatch(also)
	require.NotNil(t, m, also)
	row := lineOfLevel(a.Levels, m[1])
	require.NotNil(t, row, "the level the published: line names is in the table")
	assert.Equal(t, StrategyOffload, row.Strategy, "%s: %s", m[1], also)
	assert.NotEmpty(t, row.Reason, "it keeps why it does not fit on the accelerators alone")

	// q3_k_m (298.1 GiB) does not fit the H200 and the host's RAM together.
	q3 := lineOfLevel(a.Levels, "q3_k_m")
	require.NotNil(t, q3)
	assert.Empty(t, q3.Strategy, "a level that fits nowhere keeps no strategy")
	assert.Equal(t, FitNo, q3.Fits)
}
