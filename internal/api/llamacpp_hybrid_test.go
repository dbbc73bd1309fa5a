package api

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strings"
	"testing"

	json "github.com/goccy/go-json"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/model"
)

// llamaCPPLargeRegistry is one CPU with room for the largest GGUF measured
// (Qwen3-Next-80B-A3B at F16, 148 GiB, written sparse): the hybrid runs are
// compared component by component, not for whether they fit 24 GiB.
const llamaCPPLargeRegistry = `{"schema_version":1,"devices":[{"id":"cpu:0","kind":"cpu","family":"cpu","index":0,` +
	`"vendor":"amd","name":"AMD EPYC","available":true,"memory_bytes":549755813888,"memory_free_bytes":549755813888,"cores":2}]}`

// llamaCPPStateErrMax is issue 25's bound: the recurrent state and the KV
// cache of a measured hybrid model within 2 % of llama.cpp's buffers.
const llamaCPPStateErrMax = 0.02

// llamaCPPLogHalfStep is half the resolution of llama.cpp's buffer log
// lines ("%8.2f MiB"): a recorded buffer is its logged value ± this.
const llamaCPPLogHalfStep = 0.005 * (1 << 20)

// relErrLogged is relErr against a buffer known to llama.cpp's log
// resolution: 0 when pred lies within the logged value's rounding interval,
// else the error to the interval's nearer end. It matters for small buffers
// only: LFM2-1.2B's recurrent state is 0.156 MiB, logged as 0.16 (+2.4 %).
func relErrLogged(pred, logged int64) float64 {
	lo, hi := float64(logged)-llamaCPPLogHalfStep, float64(logged)+llamaCPPLogHalfStep
	p := float64(pred)
	switch {
	case p < lo:
		return (p - lo) / lo
	case p > hi:
		return (p - hi) / hi
	}
	return 0
}

// TestLlamaCPPRecurrentStateAndKV replays the runs of hybrid models
// (attention layers beside Mamba2, gated DeltaNet or short-convolution
// layers) recorded by scripts/llamacpp-measure: llama.cpp keeps the
// attention layers' cache in its KV buffer and the mixers' convolution and
// SSM states in a separate recurrent-state (RS) buffer, one cell per
// sequence, in F32. The engine's KV answer is both; its recurrent part is
// the model's state elements at 4 bytes (quant.KVCacheBytes), so each part
// and the sum are checked. Run with -v for the table.
func TestLlamaCPPRecurrentStateAndKV(t *testing.T) {
	archs := map[string]bool{}
	rows := []string{"| model | arch | quant | ctx | fa | KV | KV (ours / llama.cpp) | RS (ours / llama.cpp) | KV+RS error | weights | compute (ours / llama.cpp) |",
		"|---|---|---|---|---|---|---|---|---|---|---|"}
	for _, r := range loadLlamaCPPRuns(t) {
		if r.RSBytes == 0 || r.PrefillTokens > 0 || r.overridesTensors() {
			continue
		}
		name := fmt.Sprintf("%s %s ctx=%d fa=%v kv=%s", r.Model, r.Quant, r.ContextLength, r.FlashAttention, r.CacheTypeK)
		m := model.Lookup(r.Model)
		require.NotNil(t, m, name)
		require.Positive(t, m.RecurrentStateElements(), "%s: the catalog model has no recurrent layer", name)
		archs[r.Architecture] = true

		out := PlanSharding(context.Background(), []byte(llamaCPPRequestOn(r, llamaCPPLargeRegistry)), NoEnv)
		var ans llamaCPPAnswer
		require.NoError(t, json.Unmarshal(out, &ans), string(out))
		require.True(t, ans.Fits, string(out))

		rs := int64(math.Ceil(m.RecurrentStateElements() * 4)) // F32 r and s cells, one sequence
		kv := ans.Memory.KVCache - rs
		measuredKV := r.KVBytes + r.KVSWABytes
		errRS, errKV := relErrLogged(rs, r.RSBytes), relErrLogged(kv, measuredKV)
		errSum := relErr(ans.Memory.KVCache, measuredKV+r.RSBytes)
		fa := "off"
		if r.FlashAttention {
			fa = "on"
		}
		rows = append(rows, fmt.Sprintf("| %s | %s | %s | %d | %s | %s | %s / %s (%+.2f %%) | %.2f / %.2f MiB (%+.2f %%) | %+.2f %% | %+.1f %% | %s / %s |",
			r.Model, r.Architecture, r.Quant, r.ContextLength, fa, r.CacheTypeK, mib(kv), mib(measuredKV), 100*errKV,
			float64(rs)/(1<<20), float64(r.RSBytes)/(1<<20), 100*errRS, 100*errSum, 100*relErr(ans.Memory.Weights, r.ModelBytes),
			mib(ans.Memory.Activations), mib(r.ComputeBytes+r.OutputBytes)))
		require.LessOrEqual(t, math.Abs(errRS), llamaCPPStateErrMax, "%s: recurrent state %d B, llama.cpp %d B", name, rs, r.RSBytes)
		require.LessOrEqual(t, math.Abs(errKV), llamaCPPStateErrMax, "%s: KV cache %d B, llama.cpp %d B", name, kv, measuredKV)
		require.LessOrEqual(t, math.Abs(errSum), llamaCPPStateErrMax, name)
	}
	names := make([]string, 0, len(archs))
	for a := range archs {
		names = append(names, a)
	}
	sort.Strings(names)
	t.Logf("engine vs llama.cpp KV and recurrent-state buffers, architectures %s:\n%s", strings.Join(names, ", "), strings.Join(rows, "\n"))
	// issue 25 item 4: at least three hybrid or recurrent architectures.
	require.GreaterOrEqual(t, len(archs), 3, "hybrid architectures measured: %v", names)
}
