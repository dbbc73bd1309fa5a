package api

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"

	json "github.com/goccy/go-json"
	"github.com/stretchr/testify/require"
)

// llamaCPPMoEWeightsErrMax bounds the engine's weights of the MoE runs
// against the GGUF's tensors (llama_model_size).
const llamaCPPMoEWeightsErrMax = 0.02

// TestLlamaCPPCPUMoE replays the MoE runs of scripts/llamacpp-measure
// (issue 27: --n-cpu-moe and -ot on the CPU). On a CPU-only build every
// tensor is in host memory already, and an override to the CPU buffer type
// does not even change the buffer: llama.cpp then picks among the CPU's
// extra buffer types as it would without the override ("when overriding to
// a CPU buffer, consider the extra buffer types", src/llama-model-loader.cpp
// of 34af94cd), so the Q4_K experts are repacked into CPU_REPACK either way
// (its log: "buffer type overridden to CPU_REPACK"). Every buffer of the
// runs with --n-cpu-moe or -ot is the plain run's, and the engine's answer,
// checked against each run, is the same. The tokens/s are in the table
// (-v); their spread is the shared machine's load, not the override.
func TestLlamaCPPCPUMoE(t *testing.T) {
	rows := []string{"| model | quant | --n-cpu-moe | -ot | model buffers | weights (ours / GGUF tensors) | KV | compute (ours / llama.cpp) | peak RSS | prefill t/s | decode t/s |",
		"|---|---|---|---|---|---|---|---|---|---|---|"}
	var base *llamaCPPRun
	moved := 0
	for _, r := range loadLlamaCPPRuns(t) {
		if !r.Sparse || r.RSBytes > 0 || r.PrefillTokens == 0 {
			continue
		}
		name := fmt.Sprintf("%s %s n_cpu_moe=%v ot=%q", r.Model, r.Quant, r.NCPUMoE, r.OverrideTensor)
		require.Positive(t, r.DecodeTokensPerS, name)
		require.Positive(t, r.PrefillTokensPerS, name)

		out := PlanSharding(context.Background(), []byte(llamaCPPRequest(r)), NoEnv)
		var ans llamaCPPAnswer
		require.NoError(t, json.Unmarshal(out, &ans), string(out))
		require.True(t, ans.Fits, string(out))
		m := ans.Memory
		errW := relErr(m.Weights, r.ModelTensorBytes)
		require.LessOrEqual(t, math.Abs(errW), llamaCPPMoEWeightsErrMax, "%s: weights %d B, GGUF tensors %d B", name, m.Weights, r.ModelTensorBytes)
		require.LessOrEqual(t, math.Abs(relErr(m.KVCache, r.KVBytes)), 0.001, name)

		if !r.overridesTensors() {
			rr := r
			base = &rr
		} else {
			moved++
		}
		ncm := "-"
		if r.NCPUMoE != nil && *r.NCPUMoE >= 0 {
			ncm = fmt.Sprint(*r.NCPUMoE)
		}
		ot := "-"
		if r.OverrideTensor != "" {
			ot = "`" + r.OverrideTensor + "`"
		}
		rows = append(rows, fmt.Sprintf("| %s | %s | %s | %s | %s | %s / %s (%+.1f %%) | %s / %s | %s / %s | %s | %.2f | %.2f |",
			r.Model, r.Quant, ncm, ot, r.ModelBufferDetails, mib(m.Weights), mib(r.ModelTensorBytes), 100*errW,
			mib(m.KVCache), mib(r.KVBytes), mib(m.Activations), mib(r.ComputeBytes+r.OutputBytes), mib(r.PeakRSSBytes),
			r.PrefillTokensPerS, r.DecodeTokensPerS))
	}
	t.Logf("engine vs llama.cpp, MoE on the CPU backend with and without expert overrides:\n%s", strings.Join(rows, "\n"))
	require.NotNil(t, base, "a MoE speed run without overrides")
	require.Positive(t, moved, "a MoE speed run with --n-cpu-moe or -ot")
	// The overrides leave every buffer as it was on a CPU-only build.
	for _, r := range loadLlamaCPPRuns(t) {
		if r.Sparse && r.Model == base.Model && r.Quant == base.Quant && r.PrefillTokens > 0 && r.overridesTensors() {
			name := fmt.Sprintf("%s n_cpu_moe=%v ot=%q", r.Model, *r.NCPUMoE, r.OverrideTensor)
			require.Equal(t, base.ModelBufferDetails, r.ModelBufferDetails, name)
			require.Equal(t, base.ModelBytes, r.ModelBytes, name)
			require.Equal(t, base.KVBytes, r.KVBytes, name)
			require.Equal(t, base.ComputeBytes, r.ComputeBytes, name)
		}
	}
}
