package plan

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/model"
	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// moeFitRow is the name of a Qwen3-30B-A3B file of
// internal/calibration/data/llamacpp-cuda-h200-fit (Q4_K_M; the data's
// README): Qwen3-30B-A3B-cardCARD[-cCTX].txt.
var moeFitRow = regexp.MustCompile(`^(Qwen3-30B-A3B)-card(\d+)(?:-c(\d+))?\.txt$`)

// hostExpertTensors counts the routed-expert tensors (ffn_down_exps,
// ffn_gate_exps, ffn_up_exps) a llama.cpp command line keeps on the CPU in
// a model of layers layers: --n-cpu-moe N (every layer below N), and each
// -ot pattern, as llama.cpp's --fit writes them (get_overflow_pattern in
// common/fit.cpp of ggml-org/llama.cpp: a whole layer's experts
// "blk\.N\.ffn_(up|down|gate_up|gate)_(ch|)exps", a partial layer's
// "blk\.N\.ffn_down.*" or "blk\.N\.ffn_(gate|gate_up|down).*") and as this
// planner writes them (engine.PartialExpertOverride). A pattern for a layer
// index the model does not have matches no tensor: --fit counts the output
// layer as layer n_layer and names it when it overflows the layers after
// the GPU's (set_ngl_tensor_split_tbo). It also returns the layers with at
// least one expert tensor on the CPU.
func hostExpertTensors(t *testing.T, args []string, layers int) (tensors, touched int) {
	t.Helper()
	if n := argValue(args, "--n-cpu-moe"); n != "" {
		k := min(atoi(n), layers)
		tensors, touched = 3*k, k
	}
	for i := 0; i+1 < len(args); i++ {
		if args[i] != "-ot" {
			continue
		}
		for _, p := range strings.Split(strings.Trim(args[i+1], `"`), ",") {
			m := otPattern.FindStringSubmatch(p)
			require.NotNil(t, m, "unknown -ot pattern %q", p)
			if atoi(m[1]) >= layers {
				continue
			}
			n := 0
			switch m[2] {
			case `(up|down|gate_up|gate)_(ch|)exps`:
				n = 3
			case `(gate|down)_exps`, `(gate|gate_up|down).*`:
				n = 2
			case `down_exps`, `down.*`:
				n = 1
			}
			require.Positive(t, n, "unknown -ot tensors %q", p)
			tensors += n
			touched++
		}
	}
	return tensors, touched
}

// otPattern is one -ot entry that keeps expert tensors of layer N on the CPU.
var otPattern = regexp.MustCompile(`^blk\\\.(\d+)\\\.ffn_(.*)=CPU$`)

// splitArgs splits the argument line --fit printed (llama-fit-params'
// stdout) at spaces outside double quotes.
func splitArgs(line string) []string {
	var out []string
	var cur strings.Builder
	quoted := false
	for _, r := range line {
		switch {
		case r == '"':
			quoted = !quoted
		case r == ' ' && !quoted:
			if cur.Len() > 0 {
				out = append(out, cur.String())
				cur.Reset()
			}
			continue
		}
		cur.WriteRune(r)
	}
	if cur.Len() > 0 {
		out = append(out, cur.String())
	}
	return out
}

// moeFitMaxExtraTensors is how many routed-expert tensors more than
// llama.cpp's --fit the plan may keep on the CPU (a layer has three).
const moeFitMaxExtraTensors = 1

// TestLlamaCPPFitMoEReplay plans every Qwen3-30B-A3B Q4_K_M row of
// llama.cpp's own --fit (llama-fit-params -fitt MARGIN on a real H200, as
// on a card of CARD MiB; the data's README) as TestLlamaCPPFitReplay plans
// the Llama-3.1-8B rows: a CUDA GPU of CARD MiB plus the 1 GiB --fit-target
// keeps free, and host memory. The context must be --fit's (its floor,
// 4096, where the model does not fit whole; -c 0, the trained 40960, where
// it does; the asked 32768), and the routed-expert tensors kept on the CPU
// at least --fit's and at most moeFitMaxExtraTensors more. The plan keeps
// the experts of the first layers on the CPU (--n-cpu-moe), --fit those of
// the last (-ot): Qwen3-30B-A3B Q4_K_M stores ffn_down_exps in Q6_K in 24
// of its 48 layers, not evenly spread, so the same number of tensors is
// not the same bytes and the counts can differ by one tensor where the
// bytes agree.
func TestLlamaCPPFitMoEReplay(t *testing.T) {
	dir := filepath.Join("..", "calibration", "data", "llamacpp-cuda-h200-fit")
	paths, err := filepath.Glob(filepath.Join(dir, "Qwen3-30B-A3B-card*.txt"))
	require.NoError(t, err)
	require.Len(t, paths, 8)
	sort.Slice(paths, func(i, j int) bool { return fitRowKey(paths[i]) < fitRowKey(paths[j]) })
	rows := []string{"| card MiB | -c asked | llama.cpp --fit | expert tensors on the CPU | planned | expert tensors on the CPU |", "|---|---|---|---|---|---|"}
	for _, p := range paths {
		name := filepath.Base(p)
		m := moeFitRow.FindStringSubmatch(name)
		require.NotNil(t, m, name)
		data, err := os.ReadFile(p)
		require.NoError(t, err)
		lines := strings.Split(strings.TrimSpace(string(data)), "\n")
		theirs := splitArgs(lines[len(lines)-1])
		card, _ := strconv.ParseInt(m[2], 10, 64)
		body := fmt.Sprintf(`{"model":{"name":%q},"quant":"q4_k_m","engine":"llama.cpp","cpu_offload":true`, m[1])
		if m[3] != "" {
			body += `,"context_length":` + m[3]
		}
		d := gpu(registry.KindCUDA, 0, "imitated card", (card+1024)<<20, "9.0")
		a := shard(t, request(t, body+"}", reg(t, []registry.Device{d, host(256 << 30)})))
		require.True(t, a.Fits.Yes(), "%s: %s", name, dump(t, a.Explanation))
		ours := a.EngineArgs["llama.cpp"]
		layers := a.Model.Layers

		theirCtx := atoi(argValue(theirs, "-c"))
		if theirCtx == 0 {
			theirCtx = model.Lookup(m[1]).MaxContext // -c 0: the trained context, unchanged
		}
		assert.Equal(t, theirCtx, atoi(argValue(ours, "-c")), "%s: -c", name)
		theirNGL := atoi(argValue(theirs, "-ngl"))
		if theirNGL < 0 {
			theirNGL = layers + 1 // all layers and the output layer
		}
		assert.Equal(t, theirNGL, atoi(argValue(ours, "-ngl")), "%s: -ngl", name)

		theirT, theirL := hostExpertTensors(t, theirs, layers)
		ourT, ourL := hostExpertTensors(t, ours, layers)
		assert.GreaterOrEqual(t, ourT, theirT, "%s: the plan keeps fewer expert tensors on the CPU than --fit: %v", name, ours)
		assert.LessOrEqual(t, ourT, theirT+moeFitMaxExtraTensors, "%s: %v", name, ours)

		asked := "-"
		if m[3] != "" {
			asked = m[3]
		}
		rows = append(rows, fmt.Sprintf("| %d | %s | %s | %d (%d layers) | %s | %d (%d layers) |",
			card, asked, fitArgsSummary(theirs), theirT, theirL, fitArgsSummary(ours), ourT, ourL))
	}
	t.Logf("llama.cpp --fit vs this planner, Qwen3-30B-A3B Q4_K_M:\n%s", strings.Join(rows, "\n"))
}

// fitArgsSummary is the context, GPU layers and expert placement of a
// llama.cpp command line, for the replay's table: --fit's -ot list is
// shortened to its first entry and how many follow.
func fitArgsSummary(args []string) string {
	var out []string
	for _, flag := range []string{"-c", "-ngl", "--n-cpu-moe", "-ot"} {
		v := argValue(args, flag)
		if v == "" {
			continue
		}
		if ps := strings.Split(strings.Trim(v, `"`), ","); len(ps) > 1 {
			v = fmt.Sprintf("%s,... (%d patterns)", ps[0], len(ps))
		}
		out = append(out, flag+" "+v)
	}
	return strings.Join(out, " ")
}

// fitRowKey orders the rows by card, then asked context (none first).
func fitRowKey(path string) string {
	m := moeFitRow.FindStringSubmatch(filepath.Base(path))
	if m == nil {
		return path
	}
	return fmt.Sprintf("%08s-%08s", m[2], m[3])
}

// TestMoEExpertBytesAgainstLlamaCPP plans Qwen3-30B-A3B Q4_K_M at 4096
// tokens with the experts of the first 0, 24 and 48 layers on the host
// (--n-cpu-moe N) and checks the GPU's weights, KV cache and compute
// buffer against llama.cpp's own memory table of the same runs: llama.cpp
// 34af94cd on the H200 of 2026-11-28, `llama-completion -ngl 99 -c 4096
// -fa on -ctk f16 -ctv f16 -fit off --n-cpu-moe N` on the GGUF of
// scripts/llamacpp-measure/make_gguf.py --sparse (scripts/device/h200-run.sh,
// its MoE stage; lines quoted verbatim below). Before each layer's experts
// were sized at their tensors' types the planner charged the GPU 287 MiB
// too much with every expert on the host (1047 MiB against 760).
func TestMoEExpertBytesAgainstLlamaCPP(t *testing.T) {
	logs := map[int]string{
		0:  "|   - CUDA0 (H200)       | 143155 = 124291 + (18185 = 17500 +     384 +     300) +         679 |",
		24: "|   - CUDA0 (H200)       | 143155 = 132657 + (9815 =  9130 +     384 +     300) +         683 |",
		48: "|   - CUDA0 (H200)       | 143155 = 141031 + ( 1445 =   760 +     384 +     300) +         679 |",
	}
	// The model buffers to the hundredth of a MiB, from the same logs'
	// load_tensors lines ("CUDA0 model buffer size = 17500.43 MiB").
	model := map[int]float64{0: 17500.43, 24: 9130.43, 48: 760.42}
	cell := regexp.MustCompile(`\(\s*\d+ =\s*(\d+) \+\s*(\d+) \+\s*(\d+)\)`)
	d := gpu(registry.KindCUDA, 0, "NVIDIA H200", 143771<<20, "9.0")
	req := planningOf(t, request(t, `{"model":{"name":"Qwen3-30B-A3B"},"quant":"q4_k_m","engine":"llama.cpp","cpu_offload":true,"context_length":4096}`, reg(t, []registry.Device{d, host(128 << 30)})))
	ch, err := choose(req)
	require.NoError(t, err)
	c := ch.Plan.Costs
	const mib = 1 << 20
	for _, n := range []int{0, 24, 48} {
		m := cell.FindStringSubmatch(logs[n])
		require.NotNil(t, m, logs[n])
		g, _ := moeSplitParts(c, n)
		weights := float64(g.Weights) / mib
		t.Logf("--n-cpu-moe %d: GPU weights %.2f MiB planned, %.2f llama.cpp (%+.2f); KV %.2f / %s; compute %.2f / %s",
			n, weights, model[n], weights-model[n], float64(g.KV)/mib, m[2], float64(g.Activations)/mib, m[3])
		assert.InDelta(t, model[n], weights, 16, "--n-cpu-moe %d: GPU weights, MiB", n)
		assert.InDelta(t, float64(atoi(m[2])), float64(g.KV)/mib, 1, "--n-cpu-moe %d: KV, MiB", n)
		assert.InDelta(t, float64(atoi(m[3])), float64(g.Activations)/mib, 1, "--n-cpu-moe %d: compute, MiB", n)
	}
}
