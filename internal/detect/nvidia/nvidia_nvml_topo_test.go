//go:build linux && cgo

package nvidia

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/detect/machine"
	"github.com/ai-hwaccel/ai-hwaccel/internal/detect/nvidia/nvml"
	"github.com/ai-hwaccel/ai-hwaccel/internal/detect/nvidia/nvml/nvmltest"
	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// readNVML builds the fake library answering m and reads it once.
func readNVML(t *testing.T, m nvmltest.Machine) *nvml.Snapshot {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	lib, err := nvml.Open(ctx, nvmltest.BuildMachine(t, m))
	require.NoError(t, err)
	s, err := lib.Read(ctx)
	require.NoError(t, err)
	return s
}

// Four RTX 3090s bridged in two NVLink pairs (NV4), the other pairs over
// PCIe (PHB within a host bridge, NODE across): the captured `topo -m`
// (testdata/topo-m-quad-rtx3090-aikitoria-pr18.txt) served by the fake
// library as NVML would answer it (4 active NVLink 3.0 links from each GPU
// to its partner; each pair's common ancestor). The matrix NVML gives is the
// tool's, cell for cell, and so are the interconnects built from it. The
// capture names no bus ids: placeholders join links to GPUs. An NV4 pair's
// PCIe ancestor is NODE: GPU0 and GPU1 share a host bridge (PHB), GPU2 and
// GPU3 another, and GPU0-GPU3 is NODE.
func TestNVMLTopologyEqualsTopoM(t *testing.T) {
	capture, err := os.ReadFile(filepath.Join("testdata", "topo-m-quad-rtx3090-aikitoria-pr18.txt"))
	require.NoError(t, err)
	buses := []string{"00000000:01:00.0", "00000000:21:00.0", "00000000:41:00.0", "00000000:61:00.0"}
	topo := nvmltest.TopoFrom(capture, nvmltest.TopoOptions{Buses: buses, Version: int(nvml.NVLinkVersion3_0),
		NVPCIe: func(a, b int) int { return int(nvml.TopologyNode) }})
	m := nvmltest.Machine{Driver: "595.58.03", NVML: "13.595.58", CUDA: 13020, Ancestor: topo.Ancestor}
	var devs []nvDevice
	for i, bus := range buses {
		m.GPUs = append(m.GPUs, nvmltest.GPU{Name: "NVIDIA GeForce RTX 3090", UUID: fmt.Sprintf("GPU-%d", i), Bus: bus,
			BusLegacy: bus[4:], CCMajor: 8, CCMinor: 6, Links: topo.Links[i]})
		devs = append(devs, nvDevice{dev: registry.Device{ID: fmt.Sprintf("gpu%d", i), ComputeCapability: "8.6"}, index: i})
	}
	s := readNVML(t, m)

	want, err := ParseNvidiaTopo(capture)
	require.NoError(t, err)
	got := topoFromNVML(s, false)
	assert.Equal(t, want.GPUs, got.GPUs)
	for _, a := range want.GPUs {
		for _, b := range want.GPUs {
			if a != b {
				assert.Equal(t, want.Link(a, b), got.Link(a, b), "GPU%d-GPU%d", a, b)
			}
		}
	}
	assert.Equal(t, "PHB", got.Link(0, 1))
	assert.Equal(t, "NV4", got.Link(0, 2))

	var f machine.Findings
	viaSMI := nvidiaInterconnects(&f, capture, devs, false)
	viaNVML := nvmlInterconnects(s, devs, false)
	require.Len(t, viaSMI, 2)
	for i := range viaNVML {
		assert.Equal(t, SourceNVML, viaNVML[i].Source)
		viaNVML[i].Source = viaSMI[i].Source
	}
	assert.Equal(t, viaSMI, viaNVML)
	assert.Equal(t, []string{"gpu0", "gpu2"}, viaNVML[0].Devices)
	assert.Equal(t, 4, viaNVML[0].Links)
	assert.Zero(t, viaNVML[0].BandwidthGBs, "NVLink 3.0 on a GA102: no published per-link figure by version or compute capability 8.6")
}

// One link's bandwidth by NVLink version agrees with the compute
// capability's figure of the part table where both exist (H100: NVLink
// 4.0, compute capability 9.0), and version 3.0 has none of its own.
func TestNVLinkVersionFigures(t *testing.T) {
	h100 := nvDevice{dev: registry.Device{ComputeCapability: "9.0"}}
	assert.Equal(t, nvLinkPerLinkByCC(h100, h100), nvlinkVersionPerLinkGBs[nvml.NVLinkVersion4_0])
	assert.Equal(t, 50.0, nvlinkVersionPerLinkGBs[nvml.NVLinkVersion2_0])
	assert.Equal(t, 100.0, nvlinkVersionPerLinkGBs[nvml.NVLinkVersion5_0])
	assert.Zero(t, nvlinkVersionPerLinkGBs[nvml.NVLinkVersion3_0])
}

// MIG profile names as NVML spells a MIG device.
func TestMIGProfileFromName(t *testing.T) {
	assert.Equal(t, "1g.10gb", migProfileFromName("NVIDIA H100 80GB HBM3 MIG 1g.10gb"))
	assert.Equal(t, "1c.3g.71gb", migProfileFromName("NVIDIA H200 MIG 1c.3g.71gb"))
	assert.Equal(t, "", migProfileFromName("NVIDIA H200"))
}

// Two A100s whose 12 links each `nvidia-smi nvlink -s` prints at 25 GB/s on
// an NVSwitch machine (testdata/nvlink-s-a100-nccl-tests-228.txt, GPUs 0
// and 1; the capture is cut inside GPU 2): served by the fake as 12 active
// NVLink 3.0 links to a switch at 25000 MB/s, NVML gives the nvswitch entry
// the `nvlink -s` path gives: 12 links, 25 GB/s a link each way, 600 GB/s
// per GPU.
func TestNVMLLinkSpeedEqualsNvlinkStatus(t *testing.T) {
	capture, err := os.ReadFile(filepath.Join("testdata", "nvlink-s-a100-nccl-tests-228.txt"))
	require.NoError(t, err)
	status := ParseNvlinkStatus(capture)
	require.GreaterOrEqual(t, len(status), 2)
	m := nvmltest.Machine{Driver: "550.54.15", NVML: "12.550.54.15", CUDA: 12040}
	var devs []nvDevice
	for i, g := range status[:2] {
		bus := fmt.Sprintf("00000000:%02X:00.0", 0x10*(i+1)) // the capture names no bus id
		gpu := nvmltest.GPU{Name: "NVIDIA A100-SXM4-80GB", UUID: g.UUID, Bus: bus, BusLegacy: bus[4:], CCMajor: 8,
			LinkSpeedMBps: int(g.Speeds[0] * 1000)}
		for range g.Speeds {
			gpu.Links = append(gpu.Links, nvmltest.Link{Active: true, Version: int(nvml.NVLinkVersion3_0),
				RemoteBus: "00000000:C4:00.0", RemoteType: 2})
		}
		m.GPUs = append(m.GPUs, gpu)
		devs = append(devs, nvDevice{dev: registry.Device{ID: fmt.Sprintf("gpu%d", i), Name: gpu.Name, UUID: g.UUID,
			MemoryBytes: 81920 << 20, ComputeCapability: "8.0", Available: true}, index: i})
	}
	viaStatus, ok := nvlinkFromStatus(status, devs, true)
	require.True(t, ok)
	require.Len(t, viaStatus, 1)
	viaNVML := nvmlInterconnects(readNVML(t, m), devs, false)
	require.Len(t, viaNVML, 1, "the links' remote type says NVSwitch")
	assert.Equal(t, registry.Interconnect{Kind: registry.LinkNVSwitch, Devices: []string{"gpu0", "gpu1"}, Links: 12,
		BandwidthGBs: 600, LinkBandwidthGBs: 25, Source: SourceNVML}, viaNVML[0])
	viaNVML[0].Source = viaStatus[0].Source
	assert.Equal(t, viaStatus[0], viaNVML[0])
}
