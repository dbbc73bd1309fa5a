package api

import (
	"context"
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
	out := PlanSharding(context.Background(), []byte(req), NoEnv)
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

// A MIG slice is planned as its slice: 70B fp8 does not fit one 1g.10gb
// instance of the nvidia-mig H100 (it "fit" the whole 80 GB GPU before), and
// 8B bf16 fits one 3g.40gb instance of the A100 PCIe.
func TestPlanMIGSliceIsItsSlice(t *testing.T) {
	oneG := map[string]string{"CUDA_VISIBLE_DEVICES": "MIG-00000002-0000-0000-0000-000000000002"}
	a := fixturePlan(t, "nvidia-mig", `{"model":{"name":"Llama-3.3-70B-Instruct"},"quant":"fp8"}`, oneG)
	assert.False(t, a.Fits)

	a = fixturePlan(t, "nvidia-mig", `{"model":{"name":"Llama-3.1-8B"},"quant":"int4"}`, oneG)
	assert.True(t, a.Fits)
	assert.Equal(t, []string{"cuda:1"}, a.devices(), "the slice, never the parent cuda:0")

	a = fixturePlan(t, "a100-80gb-pcie-mig-2x3g", `{"model":{"name":"Llama-3.1-8B"}}`, nil)
	assert.True(t, a.Fits)
	assert.Equal(t, "bf16", a.Quant)
	require.Len(t, a.Shards, 1)
	assert.NotEqual(t, "cuda:0", a.Shards[0].DeviceID, "the parent GPU in MIG mode is not planned on")
}
