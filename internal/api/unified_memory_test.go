package api

import (
	"context"
	"testing"

	json "github.com/goccy/go-json"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// An 8B model fits the Radeon 8060S of a 128 GB Strix Halo: its usable
// memory is the 96 GiB GTT window ROCm allocates from, not the 4 GiB BIOS
// carve-out (testdata/machines/strix-halo-128gb/README.md). A GPU sharing
// host memory is planned for llama.cpp, which keeps 1 GiB free on it
// (plan/budget.go). The detect options are the golden test's.
func TestPlanFitsStrixHalo8B(t *testing.T) {
	dir := fixture("strix-halo-128gb")
	det := `"detect":{"sysroot":"` + dir + `/root","path":"` + dir + `/bin","env":{},"cache_ttl_ms":0}`
	out := PlanSharding(context.Background(), []byte(`{"model":{"name":"Llama-3.1-8B"},`+det+`}`), emptyEnv)
	require.Equal(t, "", errorCode(t, out), string(out))
	var ans struct {
		Fits   bool   `json:"fits"`
		Quant  string `json:"quant"`
		Shards []struct {
			DeviceID             string `json:"device_id"`
			MemoryAvailableBytes int64  `json:"memory_available_bytes"`
		} `json:"shards"`
	}
	require.NoError(t, json.Unmarshal(out, &ans))
	assert.True(t, ans.Fits, string(out))
	require.Len(t, ans.Shards, 1)
	assert.Equal(t, "rocm:0", ans.Shards[0].DeviceID)
	assert.Equal(t, int64(95<<30), ans.Shards[0].MemoryAvailableBytes, "the 96 GiB window less llama.cpp's --fit margin")
}
