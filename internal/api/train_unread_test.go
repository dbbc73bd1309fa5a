package api

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestTrainingLeavesTheInferenceMembersUnread: include/ai_hwaccel.h and
// docs/requests.md list the request members hwaccel_estimate_training
// checks but does not read (a host sends one request to the three planning
// functions); the top-level flash_attention is one of them, which a user
// setting it for training had no way to learn. Each listed member leaves
// the answer as it is, and each is listed in both places.
func TestTrainingLeavesTheInferenceMembersUnread(t *testing.T) {
	unread := map[string]string{
		"quant": `"int4"`, "engine": `"vllm"`, "engine_version": `"0.11.0"`, "kv_cache_dtype": `"fp8"`,
		"flash_attention": `false`, "cpu_offload": `true`, "include_cpu": `true`, "placement": `"fewest"`,
		"draft_model": `"Qwen3-0.6B"`, "mmproj": `{"size_bytes":900000000}`,
	}
	header, err := os.ReadFile(filepath.Join("..", "..", "include", "ai_hwaccel.h"))
	require.NoError(t, err)
	docs, err := os.ReadFile(filepath.Join("..", "..", "docs", "requests.md"))
	require.NoError(t, err)
	hText := strings.Join(strings.Fields(strings.ReplaceAll(string(header), " * ", " ")), " ")
	hAt := strings.Index(hText, "hwaccel_estimate_training checks but does not read")
	require.Positive(t, hAt, "the header says what training does not read")
	dText := strings.Join(strings.Fields(string(docs)), " ")
	dAt := strings.Index(dText, "It checks, but does not read,")
	require.Positive(t, dAt, "docs/requests.md says what training does not read")
	for _, machine := range []string{"h200-vm", "slimbook-hero-rtx4060-igpu"} {
		base := `{"model":"Llama-3.1-8B","training":{"method":"full"},"detect":` + fixtureDetect(t, machine)
		want := EstimateTraining(context.Background(), []byte(base+`}`), NoEnv)
		require.NotContains(t, string(want), `"error"`)
		for member, value := range unread {
			got := EstimateTraining(context.Background(), []byte(base+`,"`+member+`":`+value+`}`), NoEnv)
			assert.JSONEq(t, string(want), string(got), "%s on %s", member, machine)
		}
	}
	for member := range unread {
		assert.Contains(t, hText[hAt:hAt+600], `"`+member+`"`, "header lists %s", member)
		assert.Contains(t, dText[dAt:dAt+700], "`"+member+"`", "docs list %s", member)
	}
}
