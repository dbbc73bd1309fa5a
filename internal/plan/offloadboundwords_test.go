package plan

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// offloadLine is the explanation's cpu_offload: line of a fitting
// offloaded plan.
func offloadLine(t *testing.T, a *ShardingAnswer) string {
	t.Helper()
	for _, l := range a.Explanation {
		if strings.HasPrefix(l, "cpu_offload: ") {
			return l
		}
	}
	require.Fail(t, "no cpu_offload: line", strings.Join(a.Explanation, "\n"))
	return ""
}

// The cpu_offload: line says what the decode figure is bound by, as
// throughput.bound does: an offloaded MoE plan said "decode is bound by
// host memory bandwidth" while its bound was pcie, the host's memory
// bandwidth being unknown (a CPU of no datasheet row) and the experts'
// reads timed at the GPU's PCIe bandwidth instead (moeUnknownHostNote).
func TestOffloadLineSaysWhatDecodeIsBoundBy(t *testing.T) {
	g := rtx3090()
	g.MemoryBandwidthGBs = 936
	g.PCIe = &registry.PCIe{CurrentSpeedGTs: 16, CurrentWidth: 16, MaxSpeedGTs: 16, MaxWidth: 16, BandwidthGBs: 31.51}
	unknown := host(256 << 30)
	unknown.Name = "Intel(R) Xeon(R) Processor" // h200-vm's VM: no datasheet row
	known := host(256 << 30)
	for _, c := range []struct {
		model, engine string
		cpu           registry.Device
		bound, words  string
	}{
		{"gpt-oss-120b", "llama.cpp", unknown, BoundPCIe, "decode is bound by PCIe: the host's memory bandwidth is not known"},
		{"gpt-oss-120b", "llama.cpp", known, "", "decode is bound by host memory bandwidth"},
		{"Llama-3.1-70B", "llama.cpp", unknown, BoundPCIe, "decode is bound by PCIe: the host's memory bandwidth is not known"},
		{"Llama-3.1-70B", "llama.cpp", known, "", "decode is bound by host memory bandwidth"},
		{"Llama-3.1-70B", "none", unknown, BoundPCIe, "decode is bound by PCIe: the host's memory bandwidth is not known"},
		// The engine-less estimate runs no layer on the CPU (engine.Base
		// has no OffloadOnHost): PCIe even beside a known host.
		{"Llama-3.1-70B", "none", known, BoundPCIe, "decode is bound by PCIe: engine none is not taken to run the host part on the CPU"},
	} {
		name := c.model + " " + c.engine + " " + c.cpu.Name
		a := shard(t, request(t, `{"model":{"name":"`+c.model+`"},"engine":"`+c.engine+`","quant":"int4","cpu_offload":true,"context_length":4096}`,
			reg(t, []registry.Device{g, c.cpu})))
		require.True(t, a.Fits.Yes(), "%s: %s", name, strings.Join(a.Explanation, "\n"))
		require.NotNil(t, a.Throughput, name)
		line := offloadLine(t, a)
		assert.Contains(t, line, c.words, name)
		notes := strings.Join(a.Throughput.Assumptions, "\n")
		if c.cpu.Name == known.Name {
			// The throughput's note said the known bandwidth was unknown.
			assert.NotContains(t, notes, "memory bandwidth is unknown", name)
		}
		if c.bound == BoundPCIe {
			assert.Equal(t, BoundPCIe, a.Throughput.Bound, name)
			assert.NotContains(t, line, "bound by host memory bandwidth", name)
		} else {
			assert.NotEqual(t, BoundPCIe, a.Throughput.Bound, name)
			assert.NotContains(t, line, "PCIe", name)
		}
	}
}
