package plan

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/calibration"
	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// TestPrefillValidatedOn: a plan's prefill figure carries its own
// statement, apart from the decode figure's: validated only in a cell whose
// held-out prompt rows meet PrefillBound at the median (PrefillHeldOut:
// today's CUDA build on Blackwell 12.0 with integer weights of the k-quant
// family, Hopper with k-quant, Q8_0 and 16-bit weights (the held-out H200
// records of llama.cpp 34af94cd), Apple GPUs, an x86 CPU with 16-bit
// weights), else "not validated" and why: Q8_0 (RTX 5090) and 16-bit
// weights (RTX 4090) on today's CUDA build, whose rows are Q4_0; a layer split; vLLM, whose held-out rows miss
// by a factor of 1.41; SGLang, fitted only; a GPU on the May 2024
// constants (AMD); k-quants on a CPU. A plan without a prefill figure has
// no statement.
func TestPrefillValidatedOn(t *testing.T) {
	rtx5090 := func(i int) registry.Device {
		d := gpu(registry.KindCUDA, i, "NVIDIA GeForce RTX 5090", 32607<<20, "12.0")
		d.Vendor = "nvidia"
		return d
	}
	rtx4090 := gpu(registry.KindCUDA, 0, "NVIDIA GeForce RTX 4090", 24564<<20, "8.9")
	rtx4090.Vendor = "nvidia"
	m2Ultra := registry.Device{ID: "metal:0", Kind: registry.KindMetal, Family: registry.KindMetal.Family(), Name: "Apple M2 Ultra",
		Vendor: "apple", Available: true, MemoryBytes: 192 << 30, MemoryUsableBytes: 144 << 30, MemoryShared: true, Cores: 76}
	cpu := registry.Device{ID: "cpu:0", Kind: registry.KindCPU, Family: registry.FamilyCPU, Name: "AMD EPYC 9654 96-Core Processor",
		Vendor: "amd", Available: true, MemoryBytes: 256 * gibBytes, Cores: 16}
	throughput := func(body string, devs ...registry.Device) *Throughput {
		a := shard(t, request(t, body, reg(t, devs)))
		require.True(t, a.Fits.Yes(), dump(t, a))
		require.NotNil(t, a.Throughput, dump(t, a))
		require.Positive(t, a.Throughput.PrefillTokensPerS, dump(t, a))
		return a.Throughput
	}

	validated := map[string]struct {
		t    *Throughput
		want []string
	}{
		"rtx 5090 q4_k_m": {throughput(`{"model":{"name":"llama-3.1-8b"},"quant":"q4_k_m","engine":"llama.cpp"}`, rtx5090(0)),
			[]string{"prefill_today.json", "GeForce Blackwell", "3 held-out rows, median |error| 7.7%"}},
		"m2 ultra q4_k_m": {throughput(`{"model":{"name":"llama-3.1-8b"},"quant":"q4_k_m","engine":"llama.cpp"}`, m2Ultra),
			[]string{"apple_today.json", "Apple GPUs", "kquant weights", "6 held-out rows, median |error| 18.7%"}},
		"m2 ultra fp16": {throughput(`{"model":{"name":"llama-3.1-8b"},"quant":"fp16","engine":"llama.cpp"}`, m2Ultra),
			[]string{"apple_today.json", "float weights"}},
		"cpu bf16": {throughput(`{"model":{"name":"llama-3.2-1b"},"quant":"bf16","engine":"llama.cpp"}`, cpu),
			[]string{"host_harness.json", "x86 CPUs", "float weights"}},
		// The k-quant cell's held-out rows: Llama-3.2-1B's Q4_K_M mix and
		// Qwen2.5-0.5B's Q4_K_M, replayed at their stored types.
		"cpu q4_k_m": {throughput(`{"model":{"name":"llama-3.2-1b"},"quant":"q4_k_m","engine":"llama.cpp"}`, cpu),
			[]string{"host_harness.json", "x86 CPUs", "kquant weights", "2 held-out rows, median |error| 7.3%"}},
		"h100 q4_k_m": {throughput(`{"model":{"name":"llama-3.1-8b"},"quant":"q4_k_m","engine":"llama.cpp"}`, h100(0)),
			[]string{"h200-speed-34af94cd", "Hopper", "kquant weights", "2 held-out rows, median |error| 7.1%"}},
		"h100 q8_0": {throughput(`{"model":{"name":"llama-3.1-8b"},"quant":"q8_0","engine":"llama.cpp"}`, h100(0)),
			[]string{"h200-speed-34af94cd", "Hopper", "q8 weights", "2 held-out rows, median |error| 3.1%"}},
		"h100 fp16": {throughput(`{"model":{"name":"llama-3.1-8b"},"quant":"fp16","engine":"llama.cpp"}`, h100(0)),
			[]string{"h200-speed-34af94cd", "Hopper", "float weights", "3 held-out rows, median |error| 13.3%"}},
	}
	h100q4 := validated["h100 q4_k_m"].t
	assert.False(t, strings.HasPrefix(h100q4.ValidatedOn, NotValidated), "decode on an H100 is validated: %s", h100q4.ValidatedOn)
	for name, c := range validated {
		v := c.t.PrefillValidatedOn
		assert.False(t, strings.HasPrefix(v, NotValidated), "%s: %s", name, v)
		for _, w := range c.want {
			assert.Contains(t, v, w, name)
		}
	}

	notValidated := map[string]struct {
		t   *Throughput
		why string
	}{
		"rtx 5090 q8_0":    {throughput(`{"model":{"name":"llama-3.1-8b"},"quant":"q8_0","engine":"llama.cpp"}`, rtx5090(0)), "no held-out prompt row of q8 weights"},
		"rtx 4090 fp16":    {throughput(`{"model":{"name":"llama-3.1-8b"},"quant":"fp16","engine":"llama.cpp"}`, rtx4090), "no held-out prompt row of float weights"},
		"rtx 5090 x2":      {throughput(`{"model":{"name":"llama-3.1-70b"},"quant":"q4_k_m","engine":"llama.cpp"}`, rtx5090(0), rtx5090(1)), "none splits the layers"},
		"m2 ultra q8_0":    {throughput(`{"model":{"name":"llama-3.1-8b"},"quant":"q8_0","engine":"llama.cpp"}`, m2Ultra), "no held-out prompt row of q8 weights on Apple GPUs"},
		"mi300x llama.cpp": {throughput(`{"model":{"name":"llama-3.1-8b"},"quant":"q4_k_m","engine":"llama.cpp"}`, mi300x(0)), "May 2024 build's constants"},
		"vllm":             {throughput(`{"model":{"name":"llama-3.1-8b"},"quant":"bf16","engine":"vllm"}`, h100(0)), calibration.ServingPromptHeldOut},
		"sglang":           {throughput(`{"model":{"name":"llama-3.1-8b"},"quant":"bf16","engine":"sglang"}`, h100(0)), "no held-out SGLang row"},
	}
	for name, c := range validated {
		t.Logf("%s: %s", name, c.t.PrefillValidatedOn)
	}
	for name, c := range notValidated {
		t.Logf("%s: %s", name, c.t.PrefillValidatedOn)
		v := c.t.PrefillValidatedOn
		assert.True(t, strings.HasPrefix(v, NotValidated), "%s: %s", name, v)
		assert.Contains(t, v, c.why, name)
	}

	unknown := gpu(registry.KindCUDA, 0, "Some Unreleased GPU", 24<<30, "")
	a := shard(t, request(t, `{"model":{"name":"llama-3.1-8b"},"quant":"q4_k_m","engine":"llama.cpp"}`, reg(t, []registry.Device{unknown})))
	require.NotNil(t, a.Throughput, dump(t, a))
	assert.Zero(t, a.Throughput.PrefillTokensPerS)
	assert.Empty(t, a.Throughput.PrefillValidatedOn, "no prefill figure, no statement")
}

// TestPrefillCellsHaveNames: every cell PrefillHeldOut or prefillNoHeldOut
// holds names its set's rows and its device class, so that a statement
// never reads with a blank.
func TestPrefillCellsHaveNames(t *testing.T) {
	var cells []PrefillCell
	for c := range PrefillHeldOut {
		cells = append(cells, c)
	}
	for c := range prefillNoHeldOut {
		cells = append(cells, c)
	}
	for _, c := range cells {
		assert.NotEmpty(t, prefillSetRows[c.Set], "%v", c)
		assert.NotEmpty(t, prefillClassNames[c.Class], "%v", c)
		assert.Contains(t, []string{WeightsFloat, WeightsQ8, WeightsKQuant}, c.Family, "%v", c)
	}
}

// TestPrefillPastTheBoundIsNotValidated: a cell whose held-out rows miss
// PrefillBound at the median (here the Blackwell cell's figures as if
// they missed by 25 %) states "not validated" with the rows and their
// median, not the figure as validated.
func TestPrefillPastTheBoundIsNotValidated(t *testing.T) {
	cell := PrefillCell{PrefillSetCUDAToday, archBlackwellGDDR, WeightsKQuant}
	was := PrefillHeldOut[cell]
	t.Cleanup(func() { PrefillHeldOut[cell] = was })
	PrefillHeldOut[cell] = PrefillCheck{Rows: 3, Median: 0.25}
	d := gpu(registry.KindCUDA, 0, "NVIDIA GeForce RTX 5090", 32607<<20, "12.0")
	d.Vendor = "nvidia"
	a := shard(t, request(t, `{"model":{"name":"llama-3.1-8b"},"quant":"q4_k_m","engine":"llama.cpp"}`, reg(t, []registry.Device{d})))
	require.NotNil(t, a.Throughput, dump(t, a))
	v := a.Throughput.PrefillValidatedOn
	assert.True(t, strings.HasPrefix(v, NotValidated), v)
	assert.Contains(t, v, "3 held-out rows of")
	assert.Contains(t, v, "miss by 25.0% at the median, past the 20%")
}
