package plan

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// A dense model split between a GPU and the host runs its host layers on
// the CPU (llama.cpp -ngl; the explanation says "stay in host RAM and run
// on the CPU"). Where the host's memory bandwidth is unknown the step
// times those layers' reads at the GPU's PCIe bandwidth as a stand-in, and
// the note said "offloaded layers cross PCIe at 32 GB/s every step", a
// mechanism the plan does not have (the weights are read where they lie,
// by the CPU). It now says what the MoE split's note says: they run on
// the CPU, the host's bandwidth is unknown, and their reads are timed at
// the PCIe figure instead.
func TestDenseOffloadOnUnknownHostSaysThePCIeFigureIsAStandIn(t *testing.T) {
	g := rtx3090()
	g.MemoryBandwidthGBs = 936
	g.PCIe = &registry.PCIe{CurrentSpeedGTs: 16, CurrentWidth: 16, MaxSpeedGTs: 16, MaxWidth: 16, BandwidthGBs: 31.51}
	// A CPU of no datasheet row (h200-vm's VM reports only this name).
	cpu := host(256 << 30)
	cpu.Name = "Intel(R) Xeon(R) Processor"
	for _, eng := range []string{"llama.cpp", "none"} {
		a := shard(t, request(t, `{"model":{"name":"Llama-3.1-70B"},"engine":"`+eng+`","quant":"int4","cpu_offload":true,"context_length":4096}`,
			reg(t, []registry.Device{g, cpu})))
		require.True(t, a.Fits.Yes(), "%s: %s", eng, strings.Join(a.Explanation, "\n"))
		require.Equal(t, StrategyOffload, a.Strategy, eng)
		require.NotNil(t, a.Throughput, eng)
		require.Equal(t, BoundPCIe, a.Throughput.Bound, eng)
		notes := strings.Join(a.Throughput.Assumptions, "\n")
		assert.NotContains(t, notes, "offloaded layers cross PCIe", "%s: %s", eng, notes)
		assert.Contains(t, notes, "offloaded layers run on the CPU, but the host's memory bandwidth is unknown", "%s: %s", eng, notes)
		assert.Contains(t, notes, "timed at the GPU's PCIe bandwidth (32 GB/s) instead", "%s: %s", eng, notes)
		assert.Contains(t, strings.Join(a.Explanation, "\n"), "run on the CPU", eng)
	}
}
