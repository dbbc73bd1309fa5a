package specs

// Category is the kind of part a record describes. Its values are the
// table's historical strings, kept so that nothing printed changes.
type Category string

// The categories of the part table.
const (
	DatacenterGPU   Category = "datacenter_gpu"
	WorkstationGPU  Category = "workstation_gpu"
	ConsumerGPU     Category = "consumer_gpu" // desktop and laptop GeForce, Radeon and Arc boards
	IntegratedGPU   Category = "integrated_gpu"
	UnifiedGPU      Category = "unified_memory_gpu" // a GPU sharing one LPDDR pool with its CPU (NVIDIA GB10)
	AppleSoC        Category = "apple_soc_unified_memory"
	DatacenterASIC  Category = "datacenter_asic" // Gaudi, Inferentia, Trainium, Cloud AI 100
	TPU             Category = "tpu"
	CategoryUnknown Category = ""
)

// Discrete reports whether the category is a board with its own memory
// (data center, workstation or consumer GPU).
func (c Category) Discrete() bool {
	return c == DatacenterGPU || c == WorkstationGPU || c == ConsumerGPU
}

// MemoryClass is the kind of DRAM a part's memory is. The planner reads it
// to pick the fraction of the datasheet bandwidth a decode step reaches
// (internal/plan/throughput.go, hbmPart).
//
// A record's class comes from its own sources where they state it (the
// record's Source, FigureSources, ProductName or aliases: "H100 80GB HBM3",
// "GDDR6X", "4 HBM stacks"); otherwise from the memory its maker documents
// for the part's generation: NVIDIA V100, A30 and A100 40GB HBM2, A100 80GB
// and H100 PCIe HBM2e, H100 SXM/NVL, H20 and GH200 96GB HBM3, H200, GH200
// 144GB, B200 and GB200 HBM3e; Turing, Ampere GA10x and Ada boards GDDR6
// except the GDDR6X GeForce RTX 3070 Ti, 3080, 3080 Ti, 3090, 3090 Ti and
// the desktop RTX 4070 and up (the RTX 40 laptop GPUs are GDDR6); Blackwell
// GeForce and RTX PRO boards GDDR7; AMD Instinct MI100 HBM2, MI200 HBM2e, MI300 HBM3, MI325X and MI355X HBM3e; Radeon RX 6000/7000
// and Radeon PRO W6000/W7000 GDDR6; Intel Gaudi 2/3 and Data Center GPU Max
// HBM2e, Arc and Flex GDDR6; Google's TPU pages give "HBM" without a
// generation (MemoryHBM). An APU's or iGPU's graphics use host memory
// (MemorySystem), Apple's SoCs their unified memory (MemoryUnified). Parts
// whose boards ship with different memory under one id (GeForce GT 640 and
// GT 1030: DDR3/DDR4 or GDDR5), identity-only records and parts whose
// opened pages say only "device memory" (Inferentia, Inferentia2, Trainium,
// Cloud AI 100) stay MemoryUnknown.
type MemoryClass string

// The memory classes of the part table.
const (
	MemoryUnknown MemoryClass = ""
	MemoryHBM     MemoryClass = "HBM" // HBM, generation not stated
	MemoryHBM2    MemoryClass = "HBM2"
	MemoryHBM2e   MemoryClass = "HBM2e"
	MemoryHBM3    MemoryClass = "HBM3"
	MemoryHBM3e   MemoryClass = "HBM3e"
	MemoryGDDR5   MemoryClass = "GDDR5"
	MemoryGDDR6   MemoryClass = "GDDR6"
	MemoryGDDR6X  MemoryClass = "GDDR6X"
	MemoryGDDR7   MemoryClass = "GDDR7"
	MemoryLPDDR5X MemoryClass = "LPDDR5X"
	MemorySystem  MemoryClass = "system" // host DDR/LPDDR shared with an integrated GPU
	MemoryUnified MemoryClass = "unified"
)

// HBM reports whether the class is high-bandwidth memory of any generation.
func (m MemoryClass) HBM() bool {
	switch m {
	case MemoryHBM, MemoryHBM2, MemoryHBM2e, MemoryHBM3, MemoryHBM3e:
		return true
	}
	return false
}
