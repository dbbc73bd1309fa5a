package main

import (
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// memoryLine is the Memory line of a plan's or suggestion's text.
func memoryLineOf(t *testing.T, out string) string {
	t.Helper()
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "Memory") {
			return l
		}
	}
	require.Failf(t, "no Memory line", "%s", out)
	return ""
}

// A vLLM or SGLang plan's Memory line counts the KV cache of the batch it
// was asked (8 sequences of 32768 tokens of Llama-3.1-8B, 32 GiB, as
// --json's memory.kv_cache_bytes and as llama.cpp's plan of the same
// request count it) and says, on the same line, that the engine's pool
// takes the rest of its budget, so that the figure is not read as the
// engine's whole allocation. On the H200 fixture.
func TestPagedMemoryLineCountsTheBatch(t *testing.T) {
	for eng, title := range map[string]string{"vllm": "vLLM", "sglang": "SGLang"} {
		args := []string{"plan", "--model", "Llama-3.1-8B", "--engine", eng, "--batch", "8", "--context", "32k"}
		ans, _ := runJSON(t, withFixture(t, "h200-vm", append(args, "--json")...)...)
		require.Equal(t, true, ans["fits"], eng)
		mem := ans["memory"].(map[string]any)
		assert.EqualValues(t, int64(32<<30), mem["kv_cache_bytes"], eng)
		assert.EqualValues(t, 8, mem["kv_cache_sequences"], eng)
		up := int(ans["max_batch_size"].(float64))
		require.Greater(t, up, 8, eng)

		text := runCLI(t, withFixture(t, "h200-vm", args...)...)
		require.Equal(t, 0, text.code, text.stderr)
		assert.Contains(t, memoryLineOf(t, text.stdout),
			" + KV cache 32.0 GiB (8 sequences of 32768; "+title+"'s pool takes the rest of its budget: up to "+strconv.Itoa(up)+") + ", eng)

		// suggest reports the same memory and says the same.
		s := runCLI(t, withFixture(t, "h200-vm", "suggest", "--model", "Llama-3.1-8B", "--engine", eng, "--batch", "8", "--context", "32k")...)
		require.Equal(t, 0, s.code, s.stderr)
		assert.Contains(t, memoryLineOf(t, s.stdout), " + KV cache 32.0 GiB (8 sequences; "+title+"'s pool takes the rest of its budget) + ", eng)
	}
}

// A batch above what the pool holds at full context: the Memory line counts
// the sequences the pool holds and says so.
func TestPagedMemoryLineCountsWhatThePoolHolds(t *testing.T) {
	args := []string{"plan", "--model", "Llama-3.1-8B", "--engine", "vllm", "--batch", "64", "--context", "32k"}
	ans, _ := runJSON(t, withFixture(t, "h200-vm", append(args, "--json")...)...)
	n := int(ans["max_batch_size"].(float64))
	require.Less(t, n, 64)
	text := runCLI(t, withFixture(t, "h200-vm", args...)...)
	require.Equal(t, 0, text.code, text.stderr)
	assert.Contains(t, memoryLineOf(t, text.stdout), " sequences of 32768, all vLLM's pool holds at once) + ")
	assert.Contains(t, memoryLineOf(t, text.stdout), "("+strconv.Itoa(n)+" sequences of 32768")
}

// llama.cpp reserves every slot's cache: its Memory line has no note.
func TestLlamaCppMemoryLineHasNoPoolNote(t *testing.T) {
	text := runCLI(t, withFixture(t, "h200-vm", "plan", "--model", "Llama-3.1-8B", "--engine", "llama.cpp", "--batch", "8", "--context", "32k")...)
	require.Equal(t, 0, text.code, text.stderr)
	line := memoryLineOf(t, text.stdout)
	assert.Contains(t, line, " + KV cache 32.0 GiB + ")
}
