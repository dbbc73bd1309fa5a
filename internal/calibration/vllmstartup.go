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

	// VLLMSortSamplerBytesPerLogit is that peak before vLLM 0.19.0, when
	// top-k and top-p ran through PyTorch's sort of the whole vocabulary
	// (apply_top_k_top_p in vllm/v1/sample/ops/topk_topp_sampler.py: the
	// sorted fp32 values, their int64 indices and the sort's own buffers,
	// then the top-p softmax and the scatter back), which V1's sampler
	// warm-up exercises on every dummy request (_dummy_sampler_run sets
	// top-k and top-p); the Triton kernel of
	// https://github.com/vllm-project/vllm/pull/33538 replaced it (PR 32558
	// calls PyTorch's path one that "uses a large amount of memory"; PR
	// 33538's table measures it at 5.00 GB against the kernel's 1.56 at
	// 1024 x 131072 logits, about 40 bytes per logit with its inputs,
	// above the figure here, which is read from the logs). None of the
	// logs of those releases prints its peak activation, so the figure is
	// what the two replayed rows leave when every other charge is the
	// planner's: the mean, to 0.1 byte, of 34.8 (vLLM 0.9.2, Qwen3-235B-FP8
	// on 4 H100, vllm issue 21348) and 36.4 (0.10.1, gpt-oss-120b on an
	// H100, issue 23278). The 0.11.0 start of issue 27508 (not replayed:
	// --max-num-batched-tokens 1024) implies 38.
	VLLMSortSamplerBytesPerLogit = 35.6

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
