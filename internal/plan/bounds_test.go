package plan

import (
	"fmt"
	"testing"

	json "github.com/goccy/go-json"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/errs"
	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// piBRegistryJSON is a registry of n devices of 1 PiB each, the most memory
// one device may declare (registry.MaxDeviceMemory).
func piBRegistryJSON(t *testing.T, n int) string {
	devs := make([]registry.Device, n)
	for i := range devs {
		devs[i] = gpu(registry.KindCUDA, i, "X", registry.MaxDeviceMemory, "9.0")
	}
	b, err := json.Marshal(reg(t, devs))
	require.NoError(t, err)
	return string(b)
}

// Issue 14 item 6: 24 000 devices of 1 PiB with 24 000 replicas of a
// 1e14-parameter fp32 model answered weights_bytes -8846744073709551616.
// Every input is within its own limit; the machine's total (23 EiB) is not.
func TestMachinesAboveOneEiBAreRefused(t *testing.T) {
	r := piBRegistryJSON(t, 24000)
	for _, extra := range []string{`"registry":` + r, `"cluster":[` + r + `]`} {
		_, err := decode([]byte(`{"model":{"params":1e14},"quant":"fp32","replicas":"max",` + extra + `}`))
		require.Error(t, err)
		assert.Equal(t, errs.InvalidArgument, errs.CodeOf(err))
		assert.Contains(t, errs.MessageOf(err), "1 EiB")
	}
	// A cluster of nodes each under the bound but together above it.
	half := piBRegistryJSON(t, 700)
	_, err := decode([]byte(`{"model":{"params":1e14},"cluster":[` + half + `,` + half + `]}`))
	assert.Equal(t, errs.InvalidArgument, errs.CodeOf(err))
}

// At the bound (1024 devices of 1 PiB = 1 EiB) every figure of every answer
// is a true, non-negative count.
func TestLargestMachineAnswersHaveNoWrappedFigures(t *testing.T) {
	r := piBRegistryJSON(t, 1024)
	for _, q := range []string{
		`"quant":"fp32","replicas":"max"`,
		`"quant":"fp32","replicas":1024,"batch_size":1048576`,
		`"quant":"fp32"`,
		`"quant":"auto","include_cpu":true,"cpu_offload":true`,
	} {
		for name, ask := range map[string]func(*Request) (any, error){
			"plan":    func(r *Request) (any, error) { return PlanSharding(r) },
			"suggest": func(r *Request) (any, error) { return SuggestQuant(r) }} {
			body := fmt.Sprintf(`{"model":{"params":1e14},%s,"registry":%s}`, q, r)
			req, err := decode([]byte(body))
			require.NoError(t, err, q)
			a, err := ask(req)
			require.NoError(t, err, q)
			assertNoNegativeNumber(t, a, name+" "+q)
		}
	}
	req, err := decode([]byte(`{"model":{"params":1e14},"training":{},"registry":` + r + `}`))
	require.NoError(t, err)
	a, err := EstimateTraining(req)
	require.NoError(t, err)
	assertNoNegativeNumber(t, a, "training")
}

func assertNoNegativeNumber(t *testing.T, answer any, what string) {
	t.Helper()
	b, err := json.Marshal(answer)
	require.NoError(t, err)
	var v any
	require.NoError(t, json.Unmarshal(b, &v))
	var negative []string
	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				walk(path+"."+k, e)
			}
		case []any:
			for _, e := range x {
				walk(path+"[]", e)
			}
		case float64:
			if x < 0 {
				negative = append(negative, fmt.Sprintf("%s=%v", path, x))
			}
		}
	}
	walk("", v)
	assert.Empty(t, negative, what)
}
