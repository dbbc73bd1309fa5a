package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	json "github.com/goccy/go-json"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/cli"
)

// A refused plan's text printed no Memory line while its JSON answer has
// memory: what the refused level needs as on one device, the figure its
// refusal states (schema/plan.schema.json, memory.total_bytes). On the
// h200-vm fixture vLLM refuses Llama-3.1-405B at int4 (207.2 GiB against
// the 126.4 GiB vLLM may use of the H200); the text now states that need,
// its parts as --json has them, and the budget the refusal was judged
// against, as plan and suggest alike.
func TestRefusedPlanTextStatesTheNeedOfItsJSON(t *testing.T) {
	for _, cmd := range []string{"plan", "suggest"} {
		args := []string{cmd, "--model", "Llama-3.1-405B", "--engine", "vllm"}
		ans, _ := runJSON(t, withFixture(t, "h200-vm", append(args, "--json")...)...)
		require.Equal(t, false, ans["fits"], "the case's premise: nothing fits")
		m := ans["memory"].(map[string]any)
		size := func(k string) string { return cli.GiB(int64(m[k].(float64))) }
		want := "\nMemory needed (int4, as on one device): " + size("total_bytes") + " = weights " + size("weights_bytes") +
			" + KV cache " + size("kv_cache_bytes") + " + activations " + size("activations_bytes") +
			" + runtime overhead " + size("overhead_bytes") + "\n"

		r := runCLI(t, withFixture(t, "h200-vm", args...)...)
		require.Equal(t, 0, r.code, r.stderr)
		assert.Contains(t, r.stdout, want, cmd)
		assert.Contains(t, r.stdout, "needs "+size("total_bytes")+" on one device", "the need the refusal states")
		assert.Contains(t, r.stdout, "\nBudget: vllm; 0.9 of each device's total memory; the engine holds 4.5 GiB per device of it\n", cmd)
		assert.NotContains(t, r.stdout, "\nMemory (", "no plan's memory: there is no plan")
		assert.NotContains(t, r.stdout, "\nShards:", cmd)
		assert.Equal(t, 1, strings.Count(r.stdout, "Memory needed"), r.stdout)
	}
}

// A plan that cannot tell whether the model fits (fits null: the GPUs of
// known memory do not hold it and GPUs of unknown memory were left out)
// has the same JSON memory and budget as a refusal, the need its reason
// states, but its text printed neither the Memory needed line nor the
// Budget line the refusal's text has (DeepSeek-R1 on the dgx-h100 fixture
// with the memory of cuda:4-7 left out of its registry: int4 needs 330.0
// GiB). It prints them now, as for a refusal.
func TestUnknownFitTextStatesTheNeedOfItsJSON(t *testing.T) {
	reg, _ := runJSON(t, withFixture(t, "dgx-h100")...)
	for _, d := range reg["devices"].([]any) {
		dev := d.(map[string]any)
		if id := dev["id"].(string); id >= "cuda:4" && id <= "cuda:7" {
			delete(dev, "memory_bytes")
			delete(dev, "memory_free_bytes")
		}
	}
	b, err := json.Marshal(reg)
	require.NoError(t, err)
	file := filepath.Join(t.TempDir(), "registry.json")
	require.NoError(t, os.WriteFile(file, b, 0o600))

	for _, cmd := range []string{"plan", "suggest"} {
		args := []string{cmd, "--model", "DeepSeek-R1", "--registry", file}
		ans, _ := runJSON(t, append(args, "--json")...)
		require.Nil(t, ans["fits"], "the case's premise: cannot tell")
		m := ans["memory"].(map[string]any)
		size := func(k string) string { return cli.GiB(int64(m[k].(float64))) }
		want := "\nMemory needed (int4, as on one device): " + size("total_bytes") + " = weights " + size("weights_bytes") +
			" + KV cache " + size("kv_cache_bytes") + " + activations " + size("activations_bytes") +
			" + runtime overhead " + size("overhead_bytes") + "\n"

		r := runCLI(t, args...)
		require.Equal(t, 0, r.code, r.stderr)
		assert.Contains(t, r.stdout, "cannot tell whether it fits", cmd)
		assert.Contains(t, r.stdout, "needs "+size("total_bytes")+" on one device", "the need the reason states")
		assert.Contains(t, r.stdout, want, cmd)
		assert.Contains(t, r.stdout, "\nBudget: vllm (default for these devices); 0.9 of each device's total memory;", cmd)
		assert.NotContains(t, r.stdout, "\nShards:", cmd)
	}
}
