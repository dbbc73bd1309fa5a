package plan

import (
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// fitRefusedFlags are the llama-server flags with which llama.cpp's --fit
// gives up rather than place the model itself: common_params_fit_impl
// throws "n_gpu_layers already set by user", "tensor_split already set by
// user" and "tensor_buft_overrides already set by user" (common/fit.cpp of
// unslothai/llama.cpp at 34af94cd, lines 377-400), and --n-cpu-moe,
// --cpu-moe and -ot all add to params.tensor_buft_overrides (common/arg.cpp
// at the same commit, --n-cpu-moe at line 2728). -c is the context --fit
// would choose.
var fitRefusedFlags = []string{"-ngl", "--n-cpu-moe", "--cpu-moe", "-ot", "--tensor-split", "-c"}

// TestFitHandOffNamesEveryFlagFitRefuses: the explanation's hand-off line
// ("llama.cpp can finish this placement with its own allocator: replace
// ... with --fit on ...") names every flag of the printed command that
// makes --fit abort. A MoE offload plan's command keeps experts on the
// host with --n-cpu-moe (and -ot for a part layer) or --cpu-moe; the line
// said "replace -ngl, --tensor-split and -c", so a user who did just that
// kept the override list, and --fit stopped with "model_params::
// tensor_buft_overrides already set by user, abort", leaving llama.cpp's
// defaults (every layer on the GPU, the trained context).
func TestFitHandOffNamesEveryFlagFitRefuses(t *testing.T) {
	cases := []struct {
		name, body string
		hostGiB    int64
		wantFlag   string
	}{
		{"n-cpu-moe", `{"model":{"name":"Qwen3-30B-A3B"},"engine":"llama.cpp","cpu_offload":true,"quant":"q8_0"}`, 64, "--n-cpu-moe"},
		{"cpu-moe", `{"model":{"name":"DeepSeek-R1"},"engine":"llama.cpp","cpu_offload":true,"quant":"q4_k_m"}`, 512, "--cpu-moe"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a := shard(t, request(t, c.body, reg(t, []registry.Device{rtx3090(), host(c.hostGiB << 30)})))
			require.True(t, a.Fits.Yes(), strings.Join(a.Explanation, "\n"))
			args := a.EngineArgs["llama.cpp"]
			require.Contains(t, args, c.wantFlag, "%v", args)
			line := explanationWith(a.Explanation, "llama.cpp can finish this placement")
			require.NotEmpty(t, line, strings.Join(a.Explanation, "\n"))
			replaced, _, ok := strings.Cut(strings.TrimPrefix(line, "llama.cpp can finish this placement with its own allocator: replace "), " with --fit on")
			require.True(t, ok, line)
			named := strings.FieldsFunc(strings.ReplaceAll(replaced, " and ", ","), func(r rune) bool { return r == ',' || r == ' ' })
			for _, f := range fitRefusedFlags {
				if slices.Contains(args, f) {
					assert.Contains(t, named, f, "the hand-off keeps %s, with which --fit aborts: %q (command %v)", f, line, args)
				}
			}
		})
	}
}

// TestFitHandOffNamesOnlyFlagsTheCommandHas: the hand-off named
// --tensor-split whatever the command, so a one-GPU plan's line (its
// command has --split-mode none and no --tensor-split) told the user to
// replace a flag that is not there. common_params_fit_impl checks the
// tensor split only with more than one device ("if (nd > 1)", common/fit.cpp
// of unslothai/llama.cpp at 34af94cd, lines 380-394), so the flag is named
// only where the command has it; -ngl and -c are always there.
func TestFitHandOffNamesOnlyFlagsTheCommandHas(t *testing.T) {
	a := shard(t, request(t, `{"model":{"name":"Qwen3-30B-A3B"},"engine":"llama.cpp","cpu_offload":true,"quant":"q8_0"}`, reg(t, []registry.Device{rtx3090(), host(64 << 30)})))
	require.True(t, a.Fits.Yes(), strings.Join(a.Explanation, "\n"))
	args := a.EngineArgs["llama.cpp"]
	require.Equal(t, "none", argValue(args, "--split-mode"), "%v", args)
	require.NotContains(t, args, "--tensor-split")
	line := explanationWith(a.Explanation, "llama.cpp can finish this placement")
	require.NotEmpty(t, line, strings.Join(a.Explanation, "\n"))
	replaced, _, ok := strings.Cut(strings.TrimPrefix(line, "llama.cpp can finish this placement with its own allocator: replace "), " with --fit on")
	require.True(t, ok, line)
	named := strings.FieldsFunc(strings.ReplaceAll(replaced, " and ", ","), func(r rune) bool { return r == ',' || r == ' ' })
	for _, f := range named {
		assert.Contains(t, args, f, "the hand-off names %s, which the command does not have: %q (command %v)", f, line, args)
	}
}
