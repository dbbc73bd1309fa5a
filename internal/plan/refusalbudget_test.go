package plan

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// h200VM is the H200 of testdata/machines/h200-vm as nvidia-smi reported
// it there (captures/query-gpu.csv: memory.total 143771 MiB, memory.free
// 143156 MiB): a device whose engines' budgets (vLLM's
// --gpu-memory-utilization, SGLang's --mem-fraction-static, llama.cpp's
// --fit-target) are all below its free memory.
func h200VM(i int) registry.Device {
	d := gpu(registry.KindCUDA, i, "NVIDIA H200", 143771<<20, "9.0")
	d.Vendor = "nvidia"
	free := int64(143156 << 20)
	d.MemoryFreeBytes = &free
	return d
}

// needFigure is one "needs N GiB (parts)" of a refusal: the total and the
// parts it lists, each named and in GiB.
type needFigure struct {
	total float64
	parts map[string]float64
}

var (
	needRe = regexp.MustCompile(`needs ([0-9.]+) GiB(?: on one device)? \(`)
	partRe = regexp.MustCompile(`^(.+?) (<?[0-9.]+) GiB$`)
)

// needFigures reads every "needs N GiB (a X GiB, b Y GiB...)" of a
// refusal: the parts run to the first ";" or the closing parenthesis at
// their own depth; a part's own parenthesised breakdown (vLLM's start-up
// charge) is not a part.
func needFigures(t *testing.T, reason string) []needFigure {
	t.Helper()
	var out []needFigure
	for _, m := range needRe.FindAllStringSubmatchIndex(reason, -1) {
		total, err := strconv.ParseFloat(reason[m[2]:m[3]], 64)
		require.NoError(t, err)
		var parts []string
		var cur strings.Builder
		depth := 0
	scan:
		for _, r := range reason[m[1]:] {
			switch {
			case r == '(':
				depth++
			case r == ')' && depth == 0, r == ';' && depth == 0:
				break scan
			case r == ')':
				depth--
				continue
			}
			if depth == 0 {
				cur.WriteRune(r)
			}
		}
		for _, p := range strings.Split(cur.String(), ", ") {
			parts = append(parts, strings.TrimSpace(p))
		}
		f := needFigure{total: total, parts: map[string]float64{}}
		for _, p := range parts {
			pm := partRe.FindStringSubmatch(p)
			require.NotNil(t, pm, "part %q of %q is not \"name N GiB\"", p, reason)
			v := 0.05 // "<0.1 GiB": at most the rounding shown
			if !strings.HasPrefix(pm[2], "<") {
				v, err = strconv.ParseFloat(pm[2], 64)
				require.NoError(t, err)
			}
			f.parts[pm[1]] = v
		}
		out = append(out, f)
	}
	return out
}

// A refusal named 200.7 GiB of weights and 2.0 GiB of KV cache of the
// 204.0 GiB it said int4 needs, and called 126.8 GiB "free" on an H200
// with 139.8 GiB free: the rest of the need (activations, runtime
// overhead) went unnamed, and the engine's budget (SGLang's
// --mem-fraction-static share) was called free memory. Every part the
// estimate charges is now named, with the names of the answer's memory
// breakdown, so the parts add up to the need to the rounding shown, and
// the budget is named as the engine's share of the free memory (for
// SGLang, which uses the whole device, the share its fraction gives the
// weights and its KV pool, and the rest).
func TestRefusalPartsSumAndBudgetIsNotCalledFree(t *testing.T) {
	free := gib(143156 << 20)
	for _, tc := range []struct {
		engine, title string
		devices       []registry.Device
	}{
		{"llama.cpp", "llama.cpp", []registry.Device{h200VM(0)}},
		{"vllm", "vLLM", []registry.Device{h200VM(0)}},
		{"sglang", "SGLang", []registry.Device{h200VM(0)}},
		{"llama.cpp", "llama.cpp", []registry.Device{h200VM(0), h200VM(1)}},
		{"vllm", "vLLM", []registry.Device{h200VM(0), h200VM(1)}},
		{"sglang", "SGLang", []registry.Device{h200VM(0), h200VM(1)}},
	} {
		t.Run(fmt.Sprintf("%s/%d", tc.engine, len(tc.devices)), func(t *testing.T) {
			var ics []registry.Interconnect
			if len(tc.devices) > 1 {
				// Joined, so that vLLM and SGLang also say what each
				// device of a tensor-parallel split needs.
				ics = append(ics, link("nvlink", 450, "cuda:0", "cuda:1"))
			}
			a := shard(t, request(t, `{"model":{"name":"Llama-3.1-405B"},"engine":"`+tc.engine+`"}`, reg(t, tc.devices, ics...)))
			reason := levelReason(t, a, "bf16")
			figures := needFigures(t, reason)
			require.NotEmpty(t, figures, reason)
			for _, f := range figures {
				sum := 0.0
				for name, v := range f.parts {
					sum += v
					assert.NotEqual(t, "other", name, reason)
				}
				// Each part and the total are rounded to 0.1 GiB.
				assert.InDelta(t, f.total, sum, 0.05*float64(len(f.parts)+1)+1e-9, "parts %v of %q", f.parts, reason)
				assert.Contains(t, f.parts, "weights", reason)
			}
			if tc.engine == "sglang" {
				// SGLang uses the whole device and divides it: its
				// fraction's share for the weights and its KV pool, the
				// rest for activations and CUDA graphs (staticShareLine);
				// the devices' free memory is what it uses.
				assert.Contains(t, reason, free+" free", reason)
				if len(tc.devices) > 1 {
					assert.Contains(t, reason, "(279.6 GiB free in all)", reason)
				}
				assert.Regexp(t, `SGLang's --mem-fraction-static 0\.[0-9]+ gives the weights and its KV pool [0-9.]+ GiB of it once its CUDA context is in, and leaves the rest \([0-9.]+ GiB\) to its activations and CUDA graphs`, reason)
				return
			}
			for _, m := range regexp.MustCompile(`([0-9.]+ GiB) free`).FindAllStringSubmatch(reason, -1) {
				assert.Equal(t, free, m[1], "only the device's free memory is called free: %q", reason)
			}
			assert.Contains(t, reason, free+" free, of which "+tc.title+" may use ", reason)
			if len(tc.devices) > 1 {
				assert.Regexp(t, `\([0-9.]+ GiB `+regexp.QuoteMeta(tc.title)+` may use in all\)`, reason)
			}
		})
	}
}
