package engine

import "fmt"

// vLLM's start-up report in its own words (StartupReportNamer,
// ReleaseWarner): what the answer's engine_expect figures rest on for each
// of its workers and pool layouts, the refusal its start-up check makes
// and the releases before the accounting's range.

// expectSource says what EngineExpect's figures rest on for vLLM.
const expectSource = "vLLM's start-up accounting for the release (engine_version): total x --gpu-memory-utilization less the weights, the activation peak of the profile run at max_num_batched_tokens and of the sampler warm-up at max_num_seqs, the memory allocated outside torch and, from 0.21.0 on NVIDIA and AMD GPUs, the estimated CUDA graphs; tokens count every attention layer at the whole context, as vLLM prints them. Replayed against real start-up logs (internal/calibration/data/vllm_startup.json; errors in docs/accuracy.md)"

// expectSourceHybrid says what EngineExpect's figures rest on for vLLM
// and a model with recurrent layers beside attention.
const expectSourceHybrid = expectSource + "; for a model with recurrent (Mamba, gated DeltaNet) layers beside attention, vLLM's hybrid layout (vllm/v1/core/kv_cache_utils.py): the attention block raised to hold one sequence's state, layers in groups of equal size drawing from one block pool, and a request at max_model_len holding its attention blocks and one state block per state group (two in prefix caching's align mode, seen from 0.24.0); max_concurrency is the pool's blocks over a request's, and kv_cache_tokens as the release prints it (the blocks shared over the groups times the block before 0.20.2, max_concurrency x max_model_len since)"

// expectSourceWindow says what EngineExpect's figures rest on for vLLM
// and a model with sliding-window layers.
const expectSourceWindow = expectSource + "; for a model with sliding-window layers, vLLM's layout of them (vllm/v1/core/kv_cache_utils.py, SlidingWindowSpec in vllm/v1/kv_cache_interface.py): layers in groups of equal size drawing from one block pool, and a request at max_model_len holding whole-length blocks in each full-attention group but only its window plus one --max-num-batched-tokens step in each window group; max_concurrency is the pool's blocks over a request's, and kv_cache_tokens as the release prints it (the blocks shared over the groups times the block before 0.20.2, max_concurrency x max_model_len since)"

// expectSourceTPU and expectSourceGaudi say what EngineExpect's figures
// rest on for vLLM on a TPU and on Gaudi, whose workers size the cache by
// their own rules (engine.VLLMBackend).
const (
	expectSourceTPU   = "vLLM's TPU backend (tpu-inference, tpu_inference/worker/tpu_worker.py determine_available_memory, tags v0.12.0 to v0.27.0) for the release (engine_version): total HBM x --gpu-memory-utilization less the HBM in use once the weights are loaded, over the chips of the mesh; no profile pass and no CUDA graphs are charged (XLA programs are compiled after the cache is sized). Replayed against real start-up logs (internal/calibration/data/vllm_startup.json; errors in docs/accuracy.md)"
	expectSourceGaudi = "vLLM's Gaudi backend (HabanaAI/vllm-fork habana_worker.py/hpu_worker.py, vllm-project/vllm-gaudi hpu_worker.py determine_available_memory): --gpu-memory-utilization of the memory free after the weights and the profile run (a forward pass at max_num_batched_tokens), less VLLM_GRAPH_RESERVED_MEM (0.1) of it for HPU graphs, reported as cuda_graph_gib. Replayed against real start-up logs (internal/calibration/data/vllm_startup.json; errors in docs/accuracy.md)"
)

// expectSourceCPU says what EngineExpect's figures rest on for vLLM on
// host memory alone.
const expectSourceCPU = "vLLM's CPU backend for the release (engine_version): no profile run; every rank's KV cache is VLLM_CPU_KVCACHE_SPACE GiB as the command names it (CpuPlatform.check_and_update_config in vllm/platforms/cpu.py, CPUWorker.determine_available_memory in vllm/v1/worker/cpu_worker.py), the fewest blocks of 128 tokens over the ranks (--block-size 128 where none is given); kv_cache_tokens counts every attention layer at the whole context, as vLLM prints them, max_concurrency the full-length sequences of the plan's KV cache (sliding-window layers at their window) that pool holds in whole blocks, as max_batch_size. Not replayed against a start-up log"

// ReportSource implements StartupReportNamer: a sliding-window or hybrid
// layout's source whatever the worker, else the worker's (GPU, TPU,
// Gaudi), and the CPU backend's for a pool in host memory.
func (vllm) ReportSource(l ReportLayout, b VLLMBackend) string {
	switch l {
	case ReportHybrid:
		return expectSourceHybrid
	case ReportWindow:
		return expectSourceWindow
	case ReportHost:
		return expectSourceCPU
	}
	switch b {
	case VLLMBackendTPU:
		return expectSourceTPU
	case VLLMBackendGaudi:
		return expectSourceGaudi
	}
	return expectSource
}

// ShortPoolWarning implements StartupReportNamer: vLLM's start-up check
// (_check_enough_kv_cache_memory in vllm/v1/core/kv_cache_utils.py).
func (vllm) ShortPoolWarning(release string, context int, tokens int64) string {
	return fmt.Sprintf("by vLLM %s's own start-up accounting one sequence of %d tokens does not fit the KV cache it leaves (%d tokens): vLLM refuses to start (\"To serve at least one request with the model's max seq len ...\"); ask context_length %d or less, a larger memory_fraction or more devices",
		release, context, tokens, tokens)
}

// ReleaseWarning implements ReleaseWarner: for a vLLM release before
// VLLMOldestVersion, the figures are those of the oldest release the
// accounting covers; "" for a release in the range.
func (vllm) ReleaseWarning(v Version) string {
	if !v.Before(VLLMOldestVersion) {
		return ""
	}
	return fmt.Sprintf("vLLM %s is older than %s, the oldest release whose start-up accounting this planner models (replayed against real start-up logs, docs/accuracy.md): these figures follow %s's rules and may be far off (0.2.5 counted every byte in use on the device after its profile run as the model's, vllm issue 2248)",
		v, VLLMOldestVersion, VLLMOldestVersion)
}
