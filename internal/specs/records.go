package specs

import "slices"

// records is the part table: one record per part, every figure with its
// source, kept by hand in one file per vendor (records_nvidia.go,
// records_amd.go, records_intel.go, records_google.go, records_aws.go,
// records_qualcomm.go, records_apple.go); a new part is a new record there.
//
// Provenance. The table began as 55 records, the project's datasheet records
// (published vendor datasheets, or curated secondary pages that cite them);
// Source names the page of the record and FigureSources the page of any
// figure that comes from elsewhere (keyed by the Spec field name). Only
// figures a source states are filled; a missing figure stays zero (unknown),
// never a default, so the planner omits what needs it.
//
// Units, as the contract's: bytes (MemoryUnit says whether the source stated
// GB = 10^9 or GiB = 2^30; "max"/"up to" memory is flagged MemoryIsMaximum),
// GB/s (a source in GiB/s is converted: Inferentia2's 820 GiB/s is 880.5
// GB/s), dense tensor TFLOPS (TOPS for int8). fp16/bf16 convention: the DENSE
// tensor-core figure with FP32 accumulate where the vendor lists two
// (GeForce parts run FP16 with FP32 accumulate at half the FP16-accumulate
// rate; the RTX 4090 record's 165.15 is that figure); NVIDIA's professional
// GA102 parts (A40, RTX A6000) run both at the same rate; a part whose source
// gives only a mixed-precision tensor figure (T4, V100) has it as FP16 only.
// InterconnectGBs is the datasheet figure per device, which for NVLink,
// Infinity Fabric and ICI is the bidirectional aggregate.
//
// MemoryBinary gives the evidence that a "GB" figure is binary (the part
// carries that many GiB, as DRAM and HBM come in power-of-two sizes, and the
// tool reporting the real figure shows it): nvidia-smi reports 81559 MiB on an
// H100 80GB HBM3 and 46068 MiB on an A40 with ECC on; hl-smi 98304 MiB per
// HL-225; tpu_info's device.py hbm_gib (AI-Hypercomputer/
// cloud-accelerator-diagnostics) and the v5p page ("HBM capacity per chip
// (GiB) 95", https://docs.cloud.google.com/tpu/docs/v5p). DeviceMemoryBytes
// reads only such records and GiB records; Gaudi3's "128 GB" has no evidence
// either way.
//
// Figures a record's own source lacks: TPU v5p ICI, 1200 GB/s bidirectional
// per chip (the current v5p page; the older "4800 Gbps" is one direction),
// and RTX 4080 bandwidth, GDDR6X at 22.4 Gbps on a 256-bit bus = 716.8 GB/s
// (the 736 GB/s of older reports assumed 23 Gbps memory); their pages are in
// FigureSources.
//
// Records added after those 55: parts real machines (and the llama.cpp
// measurements the throughput model is fitted on) use: RTX A6000, RTX 6000
// Ada, RTX 3080 10 GB, RTX 4070 Ti, RTX 5090 (the 5090's "838 FP16" in its
// review is the sparse FP16-accumulate figure, not the dense FP32-accumulate
// one this table holds: left out); TPU v2 (hbm_gib 8 per TensorCore, two
// TensorCores per chip) and TPU7x from tpu_info device.py; the Radeon 780M,
// identity only; NVIDIA B200, AMD MI325X and MI355X; the NVIDIA GB10 of the
// DGX Spark.
//
// Identity (PCIIDs, ProductName, Arch): PCI ids as listed by the vendor tools
// and drivers (nvidia-smi and sysfs captures; hl-smi for Gaudi 2 1da3:1020;
// tpu_info device.py for the TPU ids; aws-neuron-driver neuron_pci.c for the
// Neuron ids); ProductName is the name nvidia-smi and /proc/driver/nvidia
// print; Arch is the NVIDIA compute capability (https://developer.nvidia.com/cuda-gpus)
// or the AMD gfx target (MI300X gfx942: ROCm docs/reference/gpu-arch-specs.rst;
// Radeon 780M Phoenix1 gfx1103: RADV names it "GFX1103_R1" in vulkaninfo).
// TPU v2 and v3 share PCI id 1ae0:0027, so neither record carries it.
//
// Aliases are the names tools print for a part (nvidia-smi -L prints "NVIDIA
// H100 80GB HBM3" for the SXM5 part, rocm-smi "AMD Instinct MI300X OAM",
// hl-smi -q "HL-225"; Cloud TPU accelerator types v5litepod, Trillium); the
// RTX 3080 10 GB and 12 GB share a name and the memory check of ForDevice
// keeps the 12 GB card off the 10 GB record; the Quadro RTX 6000 of 2018
// keeps its "Quadro" word and does not match the RTX 6000 Ada.
// NameAmbiguous records (Apple M3 Max, M4 Max: two bins with different
// bandwidth) are never matched by name; MemoryVaries records (V100 SXM2 16
// and 32 GB) skip the memory check.
var records = slices.Concat(nvidiaRecords, amdRecords, intelRecords, googleRecords, awsRecords, qualcommRecords, appleRecords)
