package plan

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// A vLLM refusal on the H200 of testdata/machines/h200-vm stated two needs
// for int4 of Llama-3.1-405B: memory.total_bytes 204.0 GiB (the plain
// estimate: its activations and runtime overhead) and 207.2 GiB in the
// refusal text and the int4 levels row (vLLM's start-up charge: weights,
// KV cache, the profile run's activation peak, non-torch memory and CUDA
// graphs). llama.cpp on a GPU and every engine on the CPU disagreed the
// same way (the estimate's GPU overhead where the pool charges its own).
// A refused answer's memory is now what its refusal says the level needs
// as on one device, counted as the refusal counts it, its parts summing
// to its total, for plan and suggest alike.
func TestRefusedMemoryIsTheRefusalsNeed(t *testing.T) {
	for _, tc := range []struct {
		name, engine, model string
		devices             []registry.Device
	}{
		{"vllm/h200", "vllm", "Llama-3.1-405B", []registry.Device{h200VM(0)}},
		{"vllm/2xh200", "vllm", "DeepSeek-V3", []registry.Device{h200VM(0), h200VM(1)}},
		{"sglang/h200", "sglang", "Llama-3.1-405B", []registry.Device{h200VM(0)}},
		{"llama.cpp/h100", "llama.cpp", "Llama-3.1-405B", []registry.Device{h100(0)}},
		{"llama.cpp/cpu", "llama.cpp", "Llama-3.1-405B", []registry.Device{host(16 << 30)}},
		{"vllm/mi300x", "vllm", "DeepSeek-V3", []registry.Device{mi300x(0)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body := `{"model":{"name":"` + tc.model + `"},"engine":"` + tc.engine + `"}`
			a := shard(t, request(t, body, reg(t, tc.devices)))
			require.NotNil(t, a.Refusal, "the case's premise: nothing fits")
			require.Equal(t, RefusalMemory, a.Refusal.Code)
			assertRefusedMemory(t, a.Refusal.Text, a.Memory, a.Levels)

			s, err := SuggestQuant(request(t, body, reg(t, tc.devices)))
			require.NoError(t, err)
			require.NotNil(t, s.Refusal)
			assertRefusedMemory(t, s.Refusal.Text, s.Memory, s.Levels)
		})
	}
}

// assertRefusedMemory checks that memory m of an answer refused with text
// states the need text states and the refused level's row, and that its
// parts sum to it.
func assertRefusedMemory(t *testing.T, text string, m Memory, levels []LevelRow) {
	t.Helper()
	figures := needFigures(t, text)
	require.NotEmpty(t, figures, text)
	assert.Equal(t, fmt.Sprintf("%.1f GiB", figures[0].total), gib(m.TotalBytes), "memory.total_bytes against %q", text)
	assert.Equal(t, m.TotalBytes, m.WeightsBytes+m.KVCacheBytes+m.ActivationsBytes+m.OverheadBytes, "parts of %+v", m)
	var row *LevelRow
	for i := range levels {
		if strings.HasPrefix(text, levels[i].Quant+" ") {
			row = &levels[i]
		}
	}
	require.NotNil(t, row, "no level row for %q", text)
	assert.Equal(t, row.TotalBytes, m.TotalBytes, "the %s row and memory.total_bytes", row.Quant)
	assert.Equal(t, fmt.Sprintf("%.1f GiB", figures[0].parts["weights"]), gib(m.WeightsBytes), text)
}
