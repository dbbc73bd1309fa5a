package plan

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// buildPools groups available devices by kind and vendor, drops devices
// that are unavailable or not wanted, and finds the high-bandwidth domains
// (NVLink figures are both directions: a device's link is half).
func TestBuildPoolsGroupsDevicesAndDomains(t *testing.T) {
	devs := []registry.Device{host(512 * gibBytes)}
	for i := 0; i < 6; i++ {
		devs = append(devs, h100(i))
	}
	devs = append(devs, mi300x(0))
	devs[6].Available = false // cuda:5
	r := reg(t, devs,
		link(registry.LinkNVLink, 900, "cuda:0", "cuda:1", "cuda:2"),
		link(registry.LinkNVLink, 600, "cuda:3", "cuda:4"),
		link("infiniband", 400, "cuda:0", "cuda:3"))

	pools := buildPools(r, 0, "", engineRule{}, nil)
	require.Len(t, pools, 3)
	assert.Equal(t, registry.KindCPU, pools[0].Kind, "registry order")
	nv := pools[1]
	assert.Equal(t, "cuda_gpu (nvidia)", nv.label())
	var ids []string
	for _, d := range nv.Devices {
		ids = append(ids, d.ID)
	}
	assert.Equal(t, []string{"cuda:0", "cuda:1", "cuda:2", "cuda:3", "cuda:4"}, ids, "cuda:5 is unavailable")
	require.Len(t, nv.Domains, 2, "InfiniBand joins no domain")
	assert.Len(t, nv.Domains[0], 3)
	assert.Equal(t, 450.0, nv.Domains[0][0].LinkGBs)
	assert.Equal(t, 300.0, nv.Domains[1][0].LinkGBs)
	assert.Equal(t, 1, nv.Devices[3].Domain)
	assert.Equal(t, "rocm_gpu (amd)", pools[2].label())

	wanted := buildPools(r, 0, "node1/", engineRule{}, map[string]bool{"node1/cuda:1": true, "node1/cuda:2": true})
	require.Len(t, wanted, 1)
	assert.Len(t, wanted[0].Devices, 2)
	assert.Equal(t, "node1/cuda:1", wanted[0].Devices[0].ID)
	require.Len(t, wanted[0].Domains, 1, "the wanted part of a domain is still a domain")

	orderPools(pools)
	assert.Equal(t, []registry.Kind{registry.KindCUDA, registry.KindROCm, registry.KindCPU},
		[]registry.Kind{pools[0].Kind, pools[1].Kind, pools[2].Kind},
		"accelerators first, the most usable memory first (5 H100s over one MI300X), the CPU last")
}

// A MIG slice is a device of its own that cannot exchange tensors with the
// other slices of its GPU (NVIDIA MIG user guide, "Application
// Considerations": no CUDA IPC or peer-to-peer between GPU instances), so
// every slice is a pool of one: a model too big for any slice does not fit,
// it is not split over slices.
func TestMIGSlicesAreNeverCombined(t *testing.T) {
	slice := func(i int, profile string, mem int64) registry.Device {
		d := h100(i)
		d.Name = "NVIDIA H100 80GB HBM3 MIG " + profile
		d.MemoryBytes = mem
		d.MIG = &registry.MIG{Instance: fmt.Sprintf("MIG-%d", i), Profile: profile, Parent: "cuda:9"}
		return d
	}
	r := reg(t, []registry.Device{slice(0, "3g.40gb", 40e9), slice(1, "2g.20gb", 20e9), slice(2, "1g.10gb", 10e9)})
	pools := buildPools(r, 0, "", engineRule{}, nil)
	require.Len(t, pools, 3)
	for _, p := range pools {
		assert.Len(t, p.Devices, 1)
	}
	ans := shard(t, request(t, `{"model":{"params_b":50},"quant":"int8"}`, r))
	assert.False(t, ans.Fits.Yes(), "50B int8 (~52 GB) fits no single slice, only slices 0 and 1 together: %s", dump(t, ans))
	ans = shard(t, request(t, `{"model":{"params_b":8},"quant":"bf16"}`, r))
	require.True(t, ans.Fits.Yes(), dump(t, ans))
	require.Len(t, ans.Shards, 1)
	assert.Equal(t, "cuda:0", ans.Shards[0].DeviceID, "on the largest slice")
}

// An integrated GPU (memory shared with the host) never joins a split with
// a discrete GPU of the same kind and vendor: its memory is host RAM and
// its bandwidth a fraction of the discrete card's.
func TestSharedMemoryGPUIsNotASplitPartnerOfADiscreteOne(t *testing.T) {
	dgpu := gpu(registry.KindROCm, 0, "AMD Radeon RX 6800", 16<<30, "")
	dgpu.Vendor = "amd"
	apu := gpu(registry.KindROCm, 1, "AMD Radeon Graphics", 0, "")
	apu.Vendor, apu.MemoryShared, apu.MemoryUsableBytes = "amd", true, 15<<30
	r := reg(t, []registry.Device{dgpu, apu})
	pools := buildPools(r, 0, "", engineRule{}, nil)
	require.Len(t, pools, 2)
	ans := shard(t, request(t, `{"model":{"params_b":14},"quant":"bf16"}`, r))
	assert.False(t, ans.Fits.Yes(), "28 GB of bf16 would need the discrete GPU and the iGPU together: %s", dump(t, ans))
}

// AMD compute partitions are HIP devices RCCL runs collectives over, so
// partitions of one mode pool together, but never with whole GPUs: a model
// split over an SPX MI300X and a 24 GB CPX partition would run at the
// partition's pace.
func TestAMDPartitionsPoolOnlyWithPartitions(t *testing.T) {
	part := func(i int, parent string) registry.Device {
		d := mi300x(i)
		d.Name = "AMD Instinct MI300X OAM (CPX partition)"
		d.MemoryBytes = 25767706624
		idx := i
		d.Partition = &registry.Partition{Compute: "CPX", Memory: "NPS1", Index: &idx, Parent: parent}
		return d
	}
	r := reg(t, []registry.Device{mi300x(0), part(1, "rocm:9"), part(2, "rocm:9"), part(3, "rocm:10")})
	pools := buildPools(r, 0, "", engineRule{}, nil)
	require.Len(t, pools, 2)
	assert.Len(t, pools[0].Devices, 1, "the whole MI300X alone")
	assert.Len(t, pools[1].Devices, 3, "the CPX partitions, of two GPUs, together")
}

// RoCE that lists accelerators is a scale-up domain (Gaudi 2/3 on-chip
// ports; the figure is per direction, so the link is the whole of it);
// RoCE from a host NIC lists no devices and joins nothing. A scale-up
// domain is not a way out of the node: interNodeGBs counts NICs only.
func TestAcceleratorRoCEIsADomainNICRoCEIsNot(t *testing.T) {
	gaudi := func(i int) registry.Device {
		d := gpu(registry.KindGaudi, i, "Intel Gaudi 2", 96<<30, "")
		d.Vendor = "intel"
		return d
	}
	nic := registry.Interconnect{Kind: registry.LinkRoCE, Name: "mlx5_0", Devices: []string{}, BandwidthGBs: 50, State: "active"}
	r := reg(t, []registry.Device{gaudi(0), gaudi(1), gaudi(2)}, link(registry.LinkRoCE, 262.5, "gaudi:0", "gaudi:1"), nic)
	pools := buildPools(r, 0, "", engineRule{}, nil)
	require.Len(t, pools, 1)
	require.Len(t, pools[0].Domains, 1)
	assert.Len(t, pools[0].Domains[0], 2)
	assert.Equal(t, 262.5, pools[0].Domains[0][0].LinkGBs, "RoCE figures are per direction")
	assert.Equal(t, -1, pools[0].Devices[2].Domain)
	assert.Equal(t, 50.0, interNodeGBs([]*registry.Registry{r}), "the scale-up ports do not leave the node")

	nicOnly := reg(t, []registry.Device{gaudi(0), gaudi(1)}, nic)
	assert.Empty(t, buildPools(nicOnly, 0, "", engineRule{}, nil)[0].Domains)
}

// An XGMI hive is a fully connected mesh of single links (AMD CDNA 3 white
// paper: seven links join an 8-GPU MI300X platform): a device's one-peer
// rate is the link detection reports (64 GB/s each way on CDNA 3), else its
// part's (896 GB/s over seven links, halved), and the aggregate cap the
// datasheet's 896 GB/s halved. A tensor-parallel group of tp reaches its
// peers over tp-1 links: 64 GB/s for two, 192 for four, 448 for eight.
func TestXGMIHiveIsAMeshOfSingleLinks(t *testing.T) {
	devs := make([]registry.Device, 8)
	for i := range devs {
		devs[i] = mi300x(i)
	}
	reported := registry.Interconnect{Kind: registry.LinkXGMI, Devices: ids("rocm", 8), LinkBandwidthGBs: 64}
	unreported := registry.Interconnect{Kind: registry.LinkXGMI, Devices: ids("rocm", 8)}
	for name, ic := range map[string]registry.Interconnect{"detected rate": reported, "part's rate": unreported} {
		pools := buildPools(reg(t, devs, ic), 0, "", engineRule{}, nil)
		require.Len(t, pools, 1, name)
		require.Len(t, pools[0].Domains, 1, name)
		d := pools[0].Domains[0][0]
		assert.Equal(t, 448.0, d.LinkGBs, name)
		assert.Equal(t, 64.0, d.MeshLinkGBs, name)
		for tp, want := range map[int]float64{1: 448, 2: 64, 4: 192, 8: 448} {
			assert.Equal(t, want, d.tpLinkGBs(tp), "%s: TP %d", name, tp)
		}
	}

	mi308x := make([]registry.Device, 2)
	for i := range mi308x {
		mi308x[i] = gpu(registry.KindROCm, i, "AMD Instinct MI308X", 192<<30, "")
		mi308x[i].Vendor, mi308x[i].PCIID = "amd", "1002:74a2"
	}
	d := buildPools(reg(t, mi308x, registry.Interconnect{Kind: registry.LinkXGMI, Devices: ids("rocm", 2)}), 0, "", engineRule{}, nil)[0].Domains[0][0]
	assert.Zero(t, d.MeshLinkGBs, "no rate reported and none sourced for the part")
	assert.Zero(t, d.tpLinkGBs(2))

	nv := buildPools(reg(t, []registry.Device{h100(0), h100(1)}, link(registry.LinkNVSwitch, 900, "cuda:0", "cuda:1")), 0, "", engineRule{}, nil)[0].Domains[0][0]
	assert.Zero(t, nv.MeshLinkGBs, "a switch gives each GPU its whole link")
	assert.Equal(t, 450.0, nv.tpLinkGBs(2))
}
