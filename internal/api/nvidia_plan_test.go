package api

import (
	"fmt"
	"path/filepath"
	"testing"

	json "github.com/goccy/go-json"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fixturePlan asks PlanSharding on a fixture machine (the options
// golden_test.go uses, with env for visibility variables).
func fixturePlan(t *testing.T, machine, request string, env map[string]string) planAnswer {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("..", "..", "testdata", "machines", machine))
	require.NoError(t, err)
	envJSON, err := json.Marshal(env)
	require.NoError(t, err)
	detect := fmt.Sprintf(`{"sysroot":%q,"path":%q,"env":%s,"cache_ttl_ms":0}`,
		filepath.Join(dir, "root"), filepath.Join(dir, "bin"), envJSON)
	req := request[:len(request)-1] + `,"detect":` + detect + `}`
	var a planAnswer
	out := PlanSharding([]byte(req), NoEnv)
	require.NoError(t, json.Unmarshal(out, &a), "%s", out)
	return a
}

type planAnswer struct {
	Fits   bool   `json:"fits"`
	Quant  string `json:"quant"`
	Shards []struct {
		DeviceID string `json:"device_id"`
	} `json:"shards"`
}

func (a planAnswer) devices() []string {
	var out []string
	for _, s := range a.Shards {
		out = append(out, s.DeviceID)
	}
	return out
}

// An 8B model fits the GPU of a DGX Spark (unified memory) and of a GH200
// (issue 13, "done means").
func TestPlan8BFitsUnifiedMemoryGPUs(t *testing.T) {
	for _, m := range []string{"dgx-spark-gb10", "gh200-480gb"} {
		a := fixturePlan(t, m, `{"model":{"name":"Llama-3.1-8B"}}`, nil)
		assert.True(t, a.Fits, m)
		assert.Equal(t, "bf16", a.Quant, m)
		assert.Equal(t, []string{"cuda:0"}, a.devices(), m)
	}
}
