package detect

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/detect/machine"
	"github.com/ai-hwaccel/ai-hwaccel/internal/detect/nvidia"
	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// available returns the available devices of a kind.
func available(reg *registry.Registry, k registry.Kind) []registry.Device {
	var out []registry.Device
	for _, d := range devicesOfKind(reg, k) {
		if d.Available {
			out = append(out, d)
		}
	}
	return out
}

// migSlice is what a test expects of one MIG instance device.
type migSlice struct {
	uuid, profile string
	bytes         int64
	source        string
}

const (
	fromProfile = "nvidia-smi -L (MIG profile)"
	fromQuery   = nvidia.SourceMIGQuery
)

func assertSlices(t *testing.T, reg *registry.Registry, parentID string, want []migSlice) {
	t.Helper()
	var got []registry.Device
	for _, d := range devicesOfKind(reg, registry.KindCUDA) {
		if d.MIG != nil && d.MIG.Instance != "" {
			got = append(got, d)
		}
	}
	require.Len(t, got, len(want))
	for i, w := range want {
		d := got[i]
		assert.True(t, d.Available, w.uuid)
		assert.Equal(t, w.uuid, d.UUID)
		assert.Equal(t, registry.MIG{Instance: w.uuid, Profile: w.profile, Parent: parentID},
			registry.MIG{Instance: d.MIG.Instance, Profile: d.MIG.Profile, Parent: d.MIG.Parent})
		assert.Empty(t, d.MIG.SharesMemoryWith, "each slice is a GPU instance of its own")
		assert.Equal(t, w.bytes, d.MemoryBytes, w.uuid)
		assert.Equal(t, w.source, d.Sources["memory_bytes"], w.uuid)
		assert.Empty(t, d.PCIBusID, "a MIG instance is not a PCI function")
	}
}

// The H100 split 3g.40gb + 2g.20gb + 2x 1g.10gb of issue 13: the instances
// are the devices, the parent is listed but not planned on. Their memory is
// what `nvidia-smi -q` reports for each MIG device (the capture in
// testdata/machines/nvidia-mig/captures), not the profile's label.
func TestFixtureMIGInstancesAreDevices(t *testing.T) {
	reg := detectHost(t, "nvidia-mig", nil)
	gpus := devicesOfKind(reg, registry.KindCUDA)
	require.Len(t, gpus, 5)
	parent := gpus[0]
	assert.Equal(t, "cuda:0", parent.ID)
	assert.False(t, parent.Available, "a GPU in MIG mode is used through its instances")
	assert.Contains(t, parent.UnavailableReason, "MIG")
	assert.Equal(t, migInstances, parent.MIG.Children)
	assertSlices(t, reg, "cuda:0", []migSlice{
		{migInstances[0], "3g.40gb", 40448 << 20, fromQuery}, {migInstances[1], "2g.20gb", 20096 << 20, fromQuery},
		{migInstances[2], "1g.10gb", 9984 << 20, fromQuery}, {migInstances[3], "1g.10gb", 9984 << 20, fromQuery}})
	assert.Len(t, available(reg, registry.KindCUDA), 4)
	slice := gpus[3]
	require.NotNil(t, slice.MemoryFreeBytes)
	assert.Equal(t, int64(9976)<<20, *slice.MemoryFreeBytes)
	assert.Equal(t, fromQuery, slice.Sources["memory_free_bytes"])
	assert.Empty(t, reg.Warnings)
}

// CUDA_VISIBLE_DEVICES naming one 1g.10gb instance shows that slice only.
func TestFixtureMIGVisibleSlice(t *testing.T) {
	reg := detectHost(t, "nvidia-mig", map[string]string{nvidia.EnvCUDAVis: migInstances[2]})
	avail := available(reg, registry.KindCUDA)
	require.Len(t, avail, 1)
	assert.Equal(t, migInstances[2], avail[0].UUID)
	assert.Equal(t, int64(9984)<<20, avail[0].MemoryBytes)
	assert.Equal(t, "0", avail[0].VisibleAs)
}

// No `nvidia-smi -q` was captured on this machine (its fixture's nvidia-smi
// rejects it): the slices keep the profile's figure, with a fallback warning.
func TestFixtureA100PCIeTwo3gSlices(t *testing.T) {
	reg := detectHost(t, "a100-80gb-pcie-mig-2x3g", nil)
	assertSlices(t, reg, "cuda:0", []migSlice{
		{"MIG-0929581a-2be6-5dec-bf34-0954c6c529a6", "3g.40gb", 40e9, fromProfile},
		{"MIG-3adbed3a-d03d-549f-a016-ba1fd7359f23", "3g.40gb", 40e9, fromProfile}})
	w, ok := warningMentioning(reg, "cuda", "-q", "profile name")
	require.True(t, ok, "%v", reg.Warnings)
	assert.Equal(t, registry.WarnFallback, w.Code)
	assert.Len(t, available(reg, registry.KindCUDA), 2)

	reg = detectHost(t, "a100-80gb-pcie-mig-2x3g", map[string]string{nvidia.EnvCUDAVis: "MIG-0929581a-2be6-5dec-bf34-0954c6c529a6"})
	avail := available(reg, registry.KindCUDA)
	require.Len(t, avail, 1)
	assert.Equal(t, "MIG-0929581a-2be6-5dec-bf34-0954c6c529a6", avail[0].UUID)
}

// GPU 0 split into four 1g.20gb instances beside three whole A100s.
func TestFixtureA100SXMMIGOnGPU0(t *testing.T) {
	reg := detectHost(t, "a100-sxm4-80gb-x4-mig-gpu0", nil)
	avail := available(reg, registry.KindCUDA)
	require.Len(t, avail, 7)
	whole := 0
	for _, d := range avail {
		if d.MIG == nil || d.MIG.Instance == "" {
			whole++
			assert.Equal(t, int64(81920)<<20, d.MemoryBytes)
		}
	}
	assert.Equal(t, 3, whole)
	assertSlices(t, reg, "cuda:0", []migSlice{
		{"MIG-ce861fb0-a248-58ce-a9a8-f9adbc22a66a", "1g.20gb", 20e9, fromProfile}, {"MIG-a45882f0-9215-5733-a0c1-49286ab31cb5", "1g.20gb", 20e9, fromProfile},
		{"MIG-f00d722c-f4e1-52c9-aa31-750441ae1bfe", "1g.20gb", 20e9, fromProfile}, {"MIG-930574a9-d43a-5d2b-95da-3e68384c8d6b", "1g.20gb", 20e9, fromProfile}})
}

// NVLink pairs from `topo -m` join whole GPUs, never a MIG instance of one
// (the matrix has one column per physical GPU).
func TestNVIDIAMIGInstancesNotInNVLinkPairs(t *testing.T) {
	listing := "GPU 0: NVIDIA A100-SXM4-80GB (UUID: GPU-9c73eb7b-8d6d-6c0e-dc13-97873e2ede40)\n" +
		"  MIG 1g.10gb     Device  0: (UUID: MIG-a686709d-6dc2-542a-8851-0d2508448c10)\n" +
		"GPU 1: NVIDIA A100-SXM4-80GB (UUID: GPU-c92e2d5d-4a69-f1cd-4df0-305f8606705a)\n"
	fake := &fakeNvidiaSMI{answers: map[string]machine.Result{
		queryArgv(nvidia.NVQueryFields): ok(
			"0, NVIDIA A100-SXM4-80GB, GPU-9c73eb7b-8d6d-6c0e-dc13-97873e2ede40, 00000000:01:00.0, 81920, 81000, 550.54.15, 8.0, Enabled\n" +
				"1, NVIDIA A100-SXM4-80GB, GPU-c92e2d5d-4a69-f1cd-4df0-305f8606705a, 00000000:91:00.0, 81920, 81000, 550.54.15, 8.0, Disabled\n"),
		"-L":      ok(listing),
		"topo -m": ok("\t\x1b[4mGPU0\tGPU1\x1b[0m\nGPU0\t X \tNV12\nGPU1\tNV12\t X \n"),
	}}
	reg := detectNVWith(t, "two-nvidia", fake, nil)
	require.Len(t, reg.SystemIO.Interconnects, 1)
	byID := map[string]registry.Device{}
	for _, d := range reg.Devices {
		byID[d.ID] = d
	}
	for _, id := range reg.SystemIO.Interconnects[0].Devices {
		d := byID[id]
		assert.True(t, d.MIG == nil || d.MIG.Instance == "", "%s is a MIG instance", id)
	}
}
