package api

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/bench/benchreg"
	"github.com/ai-hwaccel/ai-hwaccel/internal/registry/regjson"
)

// TestPlanningLeavesTheSharedRegistryAlone plans every golden question on
// one registry from many goroutines at once: the registry is decoded once
// and shared (regjson.DecodeShared), so a planner that wrote to it would
// be a data race (go test -race) or change it (compared after) or change
// an answer (compared with the answer given alone).
func TestPlanningLeavesTheSharedRegistryAlone(t *testing.T) {
	regJSON := string(benchreg.RegistryJSON(16))
	entries := map[string]func(context.Context, []byte, Env) []byte{"plan": PlanSharding, "suggest": SuggestQuant, "train": EstimateTraining}
	var reqs [][]byte
	var entry []func(context.Context, []byte, Env) []byte
	for _, r := range goldenRequests {
		reqs = append(reqs, []byte(strings.TrimSuffix(r.body, "}")+`,"registry":`+regJSON+`}`))
		entry = append(entry, entries[r.entry])
	}
	reqs = append(reqs, []byte(`{"model":{"name":"Llama-3.1-405B"},"cluster":[`+regJSON+`,`+regJSON+`]}`))
	entry = append(entry, PlanSharding)
	want := make([]string, len(reqs))
	for i, req := range reqs {
		want[i] = string(entry[i](context.Background(), req, NoEnv))
		require.NotContains(t, want[i], `"error"`, string(req))
	}
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := 0; k < 3; k++ {
				for i := range reqs {
					j := (i + g) % len(reqs)
					assert.Equal(t, want[j], string(entry[j](context.Background(), reqs[j], NoEnv)))
				}
			}
		}()
	}
	wg.Wait()
	shared, err := regjson.DecodeShared([]byte(regJSON))
	require.NoError(t, err)
	fresh, err := regjson.Decode([]byte(regJSON))
	require.NoError(t, err)
	assert.Equal(t, fresh, shared, "planning changed the shared registry")
}
