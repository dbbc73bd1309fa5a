package plan

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// A level sized as a published file of its own mix (the catalog's
// size_mix) may need more than a better level sized by mainline
// llama.cpp's mix: Laguna-S-2.1 under llama.cpp on two H100s listed q4_k_m
// (Poolside's Q4_K_M, 96 GB with a Q8_0 signal path, per LocalAI's
// gallery) larger than q5_k_m with no reason on either row, and only the
// chosen level's explanation line named the file. The larger row now says
// it is sized as that file; a row of mainline's mix says nothing.
func TestLevelRowSizedAsAPublishedFileSaysSo(t *testing.T) {
	a := shard(t, request(t, `{"model":{"name":"Laguna-S-2.1"},"engine":"llama.cpp"}`, reg(t, []registry.Device{h100(0), h100(1)})))
	require.True(t, a.Fits.Yes(), a.Explanation)
	q4, q5 := lineOfLevel(a.Levels, "q4_k_m"), lineOfLevel(a.Levels, "q5_k_m")
	require.NotNil(t, q4)
	require.NotNil(t, q5)
	require.True(t, q4.Fits.Yes() && q5.Fits.Yes(), dump(t, a.Levels))
	require.Greater(t, q4.TotalBytes, q5.TotalBytes, "the file is larger than the better level's mainline mix")
	assert.Contains(t, q4.Reason, "sized as the published poolside/Laguna-S-2.1-GGUF laguna-s-2.1-Q4_K_M.gguf (96.00 GB, ")
	assert.Contains(t, q4.Reason, "Poolside's own mix")
	assert.Empty(t, q5.Reason, "q5_k_m is sized by mainline's mix")
}
