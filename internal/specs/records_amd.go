package specs

// navi31Identity cites the id the RX 7900 boards share and their gfx target.
const navi31Identity = "PCI id: 1002:744c \"Navi 31 [Radeon RX 7900 XT/7900 XTX/7900 GRE/7900M]\" https://pci-ids.ucw.cz/read/PC/1002/744c; " +
	"gfx target gfx1100 (Radeon RX 7900 XTX, XT, GRE): " + rocmGPUSpecs

// rocmGPUSpecs is AMD's table of Instinct, Radeon PRO and Radeon GPUs: memory
// in GiB and gfx target per board.
const rocmGPUSpecs = "https://github.com/ROCm/ROCm docs/reference/gpu-arch-specs.rst @ e396b489 (AMD GPU specifications, \"VRAM (GiB)\" and \"LLVM target name\")"

// amdRecords are the AMD records of the part table (records.go says how the
// table is kept and what its fields hold).
// mi325xPeaks and mi355xPeaks cite the dense tensor peaks of the MI325X
// and MI355X: a secondary table of peaks "w/o sparsity" (no AMD page was
// opened here). Its note 22 says the MI355X figures are AMD's dense ones
// ("AMD also publishes `with Structured Sparsity` variants at exactly 2x");
// note 18, that the MI325X is "the same compute as MI300X".
const (
	mi325xPeaks = "secondary table (no AMD page opened): https://github.com/stas00/ml-engineering compute/accelerator/README.md @ 744d01e1 " +
		"(table \"TFLOPS comparison table\", \"theoretical peak TFLOPS specs ... (w/o sparsity)\": " +
		"\"AMD MI325X | 163.4 | 653.7 | 1300 | 1300 | 2610 | 2600 |\" for fp32, tf32, fp16, bf16, fp8, int8; note 18 cites https://www.amd.com/en/products/accelerators/instinct/mi300/mi325x.html)"
	mi355xPeaks = "secondary table (no AMD page opened): https://github.com/stas00/ml-engineering compute/accelerator/README.md @ 744d01e1 " +
		"(table \"TFLOPS comparison table\", \"theoretical peak TFLOPS specs ... (w/o sparsity)\": " +
		"\"AMD MI355X | 157.3 | ? | 2500 | 2500 | 5000 | 5000 |\" for fp32, tf32, fp16, bf16, fp8, int8; note 22: \"these are AMD's dense figures\", " +
		"citing https://www.amd.com/en/products/accelerators/instinct/mi350/mi355x.html)"
)

// cdna3InfinityFabric cites the Infinity Fabric figures of the MI300X and
// MI325X: AMD's CDNA 3 white paper, Table 2 ("AMD Instinct MI300 Series
// accelerators specifications and features"), whose MI300X and MI325X
// columns read "DEVICE I/O CONNECTIONS 7 x16 AMD Infinity Fabric links, 1x16
// PCIe Gen 5 to host CPU" and "P2P RING PEAK AGGREGATE I/O BANDWIDTH 896
// GB/s (8 GPUs)"; its "Communication and scaling" section: the links
// "operate at up to 32Gbps" and "these seven ... links ... form a fully
// connected 8-GPU system". 896 GB/s is 7 links x 16 lanes x 32 Gbps / 8 x 2
// directions: the bidirectional sum over the GPU's seven GPU-to-GPU links,
// the convention of NVIDIA's "900 GB/s" NVLink per H100 (18 links x 25 GB/s
// x 2). AMD's product pages list the same link as "Peak Infinity Fabric
// Link Bandwidth 128 GB/s" (both directions; secondary copies, no AMD page
// opened here).
const cdna3InfinityFabric = "https://www.amd.com/content/dam/amd/en/documents/instinct-tech-docs/white-papers/amd-cdna-3-white-paper.pdf " +
	"(PID#2258402-B, read via a stored copy; Table 2: \"7 x16 AMD Infinity Fabric links\", \"P2P RING PEAK AGGREGATE I/O BANDWIDTH ... 896 GB/s (8 GPUs)\"; " +
	"\"Communication and scaling\": links \"up to 32Gbps\", seven links \"form a fully connected 8-GPU system\")"

var amdRecords = []Spec{
	{Name: "AMD Instinct MI300X", Vendor: "AMD", Category: DatacenterGPU, Memory: MemoryHBM3,
		PCIIDs: []string{"1002:74a1"},
		Arch:   "gfx942", IdentitySource: "ROCm docs/reference/gpu-arch-specs.rst (https://rocm.docs.amd.com/en/latest/reference/gpu-arch-specs.html); PCI id 1002:74a1 \"Aqua Vanjaram [Instinct MI300X]\" https://pci-ids.ucw.cz/read/PC/1002/74a1",
		Aliases:     []string{"AMD Instinct MI300X OAM", "MI300X"},
		MemoryBytes: 206158430208, MemoryUnit: "GiB",
		BandwidthGBs: 5300,
		BF16TFLOPS:   1307.4, FP16TFLOPS: 1307.4, FP8TFLOPS: 2614.9, INT8TOPS: 2614.9,
		Interconnect: "AMD Infinity Fabric (XGMI), 7 links", InterconnectGBs: 896,
		Source: "https://github.com/ROCm/ROCm docs/conceptual/gpu-arch/mi300.md @ e396b489 (table \"Peak-performance capabilities of the MI300X\")",
		FigureSources: map[string]string{
			"MemoryBytes":     "https://github.com/ROCm/ROCm docs/reference/gpu-arch-specs.rst @ e396b489 (column \"VRAM (GiB)\", \"Compute Units\")",
			"Interconnect":    cdna3InfinityFabric,
			"InterconnectGBs": cdna3InfinityFabric,
		},
	},
	{Name: "AMD Instinct MI250X", Vendor: "AMD", Category: DatacenterGPU, Memory: MemoryHBM2e,
		PCIIDs:         []string{"1002:7408"},
		IdentitySource: "PCI ids: 1002:7408 \"Aldebaran/MI200 [Instinct MI250X]\" https://pci-ids.ucw.cz/read/PC/1002/7408",
		Aliases:        []string{"AMD Instinct MI250X"},
		MemoryBytes:    128000000000, MemoryUnit: "GB",
		BandwidthGBs: 3200,
		BF16TFLOPS:   383, FP16TFLOPS: 383, INT8TOPS: 383,
		Interconnect: "AMD Infinity Fabric (up to 8 links)", InterconnectGBs: 0,
		Source: "https://zexron.com/amd-mi250-x-aldebaran-as-mcm-with-up-to-479-teraflop-s-and-560-watt-tdp",
	},
	// 1002:740c is "Instinct MI250X/MI250" in pci.ids: the two share memory
	// and bandwidth; MI250X boards also carry 1002:7408 (record above).
	{Name: "AMD Instinct MI250", Vendor: "AMD", Category: DatacenterGPU, Memory: MemoryHBM2e,
		PCIIDs:         []string{"1002:740c"},
		IdentitySource: "PCI ids: 1002:740c \"Aldebaran/MI200 [Instinct MI250X/MI250]\" https://pci-ids.ucw.cz/read/PC/1002/740c",
		Aliases:        []string{"AMD Instinct MI250"},
		MemoryBytes:    128000000000, MemoryUnit: "GB",
		BandwidthGBs: 3200,
		BF16TFLOPS:   362.1, FP16TFLOPS: 362.1, INT8TOPS: 362.1,
		Interconnect: "AMD Infinity Fabric, 6 links", InterconnectGBs: 0,
		Source: "https://github.com/ROCm/ROCm docs/conceptual/gpu-arch/mi250.md @ e396b489",
		FigureSources: map[string]string{
			"Interconnect": "https://www.anandtech.com/show/17326/amd-releases-instinct-mi210-accelerator-cdna-2-on-a-pcie-card (read via a mirror copy; table \"AMD Instinct Accelerators\")",
			"MemoryBytes":  "https://www.anandtech.com/show/17326/amd-releases-instinct-mi210-accelerator-cdna-2-on-a-pcie-card (read via a mirror copy; table \"AMD Instinct Accelerators\")",
		},
	},
	{Name: "AMD Instinct MI210", Vendor: "AMD", Category: DatacenterGPU, Memory: MemoryHBM2e,
		PCIIDs:         []string{"1002:740f"},
		IdentitySource: "PCI ids: 1002:740f \"Aldebaran/MI200 [Instinct MI210]\" https://pci-ids.ucw.cz/read/PC/1002/740f",
		Aliases:        []string{"AMD Instinct MI210"},
		MemoryBytes:    64000000000, MemoryUnit: "GB",
		BandwidthGBs: 1600,
		BF16TFLOPS:   181, FP16TFLOPS: 181, INT8TOPS: 181,
		Interconnect: "AMD Infinity Fabric, 3 links", InterconnectGBs: 0,
		Source: "https://www.anandtech.com/show/17326/amd-releases-instinct-mi210-accelerator-cdna-2-on-a-pcie-card (read via a mirror copy; table \"AMD Instinct Accelerators\")",
	},
	// RX 7900 XTX, XT and GRE share 1002:744c (pci.ids "Navi 31 [Radeon RX
	// 7900 XT/7900 XTX/7900 GRE/7900M]"); the id's own record below names it
	// as pci.ids does, and ByPCIIDMemory picks the board by its VRAM.
	{Name: "AMD Radeon RX 7900 XTX", Vendor: "AMD", Category: ConsumerGPU, Memory: MemoryGDDR6,
		SharedPCIIDs:   []string{"1002:744c"},
		ProductName:    "AMD Radeon RX 7900 XTX",
		Arch:           "gfx1100",
		IdentitySource: navi31Identity,
		Aliases:        []string{"Radeon RX 7900 XTX"},
		MemoryBytes:    24000000000, MemoryUnit: "GB",
		BandwidthGBs: 960,
		Source:       "https://pcper.com/2022/12/amd-radeon-rx-7900-xtx-and-rx-7900-xt-review/",
		FigureSources: map[string]string{
			"BandwidthGBs": "https://ctechmag.com/amd-radeon-rx-7900-xtx/ (note: this page misstates the stream-processor count)",
		},
	},
	{Name: "AMD Radeon RX 7900 XT", Vendor: "AMD", Category: ConsumerGPU, Memory: MemoryGDDR6,
		SharedPCIIDs:   []string{"1002:744c"},
		ProductName:    "AMD Radeon RX 7900 XT",
		Arch:           "gfx1100",
		IdentitySource: navi31Identity,
		Aliases:        []string{"Radeon RX 7900 XT"},
		MemoryBytes:    20 << 30, MemoryUnit: "GiB",
		BandwidthGBs: 800,
		Source:       rocmGPUSpecs,
		FigureSources: map[string]string{
			"BandwidthGBs": "https://pcper.com/2022/12/amd-radeon-rx-7900-xtx-and-rx-7900-xt-review/ (AMD's table: 20GB GDDR6, 20 Gbps); " +
				"https://raytubefixes.com/amd-radeon-rx-7900-xt-the-ultimate-gaming-graphics-card/ (320-bit interface, 20GB, \"overall memory bandwidth of 800GB/sec\"; 320 bit x 20 Gbps / 8 = 800 GB/s)",
		},
	},
	{Name: "AMD Radeon RX 7900 GRE", Vendor: "AMD", Category: ConsumerGPU, Memory: MemoryGDDR6,
		SharedPCIIDs:   []string{"1002:744c"},
		ProductName:    "AMD Radeon RX 7900 GRE",
		Arch:           "gfx1100",
		IdentitySource: navi31Identity,
		Aliases:        []string{"Radeon RX 7900 GRE"},
		MemoryBytes:    16 << 30, MemoryUnit: "GiB",
		BandwidthGBs: 576,
		Source:       rocmGPUSpecs,
		FigureSources: map[string]string{
			"BandwidthGBs": "https://www.cnews.cz/clanky/radeon-rx-7900-gre-vydan-specifikace-tdp-a-cena-bude-k-dostani-i-u-nas-pres-oem-trh/ (AMD's specification table: 16 GB GDDR6, 256-bit, 18 Gbps, 576 GB/s)",
		},
	},
	{Name: "AMD Navi 31 (Radeon RX 7900 XT / XTX / GRE / 7900M)", Vendor: "AMD", Category: ConsumerGPU,
		PCIIDs:         []string{"1002:744c"},
		ProductName:    "AMD Navi 31 [Radeon RX 7900 XT/7900 XTX/7900 GRE/7900M]",
		Arch:           "gfx1100",
		IdentitySource: navi31Identity,
	},
	{Name: "AMD Radeon 780M", Vendor: "AMD", Category: IntegratedGPU, Memory: MemorySystem,
		PCIIDs: []string{"1002:15bf"},
		Arch:   "gfx1103", IdentitySource: "vulkaninfo deviceName (RADV names it GFX1103_R1: Mesa src/amd/common/amd_family.c, https://gitlab.freedesktop.org/mesa/mesa); PCI id: 1002:15bf \"Phoenix1\" https://pci-ids.ucw.cz/read/PC/1002/15bf",
	},
	{Name: "AMD Instinct MI325X", Vendor: "AMD", Category: DatacenterGPU, Memory: MemoryHBM3e,
		PCIIDs:         []string{"1002:74a5"},
		IdentitySource: "PCI id: 1002:74a5 \"Aqua Vanjaram [Instinct MI325X]\" https://pci-ids.ucw.cz/read/PC/1002/74a5",
		MemoryBytes:    256 << 30, MemoryUnit: "GiB",
		Source: "AMD GPU specifications, Instinct table, \"MI325X | CDNA3 | gfx942 | 256\" (VRAM (GiB)): https://rocm.docs.amd.com/en/7.13.0-preview/reference/gpu-specs.html; " +
			"bandwidth 6 TB/s from a secondary table (no vendor page opened states it): https://github.com/stas00/ml-engineering/blob/master/compute/accelerator/README.md#accelerator-memory-size-and-speed (table \"Generally available\", revision of 2026-07-29)",
		BandwidthGBs: 6000,
		BF16TFLOPS:   1300, FP16TFLOPS: 1300, FP8TFLOPS: 2610, INT8TOPS: 2600,
		Interconnect: "AMD Infinity Fabric (XGMI), 7 links", InterconnectGBs: 896,
		FigureSources: map[string]string{
			"BF16TFLOPS": mi325xPeaks, "FP16TFLOPS": mi325xPeaks, "FP8TFLOPS": mi325xPeaks, "INT8TOPS": mi325xPeaks,
			"Interconnect": cdna3InfinityFabric, "InterconnectGBs": cdna3InfinityFabric,
		},
	},
	{Name: "AMD Instinct MI355X", Vendor: "AMD", Category: DatacenterGPU, Memory: MemoryHBM3e,
		PCIIDs:         []string{"1002:75a3"},
		IdentitySource: "PCI id: 1002:75a3 \"Aqua Vanjaram [Instinct MI355X]\" https://pci-ids.ucw.cz/read/PC/1002/75a3",
		MemoryBytes:    288 << 30, MemoryUnit: "GiB",
		Source: "AMD GPU specifications, Instinct table, \"MI355X | CDNA4 | gfx950 | 288\" (VRAM (GiB)): https://rocm.docs.amd.com/en/7.13.0-preview/reference/gpu-specs.html; " +
			"bandwidth 8 TB/s from a secondary table (no vendor page opened states it): https://github.com/stas00/ml-engineering/blob/master/compute/accelerator/README.md#accelerator-memory-size-and-speed (table \"Generally available\", revision of 2026-07-29)",
		BandwidthGBs: 8000,
		BF16TFLOPS:   2500, FP16TFLOPS: 2500, FP8TFLOPS: 5000, INT8TOPS: 5000,
		FigureSources: map[string]string{
			"BF16TFLOPS": mi355xPeaks, "FP16TFLOPS": mi355xPeaks, "FP8TFLOPS": mi355xPeaks, "INT8TOPS": mi355xPeaks,
		},
	},
	// Integrated GPUs of AMD APUs and desktop CPUs (Zen 1 to Zen 5): identity
	// only. They have no memory of their own (the BIOS carve-out and GTT are
	// system memory) and no datasheet figure here, so no lookup by name or
	// for figures finds them; ByPCIID does. Names and ids from the PCI ID
	// repository (https://pci-ids.ucw.cz, pciutils/pciids @ c1c12547).
	{Name: "AMD Raven Ridge APU graphics (Radeon Vega)", Vendor: "AMD", Category: IntegratedGPU, Memory: MemorySystem,
		PCIIDs:         []string{"1002:15dd"},
		Arch:           "gfx902",
		IdentitySource: "gfx target gfx902: https://llvm.org/docs/AMDGPUUsage.html#processors; 1002:15dd \"Raven Ridge [Radeon Vega Series / Radeon Vega Mobile Series]\" https://pci-ids.ucw.cz/read/PC/1002/15dd",
	},
	{Name: "AMD Picasso / Raven 2 APU graphics (Radeon Vega)", Vendor: "AMD", Category: IntegratedGPU, Memory: MemorySystem,
		PCIIDs:         []string{"1002:15d8"},
		Arch:           "gfx902",
		IdentitySource: "gfx target gfx902: https://llvm.org/docs/AMDGPUUsage.html#processors; 1002:15d8 \"Picasso/Raven 2 [Radeon Vega Series / Radeon Vega Mobile Series]\" https://pci-ids.ucw.cz/read/PC/1002/15d8",
	},
	{Name: "AMD Renoir APU graphics (Radeon Vega)", Vendor: "AMD", Category: IntegratedGPU, Memory: MemorySystem,
		PCIIDs:         []string{"1002:1636"},
		Arch:           "gfx90c",
		IdentitySource: "gfx target gfx90c: https://llvm.org/docs/AMDGPUUsage.html#processors; 1002:1636 \"Renoir [Radeon Vega Series / Radeon Vega Mobile Series]\" https://pci-ids.ucw.cz/read/PC/1002/1636",
	},
	{Name: "AMD Lucienne APU graphics", Vendor: "AMD", Category: IntegratedGPU, Memory: MemorySystem,
		PCIIDs:         []string{"1002:164c"},
		Arch:           "gfx90c",
		IdentitySource: "gfx target gfx90c: https://llvm.org/docs/AMDGPUUsage.html#processors; 1002:164c \"Lucienne\" https://pci-ids.ucw.cz/read/PC/1002/164c",
	},
	{Name: "AMD Cezanne APU graphics (Radeon Vega)", Vendor: "AMD", Category: IntegratedGPU, Memory: MemorySystem,
		PCIIDs:         []string{"1002:1638"},
		Arch:           "gfx90c",
		IdentitySource: "gfx target gfx90c: https://llvm.org/docs/AMDGPUUsage.html#processors; 1002:1638 \"Cezanne [Radeon Vega Series / Radeon Vega Mobile Series]\" https://pci-ids.ucw.cz/read/PC/1002/1638",
	},
	{Name: "AMD Barcelo APU graphics", Vendor: "AMD", Category: IntegratedGPU, Memory: MemorySystem,
		PCIIDs:         []string{"1002:15e7"},
		Arch:           "gfx90c",
		IdentitySource: "gfx target gfx90c: https://llvm.org/docs/AMDGPUUsage.html#processors; 1002:15e7 \"Barcelo\" https://pci-ids.ucw.cz/read/PC/1002/15e7",
	},
	{Name: "AMD Rembrandt APU graphics (Radeon 680M)", Vendor: "AMD", Category: IntegratedGPU, Memory: MemorySystem,
		PCIIDs:         []string{"1002:164d", "1002:1681"},
		Arch:           "gfx1035",
		IdentitySource: "gfx target gfx1035: https://llvm.org/docs/AMDGPUUsage.html#processors; 1002:164d \"Rembrandt\" https://pci-ids.ucw.cz/read/PC/1002/164d; 1002:1681 \"Rembrandt [Radeon 680M]\" https://pci-ids.ucw.cz/read/PC/1002/1681",
	},
	{Name: "AMD Mendocino APU graphics (Radeon 610M)", Vendor: "AMD", Category: IntegratedGPU, Memory: MemorySystem,
		PCIIDs:         []string{"1002:1506"},
		Arch:           "gfx1037",
		IdentitySource: "gfx target gfx1037: https://llvm.org/docs/AMDGPUUsage.html#processors; 1002:1506 \"Mendocino [Radeon 610M]\" https://pci-ids.ucw.cz/read/PC/1002/1506",
	},
	{Name: "AMD Raphael CPU graphics", Vendor: "AMD", Category: IntegratedGPU, Memory: MemorySystem,
		PCIIDs:         []string{"1002:164e"},
		Arch:           "gfx1036",
		IdentitySource: "gfx target gfx1036: https://llvm.org/docs/AMDGPUUsage.html#processors; 1002:164e \"Raphael\" https://pci-ids.ucw.cz/read/PC/1002/164e",
	},
	{Name: "AMD Granite Ridge CPU graphics", Vendor: "AMD", Category: IntegratedGPU, Memory: MemorySystem,
		PCIIDs:         []string{"1002:13c0"},
		Arch:           "gfx1036",
		IdentitySource: "gfx target gfx1036: https://llvm.org/docs/AMDGPUUsage.html#processors; 1002:13c0 \"Granite Ridge [Radeon Graphics]\" https://pci-ids.ucw.cz/read/PC/1002/13c0",
	},
	{Name: "AMD Phoenix APU graphics", Vendor: "AMD", Category: IntegratedGPU, Memory: MemorySystem,
		PCIIDs:         []string{"1002:164f"},
		Arch:           "gfx1103",
		IdentitySource: "gfx target gfx1103: https://llvm.org/docs/AMDGPUUsage.html#processors; 1002:164f \"Phoenix\" https://pci-ids.ucw.cz/read/PC/1002/164f",
	},
	{Name: "AMD Phoenix2 APU graphics", Vendor: "AMD", Category: IntegratedGPU, Memory: MemorySystem,
		PCIIDs:         []string{"1002:15c8"},
		Arch:           "gfx1103",
		IdentitySource: "gfx target gfx1103: https://llvm.org/docs/AMDGPUUsage.html#processors; 1002:15c8 \"Phoenix2\" https://pci-ids.ucw.cz/read/PC/1002/15c8",
	},
	{Name: "AMD Hawk Point APU graphics", Vendor: "AMD", Category: IntegratedGPU, Memory: MemorySystem,
		PCIIDs:         []string{"1002:1900", "1002:1901"},
		Arch:           "gfx1103",
		IdentitySource: "gfx target gfx1103: https://llvm.org/docs/AMDGPUUsage.html#processors; 1002:1900 \"HawkPoint1\" https://pci-ids.ucw.cz/read/PC/1002/1900; 1002:1901 \"HawkPoint2\" https://pci-ids.ucw.cz/read/PC/1002/1901",
	},
	{Name: "AMD Strix Point APU graphics (Radeon 880M / 890M)", Vendor: "AMD", Category: IntegratedGPU, Memory: MemorySystem,
		PCIIDs:         []string{"1002:150e"},
		Arch:           "gfx1150",
		IdentitySource: "gfx target gfx1150: https://llvm.org/docs/AMDGPUUsage.html#processors; 1002:150e \"Strix [Radeon 880M / 890M]\" https://pci-ids.ucw.cz/read/PC/1002/150e",
	},
	{Name: "AMD Krackan Point APU graphics (Radeon 840M / 860M)", Vendor: "AMD", Category: IntegratedGPU, Memory: MemorySystem,
		PCIIDs:         []string{"1002:1114", "1002:1902"},
		ProductName:    "AMD Krackan [Radeon 840M / 860M Graphics]",
		Arch:           "gfx1152",
		IdentitySource: "gfx target gfx1152: https://llvm.org/docs/AMDGPUUsage.html#processors; 1002:1114 \"Krackan [Radeon 840M / 860M Graphics]\" https://pci-ids.ucw.cz/read/PC/1002/1114; 1002:1902 \"Krackan2\" https://pci-ids.ucw.cz/read/PC/1002/1902",
	},
	{Name: "AMD Strix Halo APU graphics (Radeon 8050S / 8060S)", Vendor: "AMD", Category: IntegratedGPU, Memory: MemorySystem,
		PCIIDs:         []string{"1002:1586"},
		ProductName:    "AMD Strix Halo [Radeon Graphics / Radeon 8050S Graphics / Radeon 8060S Graphics]",
		Arch:           "gfx1151",
		IdentitySource: "gfx target gfx1151: https://llvm.org/docs/AMDGPUUsage.html#processors; 1002:1586 \"Strix Halo [Radeon Graphics / Radeon 8050S Graphics / Radeon 8060S Graphics]\" https://pci-ids.ucw.cz/read/PC/1002/1586",
	},
	// MI308X: the CDNA3 part sold in China (mi308x-8-cpx). AMD publishes no
	// datasheet for it and the ROCm GPU specifications table does not list
	// it: no memory, bandwidth or gfx target is sourced (a CPX partition's
	// memory is what amdgpu reports per partition).
	{Name: "AMD Instinct MI308X", Vendor: "AMD", Category: DatacenterGPU, Memory: MemoryHBM3,
		PCIIDs:         []string{"1002:74a2"},
		ProductName:    "AMD Instinct MI308X",
		IdentitySource: "PCI id: 1002:74a2 \"Aqua Vanjaram [Instinct MI308X]\" https://pci-ids.ucw.cz/read/PC/1002/74a2",
	},
	{Name: "AMD Instinct MI100", Vendor: "AMD", Category: DatacenterGPU, Memory: MemoryHBM2,
		PCIIDs:         []string{"1002:738c", "1002:738e"},
		ProductName:    "AMD Instinct MI100",
		Arch:           "gfx908",
		IdentitySource: "PCI ids: 1002:738c \"Arcturus GL-XL [Instinct MI100]\" https://pci-ids.ucw.cz/read/PC/1002/738c; 1002:738e \"Arcturus GL-XL [Instinct MI100]\" https://pci-ids.ucw.cz/read/PC/1002/738e; gfx target gfx908: https://rocm.docs.amd.com/en/latest/reference/gpu-arch-specs.html",
		Aliases:        []string{"AMD Instinct MI100"},
		MemoryBytes:    32 << 30, MemoryUnit: "GiB",
		Source: rocmGPUSpecs,
	},
	{Name: "AMD Instinct MI300A", Vendor: "AMD", Category: DatacenterGPU, Memory: MemoryHBM3,
		PCIIDs:         []string{"1002:74a0"},
		ProductName:    "AMD Instinct MI300A",
		Arch:           "gfx942",
		IdentitySource: "PCI ids: 1002:74a0 \"Aqua Vanjaram [Instinct MI300A]\" https://pci-ids.ucw.cz/read/PC/1002/74a0; gfx target gfx942: https://rocm.docs.amd.com/en/latest/reference/gpu-arch-specs.html",
		Aliases:        []string{"AMD Instinct MI300A"},
		MemoryBytes:    128 << 30, MemoryUnit: "GiB",
		BandwidthGBs:  5300,
		Source:        rocmGPUSpecs,
		FigureSources: map[string]string{"BandwidthGBs": "https://estaterule.ru/news/amd-vypuskaet-samyj-bolshoj-i-slozhnyj-v-mire-gpu-so-192-gb-pamjati-i-gigantskij-apu-so-128-gb-na-rynok-vyhodjat-chipy-instinct-mi300a-i-instinct-mi300x (MI300A: 128 GB HBM3, 5.3 TB/s)"},
	},
	{Name: "AMD Radeon RX 6800 / 6800 XT / 6900 XT", Vendor: "AMD", Category: ConsumerGPU, Memory: MemoryGDDR6,
		PCIIDs:         []string{"1002:73bf"},
		Arch:           "gfx1030",
		IdentitySource: "PCI ids: 1002:73bf \"Navi 21 [Radeon RX 6800/6800 XT / 6900 XT]\" https://pci-ids.ucw.cz/read/PC/1002/73bf; gfx target gfx1030: https://rocm.docs.amd.com/en/latest/reference/gpu-arch-specs.html",
		Aliases:        []string{"AMD Radeon RX 6800", "AMD Radeon RX 6800 XT", "AMD Radeon RX 6900 XT"},
		MemoryBytes:    16 << 30, MemoryUnit: "GiB",
		Source: rocmGPUSpecs,
	},
	{Name: "AMD Radeon RX 6950 XT", Vendor: "AMD", Category: ConsumerGPU, Memory: MemoryGDDR6,
		PCIIDs:         []string{"1002:73a5"},
		ProductName:    "AMD Radeon RX 6950 XT",
		Arch:           "gfx1030",
		IdentitySource: "PCI ids: 1002:73a5 \"Navi 21 [Radeon RX 6950 XT]\" https://pci-ids.ucw.cz/read/PC/1002/73a5; gfx target gfx1030: https://rocm.docs.amd.com/en/latest/reference/gpu-arch-specs.html",
		Aliases:        []string{"AMD Radeon RX 6950 XT"},
		MemoryBytes:    16 << 30, MemoryUnit: "GiB",
		BandwidthGBs:  576,
		Source:        rocmGPUSpecs,
		FigureSources: map[string]string{"BandwidthGBs": "https://www.tomshardware.com/reviews/amd-radeon-rx-6950-xt-review (RX 6950 XT: 16 GB, 18 Gbps, 256-bit, 576 GBps)"},
	},
	{Name: "AMD Radeon PRO W6800", Vendor: "AMD", Category: WorkstationGPU, Memory: MemoryGDDR6,
		PCIIDs:         []string{"1002:73a3"},
		ProductName:    "AMD Radeon PRO W6800",
		Arch:           "gfx1030",
		IdentitySource: "PCI ids: 1002:73a3 \"Navi 21 GL-XL [Radeon PRO W6800]\" https://pci-ids.ucw.cz/read/PC/1002/73a3; gfx target gfx1030: https://rocm.docs.amd.com/en/latest/reference/gpu-arch-specs.html",
		Aliases:        []string{"AMD Radeon PRO W6800"},
		MemoryBytes:    32 << 30, MemoryUnit: "GiB",
		Source: rocmGPUSpecs,
	},
	{Name: "AMD Radeon PRO W7900", Vendor: "AMD", Category: WorkstationGPU, Memory: MemoryGDDR6,
		PCIIDs:         []string{"1002:7448", "1002:744a"},
		ProductName:    "AMD Radeon PRO W7900",
		Arch:           "gfx1100",
		IdentitySource: "PCI ids: 1002:7448 \"Navi 31 [Radeon Pro W7900]\" https://pci-ids.ucw.cz/read/PC/1002/7448; 1002:744a \"Navi 31 [Radeon Pro W7900 Dual Slot]\" https://pci-ids.ucw.cz/read/PC/1002/744a; gfx target gfx1100: https://rocm.docs.amd.com/en/latest/reference/gpu-arch-specs.html",
		Aliases:        []string{"AMD Radeon Pro W7900"},
		MemoryBytes:    48 << 30, MemoryUnit: "GiB",
		BandwidthGBs:  864,
		Source:        rocmGPUSpecs,
		FigureSources: map[string]string{"BandwidthGBs": "https://www.itcreations.com/amd-gpu/amd-radeon-pro-w7900-gpu (48GB GDDR6, 384-bit, 864 GB/s)"},
	},
	{Name: "AMD Radeon PRO W7800", Vendor: "AMD", Category: WorkstationGPU, Memory: MemoryGDDR6,
		PCIIDs:         []string{"1002:745e"},
		ProductName:    "AMD Radeon PRO W7800",
		Arch:           "gfx1100",
		IdentitySource: "PCI ids: 1002:745e \"Navi 31 [Radeon Pro W7800]\" https://pci-ids.ucw.cz/read/PC/1002/745e; gfx target gfx1100: https://rocm.docs.amd.com/en/latest/reference/gpu-arch-specs.html",
		Aliases:        []string{"AMD Radeon Pro W7800"},
		MemoryBytes:    32 << 30, MemoryUnit: "GiB",
		Source: rocmGPUSpecs,
	},
	{Name: "AMD Radeon AI PRO R9700", Vendor: "AMD", Category: WorkstationGPU, Memory: MemoryGDDR6,
		PCIIDs:         []string{"1002:7551"},
		ProductName:    "AMD Radeon AI PRO R9700",
		Arch:           "gfx1201",
		IdentitySource: "PCI ids: 1002:7551 \"Navi 48 [Radeon AI PRO R9700]\" https://pci-ids.ucw.cz/read/PC/1002/7551; gfx target gfx1201: https://rocm.docs.amd.com/en/latest/reference/gpu-arch-specs.html",
		Aliases:        []string{"AMD Radeon AI PRO R9700"},
		Source:         "not in the ROCm GPU specifications table of e396b489 and no other opened page: figures left out",
	},
}
