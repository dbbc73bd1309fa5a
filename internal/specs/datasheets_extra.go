package specs

// This file is hand-kept (gen.go does not touch it): datasheet records for
// parts devices.json has no record of, added because real machines (and the
// llama.cpp measurements of shared/calibration/inference.json) use them. Each
// record states only figures a cited page states; a figure no page at hand
// stated is left zero (unknown), so the planner omits what needs it (no
// tensor peak: no prefill estimate) rather than guessing.
//
// fp16/bf16 convention (the same as devices.json's "fp16_bf16_tflops_dense"):
// the DENSE tensor-core figure, with FP32 accumulate where the vendor lists
// two (GeForce parts run FP16 with FP32 accumulate at half the FP16-accumulate
// rate; the RTX 4090 record's 165.15 is that figure). NVIDIA's professional
// GA102 parts (A40, RTX A6000) run both at the same rate.
//
// The records join the table at init (parts.go), after the generated ones,
// and are matched by name like any record (aliases in match.go).
var handRecords = []Spec{
	{Name: "NVIDIA RTX A6000", Vendor: "NVIDIA", Category: "workstation_gpu",
		MemoryBytes: 48e9, MemoryUnit: "GB", BandwidthGBs: 768,
		BF16TFLOPS: 154.8, FP16TFLOPS: 154.8,
		Source: "memory 48 GB GDDR6, bandwidth 768 GB/s: https://servethehome.com/nvidia-rtx-a6000-48gb-gpu-drops-quadro-designation (NVIDIA specification table); " +
			"fp16/bf16 dense 154.8 TFLOPS (309.7 with sparsity): https://llmperf.net/categories/gpu/Nvidia-A6000-GPUs (quoting Microway, \"In-Depth Comparison of NVIDIA Ampere GPU Accelerators\")"},
	{Name: "NVIDIA RTX 6000 Ada Generation", Vendor: "NVIDIA", Category: "workstation_gpu",
		MemoryBytes: 48e9, MemoryUnit: "GB", BandwidthGBs: 960,
		Source: "memory 48 GB, 384-bit, bandwidth 960 GB/s: https://www.grafikkarten.com/de/news/nvidia-rtx-6000-grafikkarte-der-ada-generation (from NVIDIA's published specifications); dense tensor figure not sourced"},
	{Name: "NVIDIA GeForce RTX 3080 (10GB)", Vendor: "NVIDIA", Category: "consumer_gpu",
		MemoryBytes: 10e9, MemoryUnit: "GB", BandwidthGBs: 760,
		Source: "memory 10 GB GDDR6X, 320-bit, 760 GB/s: https://www.itcreations.com/nvidia-gpu/nvidia-geforce-rtx-3080-gpu; " +
			"https://atizone.it/news/reader.php?objid=32859 (760 GB/s for the 10 GB card, 936 GB/s for the 12 GB one); dense tensor figure not sourced"},
	{Name: "NVIDIA GeForce RTX 4070 Ti", Vendor: "NVIDIA", Category: "consumer_gpu",
		MemoryBytes: 12e9, MemoryUnit: "GB", BandwidthGBs: 504,
		Source: "memory 12 GB GDDR6X, 192-bit, 504 GB/s: https://guru3d.com/story/rumored-nvidia-rtx-5090-specs-cores-gddr7-memory-and-bandwidth (table of shipping cards); dense tensor figure not sourced"},
	{Name: "NVIDIA GeForce RTX 5090", Vendor: "NVIDIA", Category: "consumer_gpu",
		MemoryBytes: 32e9, MemoryUnit: "GB", BandwidthGBs: 1792,
		Source: "memory 32 GB GDDR7, 512-bit, 1,792 GB/s: https://pocketmags.com/linux-format-magazine/may-2025/articles/nvidia-geforce-rtx-5090 (review spec box); " +
			"its \"838 FP16\" is the sparse FP16-accumulate figure, not the dense FP32-accumulate one this table holds: tensor figure left out"},
}
