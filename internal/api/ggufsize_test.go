package api

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	json "github.com/goccy/go-json"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/model"
	"github.com/ai-hwaccel/ai-hwaccel/internal/quant"
)

// On a DGX Spark, where llama.cpp is the default engine, int4 was sized as
// generic 4-bit weights (114.6 GiB for Qwen3-235B-A22B) and said to fit
// the 119.7 GiB GPU, while the printed command loads the Q4_K_M GGUF
// (132.3 GiB): it would not load. With no engine named, int4 is sized as
// the Q4_K_M file the command loads, keeps its contract name, and the
// explanation says which GGUF type it is sized as.
func TestDefaultLlamaCPPSizesInt4AsTheLoadedGGUF(t *testing.T) {
	dir, err := filepath.Abs(filepath.Join("..", "..", "testdata", "machines", "dgx-spark-gb10"))
	require.NoError(t, err)
	req := `{"model":{"name":"Qwen3-235B-A22B"},"quant":"int4","detect":{"sysroot":"` + filepath.Join(dir, "root") +
		`","path":"` + filepath.Join(dir, "bin") + `","cache_ttl_ms":0}}`
	var a struct {
		Fits   bool `json:"fits"`
		Levels []struct {
			Quant string `json:"quant"`
		} `json:"levels"`
		Memory struct {
			WeightsBytes int64 `json:"weights_bytes"`
		} `json:"memory"`
		Explanation []string `json:"explanation"`
	}
	out := PlanSharding(context.Background(), []byte(req), NoEnv)
	require.NoError(t, json.Unmarshal(out, &a), "%s", out)

	m := model.Lookup("Qwen3-235B-A22B")
	require.NotNil(t, m)
	q4km := quant.WeightsBytes(m, quant.INT4.LlamaCPPLevel())
	require.Greater(t, q4km, int64(120<<30), "the Q4_K_M file outweighs the device")
	require.Len(t, a.Levels, 1)
	assert.Equal(t, "int4", a.Levels[0].Quant, "the answer keeps the contract level's name")
	assert.False(t, a.Fits, "a 132 GiB Q4_K_M file does not fit a 119.7 GiB GPU")
	assert.Equal(t, q4km, a.Memory.WeightsBytes, "weights sized as the GGUF the command loads")
	assert.True(t, strings.Contains(strings.Join(a.Explanation, "\n"), "int4 is sized as the GGUF type Q4_K_M"), "%q", a.Explanation)
}
