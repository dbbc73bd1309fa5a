package calibration

// vLLM's start-up memory profile (internal/engine/vllmstartup.go): what vLLM
// charges each GPU beside the weights before it sizes the KV cache. The
// figures are read from the rows of data/vllm_startup.json (real vLLM
// start-up logs; its README says where each came from) and checked against
// them by TestVLLMStartupConstants (internal/plan): the row medians are
// recomputed there and must round to these values.
const (
	// VLLMSamplerBytesPerLogit is the peak memory of vLLM V1's sampler
	// warm-up per logit (max_num_seqs x vocabulary): the fp32 logits and
	// the sampler's copies of them (probabilities, sorted values and
	// indices for top-p/top-k). The median, to 0.05 byte, of printed peak
	// activation / (max_num_seqs x vocab) over the 24 V1 rows of dense
	// models where the sampler outweighs the forward pass (14.8 to 18.1
	// bytes; 18.1 is the fp32 row).
	VLLMSamplerBytesPerLogit = 15.45

	// VLLMNonTorchBytes is the memory a single-GPU vLLM V1 worker allocates
	// outside torch during its profile run (cuBLAS and attention
	// workspaces): the median of the printed "non-torch forward increase
	// memory" of the 19 single-GPU V1 rows (0.24 to 0.27 GiB), in MiB.
	VLLMNonTorchBytes = 256 << 20

	// VLLMNonTorchTPBytes is that memory on each GPU of a tensor-parallel
	// group, where NCCL's buffers and vLLM's custom all-reduce buffers add
	// to it: the median of the 10 tensor-parallel V1 rows (2.06 to 2.21
	// GiB), in MiB.
	VLLMNonTorchTPBytes = 2145 << 20

	// VLLMCUDAGraphBytes is the CUDA-graph memory vLLM estimates and, from
	// v0.21.0, takes out of the KV cache: the median of the printed
	// "Estimated CUDA graph memory" of the 30 rows that print it (0.52 to
	// 1.92 GiB; it grows
	// with the capture sizes and the model, which one constant does not
	// follow), in MiB.
	VLLMCUDAGraphBytes = 860 << 20
)
