package api

import (
	"context"
	"testing"

	json "github.com/goccy/go-json"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// vllmCPUPlan is a vLLM plan of a 1B model on the CPU only, from the
// registry or detection options in source ("registry":{...} or
// "detect":{...}): whether it fits and its levels' reasons.
func vllmCPUPlan(t *testing.T, source string) (fits bool, reasons []string) {
	t.Helper()
	out := PlanSharding(context.Background(),
		[]byte(`{"model":{"params_b":1},"engine":"vllm","devices":["cpu:0"],`+source+`}`), NoEnv)
	require.Equal(t, "", errorCode(t, out), string(out))
	var p struct {
		Fits   bool `json:"fits"`
		Levels []struct {
			Reason string `json:"reason"`
		} `json:"levels"`
	}
	require.NoError(t, json.Unmarshal(out, &p))
	for _, l := range p.Levels {
		reasons = append(reasons, l.Reason)
	}
	return p.Fits, reasons
}

func detectSource(name string) string {
	dir := fixture(name)
	return `"detect":{"sysroot":"` + dir + `/root","path":"` + dir + `/bin","cache_ttl_ms":0}`
}

// detectedRegistry is the fixture's registry with edit applied to its CPU
// device (a JSON object).
func detectedRegistry(t *testing.T, name string, edit func(cpu map[string]any)) string {
	t.Helper()
	dir := fixture(name)
	out := Detect(context.Background(), []byte(`{"sysroot":"`+dir+`/root","path":"`+dir+`/bin","cache_ttl_ms":0}`), NoEnv)
	require.Equal(t, "", errorCode(t, out), string(out))
	var r map[string]any
	require.NoError(t, json.Unmarshal(out, &r))
	for _, d := range r["devices"].([]any) {
		if dev := d.(map[string]any); dev["kind"] == "cpu" {
			edit(dev)
		}
	}
	b, err := json.Marshal(r)
	require.NoError(t, err)
	return `"registry":` + string(b)
}

// vLLM's CPU floor (AVX-512 or AVX2 on x86) is judged on the CPU's
// detected flags: the cpu-only fixture's Xeon L5640 (flags up to sse4_2)
// is refused with its own name, the h200-vm's Xeon (avx512f) and the
// qemu-q35-vm's Xeon Gold 5218R (avx512f, no family record) plan, and so
// does a Graviton3 (arm64 features, not refused; its capture has no
// meminfo, so the registry is given 16 GiB, a c7g.2xlarge's memory).
func TestVLLMCPUFloorReadsDetectedFlags(t *testing.T) {
	fits, reasons := vllmCPUPlan(t, detectSource("cpu-only"))
	assert.False(t, fits)
	require.NotEmpty(t, reasons)
	for _, r := range reasons {
		assert.Equal(t, "vLLM's CPU backend needs AVX-512 or AVX2 on x86 (vllm-project/vllm cmake/cpu_extension.cmake); "+
			"Intel(R) Xeon(R) CPU L5640 @ 2.27GHz has SSE4.2 at most", r)
	}
	graviton3 := detectedRegistry(t, "graviton3-c7g", func(cpu map[string]any) {
		require.Contains(t, cpu["cpu_features"], "sve")
		cpu["memory_bytes"] = int64(16 << 30)
	})
	// The qemu-q35-vm has 1.4 GiB available: under the whole GiB of
	// VLLM_CPU_KVCACHE_SPACE beside the weights (internal/engine/vllmcpu.go),
	// so it is given 16 GiB for the floor alone to decide.
	qemu := detectedRegistry(t, "qemu-q35-vm", func(cpu map[string]any) {
		cpu["memory_bytes"], cpu["memory_free_bytes"] = int64(16<<30), int64(16<<30)
	})
	for name, source := range map[string]string{"h200-vm": detectSource("h200-vm"),
		"qemu-q35-vm": qemu, "graviton3-c7g": graviton3} {
		fits, reasons = vllmCPUPlan(t, source)
		assert.True(t, fits, "%s: %v", name, reasons)
		for _, r := range reasons {
			assert.NotContains(t, r, "AVX-512 or AVX2", name)
		}
	}
}

// The flags win over the family table both ways: an L5640-named CPU whose
// flags list avx2 plans; a CPU the table does not know whose flags lack
// avx2 and avx512f (a VM that masks them) is refused.
func TestVLLMCPUFloorFlagsOverFamilyName(t *testing.T) {
	fits, reasons := vllmCPUPlan(t, detectedRegistry(t, "cpu-only", func(cpu map[string]any) {
		cpu["cpu_features"] = append(cpu["cpu_features"].([]any), "avx", "avx2")
	}))
	assert.True(t, fits, "%v", reasons)

	fits, reasons = vllmCPUPlan(t, detectedRegistry(t, "qemu-q35-vm", func(cpu map[string]any) {
		cpu["cpu_features"] = []any{"sse2", "ssse3", "sse4_1", "sse4_2", "avx"}
	}))
	assert.False(t, fits)
	require.NotEmpty(t, reasons)
	assert.Contains(t, reasons[0], "Intel(R) Xeon(R) Gold 5218R CPU @ 2.10GHz has AVX at most")
}

// A registry without cpu_features (written before they were detected:
// docs/snapshots.md's older registries, a host's own JSON) still plans:
// the family table answers for the L5640, and a CPU it does not know is
// not refused. Features a newer writer adds are dropped, not refused.
func TestRegistryWithoutCPUFeaturesStillPlans(t *testing.T) {
	drop := func(cpu map[string]any) {
		delete(cpu, "cpu_features")
		delete(cpu["sources"].(map[string]any), "cpu_features")
	}
	fits, reasons := vllmCPUPlan(t, detectedRegistry(t, "cpu-only", drop))
	assert.False(t, fits)
	require.NotEmpty(t, reasons)
	assert.Contains(t, reasons[0], "Intel Xeon L5640/X5600 (Westmere-EP) has SSE4.2 at most")

	// 16 GiB for the qemu-q35-vm, whose 1.4 GiB available hold no whole
	// GiB of vLLM's CPU KV cache beside the weights
	// (TestVLLMCPUFloorReadsDetectedFlags).
	roomy := func(cpu map[string]any) {
		cpu["memory_bytes"], cpu["memory_free_bytes"] = int64(16<<30), int64(16<<30)
	}
	fits, reasons = vllmCPUPlan(t, detectedRegistry(t, "qemu-q35-vm", func(cpu map[string]any) { drop(cpu); roomy(cpu) }))
	assert.True(t, fits, "%v", reasons)

	fits, reasons = vllmCPUPlan(t, detectedRegistry(t, "qemu-q35-vm", func(cpu map[string]any) {
		cpu["cpu_features"] = []any{"a_future_extension"}
		roomy(cpu)
	}))
	assert.True(t, fits, "%v", reasons)
}
