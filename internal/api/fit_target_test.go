package api

import (
	"context"
	"regexp"
	"strconv"
	"strings"
	"testing"

	json "github.com/goccy/go-json"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A llama.cpp plan made within a memory fraction hands off to llama.cpp's
// own --fit: "replace -ngl, --tensor-split and -c with --fit on
// --fit-target 1024 ...". --fit-target is the memory --fit leaves free on
// each device (common/arg.cpp), so 1024 MiB let it fill a 140 GiB H200
// that the plan, asked for 0.3 of it, kept to 42 GiB: the hand-off undid
// the fraction. It now leaves at least what the plan leaves unused on the
// device (its free memory less the shard's usable memory), within the
// margin's part the engine allocates later out of it.
func TestFitHandOffKeepsTheMemoryFraction(t *testing.T) {
	detect := fixtureDetect(t, "h200-vm")
	var reg struct {
		Devices []struct {
			ID   string `json:"id"`
			Free int64  `json:"memory_free_bytes"`
		} `json:"devices"`
	}
	require.NoError(t, json.Unmarshal(Detect(context.Background(), []byte(detect), NoEnv), &reg))
	free := map[string]int64{}
	for _, d := range reg.Devices {
		free[d.ID] = d.Free
	}
	target := regexp.MustCompile(`--fit on --fit-target (\S+) `)
	for _, c := range []struct {
		fraction string
		fixed    bool // the plan is not capped by the fraction: the margin alone
	}{{`,"memory_fraction":0.3`, false}, {``, true}} {
		var a struct {
			Fits   bool `json:"fits"`
			Shards []struct {
				Device    string `json:"device_id"`
				Available int64  `json:"memory_available_bytes"`
			} `json:"shards"`
			Explanation []string `json:"explanation"`
		}
		out := PlanSharding(context.Background(), []byte(`{"model":"Qwen3-32B","engine":"llama.cpp"`+c.fraction+`,"detect":`+detect+`}`), NoEnv)
		require.NoError(t, json.Unmarshal(out, &a), "%s", out)
		require.True(t, a.Fits, "%s", out)
		require.Len(t, a.Shards, 1)
		m := target.FindStringSubmatch(strings.Join(a.Explanation, "\n"))
		require.NotNil(t, m, "%q", a.Explanation)
		mib, err := strconv.ParseInt(m[1], 10, 64)
		require.NoError(t, err, m[1])
		if c.fixed {
			assert.Equal(t, int64(1024), mib, "without a fraction --fit keeps its 1 GiB margin")
			continue
		}
		unused := free[a.Shards[0].Device] - a.Shards[0].Available
		assert.GreaterOrEqual(t, mib<<20, unused, "--fit-target %d MiB leaves less free than the plan's %d bytes", mib, unused)
		assert.LessOrEqual(t, mib<<20, unused+1<<30+1<<20, "--fit-target %d MiB", mib)
	}
}
