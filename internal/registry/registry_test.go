package registry

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func i64(v int64) *int64 { return &v }
func intp(v int) *int    { return &v }

func TestKindFamilies(t *testing.T) {
	for _, k := range Kinds() {
		assert.True(t, k.Valid(), k)
		assert.True(t, k.Family().Valid(), "family of %s", k)
	}
	assert.Len(t, Kinds(), 18, "the contract lists 18 kinds")
	assert.Equal(t, FamilyGPU, KindCUDA.Family())
	assert.Equal(t, FamilyAIASIC, KindGaudi.Family())
	assert.Equal(t, FamilyNPU, KindIntelNPU.Family())
	assert.False(t, Kind("quantum_gpu").Valid())
	assert.Equal(t, "cuda:3", DeviceID(KindCUDA, 3))
	assert.Equal(t, "rocm:0", DeviceID(KindROCm, 0))
	assert.Equal(t, "tpu:7", DeviceID(KindTPU, 7))
	assert.Equal(t, "aws_neuron:1", DeviceID(KindNeuron, 1))
}

func TestNormalizeRenumbersPerKindAndRewritesLinks(t *testing.T) {
	r := &Registry{Devices: []Device{
		{ID: "b|x", Kind: KindCUDA},
		{ID: "a|cpu", Kind: KindCPU},
		{ID: "b|y", Kind: KindCUDA},
	}, SystemIO: SystemIO{Interconnects: []Interconnect{{Kind: LinkNVLink, Devices: []string{"b|y", "b|x"}}}}}
	r.SortDevices()
	r.Normalize()
	ids := []string{}
	for _, d := range r.Devices {
		ids = append(ids, d.ID)
	}
	assert.Equal(t, []string{"cpu:0", "cuda:0", "cuda:1"}, ids)
	assert.Equal(t, []string{"cuda:1", "cuda:0"}, r.SystemIO.Interconnects[0].Devices)
}

func TestSortDevicesByKindThenBusThenVisibility(t *testing.T) {
	r := &Registry{Devices: []Device{
		{Kind: KindCUDA, PCIBusID: "0000:db:00.0"},
		{Kind: KindROCm, PCIBusID: "0000:01:00.0"},
		{Kind: KindCUDA, PCIBusID: "0000:18:00.0"},
		{Kind: KindCUDA},
		{Kind: KindCPU},
	}}
	r.SortDevices()
	got := []string{}
	for _, d := range r.Devices {
		got = append(got, string(d.Kind)+"@"+d.PCIBusID)
	}
	assert.Equal(t, []string{"cpu@", "cuda_gpu@0000:18:00.0", "cuda_gpu@0000:db:00.0", "cuda_gpu@", "rocm_gpu@0000:01:00.0"}, got)

	// CUDA_VISIBLE_DEVICES=2,0 order: the runtime's ordinal wins over the bus.
	r = &Registry{Devices: []Device{
		{Kind: KindCUDA, PCIBusID: "0000:18:00.0", VisibleAs: "1"},
		{Kind: KindCUDA, PCIBusID: "0000:3a:00.0", VisibleAs: "0"},
	}}
	r.SortDevices()
	assert.Equal(t, "0000:3a:00.0", r.Devices[0].PCIBusID)
}

func TestQueries(t *testing.T) {
	r := &Registry{Devices: []Device{
		{ID: "cpu:0", Kind: KindCPU, Family: FamilyCPU, Available: true, MemoryBytes: 100},
		{ID: "cuda:0", Kind: KindCUDA, Family: FamilyGPU, Available: true, MemoryBytes: 80, MemoryFreeBytes: i64(70), Quantizations: []string{"bf16"}},
		{ID: "tpu:0", Kind: KindTPU, Family: FamilyTPU, Available: false, MemoryBytes: 16},
	}}
	assert.Equal(t, "cuda:0", r.Find("cuda:0").ID)
	assert.Nil(t, r.Find("cuda:9"))
	assert.Len(t, r.Available(), 2)
	assert.Len(t, r.Accelerators(), 1, "unavailable TPU and the CPU are not usable accelerators")
	assert.Len(t, r.ByFamily(FamilyGPU), 1)
	assert.Equal(t, int64(70), r.Devices[1].UsableMemory(), "free memory when known")
	assert.Equal(t, int64(100), r.Devices[0].UsableMemory(), "total when free is unknown")
	assert.True(t, r.Devices[1].HasQuant("bf16"))
	assert.False(t, r.Devices[1].HasQuant("fp8"))
	d := Device{}
	d.SetSource("memory_bytes", "nvidia-smi")
	d.SetSource("name", "")
	assert.Equal(t, map[string]string{"memory_bytes": "nvidia-smi"}, d.Sources)
}

func TestNormalizeRewritesMIGParent(t *testing.T) {
	r := &Registry{Devices: []Device{
		{ID: "cuda|gpu0", Kind: KindCUDA, MIG: &MIG{Mode: "enabled"}},
		{ID: "cuda|gpu0-mig0", Kind: KindCUDA, MIG: &MIG{Instance: "MIG-a", Parent: "cuda|gpu0"}},
	}}
	r.Normalize()
	assert.Equal(t, "cuda:0", r.Devices[1].MIG.Parent)
}

// UsableMemoryOf names the figure UsableMemory reads, so a sentence can
// say "free" only of detected free memory (a plan's refusal calls an
// engine's share of it by the engine's setting, never "free").
func TestUsableMemoryOfNamesItsFigure(t *testing.T) {
	free := func(v int64) *int64 { return &v }
	for _, c := range []struct {
		d     Device
		bytes int64
		word  string
	}{
		{Device{MemoryBytes: 100}, 100, "total"},
		{Device{MemoryBytes: 100, MemoryFreeBytes: free(70)}, 70, "free"},
		{Device{MemoryBytes: 100, MemoryFreeBytes: free(100)}, 100, "free"},
		{Device{MemoryBytes: 100, MemoryUsableBytes: 75}, 75, "usable"},
		{Device{MemoryBytes: 100, MemoryUsableBytes: 75, MemoryFreeBytes: free(90)}, 75, "usable"},
		{Device{MemoryBytes: 100, MemoryUsableBytes: 75, MemoryFreeBytes: free(60)}, 60, "free"},
		{Device{MemoryFreeBytes: free(8)}, 8, "free"},
	} {
		b, w := c.d.UsableMemoryOf()
		assert.Equal(t, c.bytes, b)
		assert.Equal(t, c.word, w)
		assert.Equal(t, b, c.d.UsableMemory())
	}
}
