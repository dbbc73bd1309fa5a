package engine

import "strconv"

// vLLM's CPU backend does not size its KV cache from free memory the way
// its GPU workers do (no --gpu-memory-utilization, no profiling run): the
// pool is VLLM_CPU_KVCACHE_SPACE GiB. CpuPlatform.check_and_update_config
// sets cache_config.cpu_kvcache_space_bytes to VLLM_CPU_KVCACHE_SPACE *
// GiB_bytes, or to 4 GiB where the variable is 0 or unset ("Environment
// variable VLLM_CPU_KVCACHE_SPACE (GiB) for CPU backend is not set, using 4
// by default"), and refuses a negative value (vllm/platforms/cpu.py of
// vllm-project/vllm at 0031bf29e940804ee8235f2b2da9536556f231e6, and of
// the v0.6.4 and v0.9.2 tags as ROCm/vllm mirrors them, 62334b5111ea and
// a5dd03c1ebc5; 0.6.4's message says "(GB)" for the same GiB_bytes).
// vllm/envs.py reads it as int(os.getenv("VLLM_CPU_KVCACHE_SPACE", "0"))
// (vllm-project/vllm at f218f9c24d22, and both tags), so only whole GiB
// parse. The V1 CPU worker reports that pool as its available KV memory
// (CPUWorker.determine_available_memory, vllm/v1/worker/cpu_worker.py at
// v0.9.2), the V0 one divides it into blocks and refuses to start when
// --max-model-len needs more tokens than they hold
// (CPUWorker._validate_num_cpu_blocks, vllm/worker/cpu_worker.py, same
// tags). A public v0.12.0 start-up log still prints the 4 GiB default
// line. Later releases default otherwise when the variable is unset (half
// of the host's memory over its NUMA nodes: get_device_total_memory in
// vllm/platforms/cpu.py at f6ff3f0f903e); a command that names the
// variable gets the same pool from all of them.

// Every rank gets that pool: the engine process sets it in the
// configuration each worker is built from, each CPU worker reports it as
// its own KV memory (determine_available_memory, above), and the V1 engine
// core gives every worker the fewest blocks any worker's memory holds
// (unify_kv_cache_configs in vllm/v1/core/kv_cache_utils.py of the 0.9
// releases: "changes the num_blocks of each worker to the smallest"). So a plan over
// several hosts (a cluster's pipeline stages or replicas, one rank each)
// names one value, the whole GiB of the least room any of them leaves,
// and every rank's KV cache must fit it. Ranks sharing one host (tensor
// parallelism over its NUMA nodes, which the planner does not make: the
// CPU is one device) would each allocate the whole pool there. A later
// main (vllm-project/vllm at 00efcc3be11c, vllm/v1/worker/cpu_worker.py)
// takes the pool as --kv-cache-memory-bytes, which its error message says
// VLLM_CPU_KVCACHE_SPACE sets, binds each rank's memory to one NUMA node
// and refuses a pool larger than that node's available memory; the
// planner does not split a host by NUMA node, so on a host of several
// nodes a pool larger than one node's memory is not caught here
// (docs/inference-servers.md).

// vllmCPUBlockTokens is the tokens of one block of vLLM's CPU KV cache:
// CpuPlatform.check_and_update_config sets --block-size 128 where the user
// gives none (vllm/platforms/cpu.py at f6ff3f0f903e; vllm-project/vllm pull
// 41025 calls it hard-coded). Before, from pull 16002 (April 2025), it
// was 128 only with intel_extension_for_pytorch and 16 without (the same
// file at 0031bf29e940, above).
const vllmCPUBlockTokens = 128

// HostKVPooler is implemented by an engine whose KV cache on a plan on
// host memory alone is a pool of the size its command names, not whatever
// the host has left: the planner fits the KV cache, and searches
// max_context_length and max_batch_size, within HostKVPoolBytes of the
// room the plan leaves (Placement.HostKVSpaceBytes), each sequence
// holding whole blocks of HostKVBlockTokens.
//
// HostKVPoolSetting is the setting the command sizes that pool with, in
// whole GiB, which a refusal names ("VLLM_CPU_KVCACHE_SPACE").
type HostKVPooler interface {
	HostKVPoolBytes(room int64) int64
	HostKVBlockTokens() int
	HostKVPoolSetting() string
}

// vllmCPUKVSpaceEnv is the variable vLLM's CPU backend sizes its KV cache
// by, in GiB (vllm/envs.py, above).
const vllmCPUKVSpaceEnv = "VLLM_CPU_KVCACHE_SPACE"

// HostKVPoolSetting: vLLM's CPU pool is VLLM_CPU_KVCACHE_SPACE
// (cpuKVCacheEnv).
func (vllm) HostKVPoolSetting() string { return vllmCPUKVSpaceEnv }

// HostKVPoolBytes: vLLM's CPU pool is the whole GiB of the room
// (cpuKVCacheEnv).
func (vllm) HostKVPoolBytes(room int64) int64 { return room >> 30 << 30 }

// HostKVBlockTokens: vLLM's CPU block (vllmCPUBlockTokens); a request of
// --max-model-len tokens needs its whole blocks to start
// (_check_enough_kv_cache_memory in vllm/v1/core/kv_cache_utils.py).
func (vllm) HostKVBlockTokens() int { return vllmCPUBlockTokens }

// cpuKVCacheEnv is VLLM_CPU_KVCACHE_SPACE for a plan on host memory alone:
// the whole GiB of the room the plan left for the KV cache on the host with
// the least (Placement.HostKVSpaceBytes), rounded down so that vLLM's pool is never
// larger than what the plan counted beside the weights. nil under one GiB,
// where 0 would mean vLLM's 4 GiB default: the planner refuses such a plan
// (its KV cache must fit the named pool: hostKVHolds in internal/plan).
func cpuKVCacheEnv(p *Placement) map[string]string {
	g := p.HostKVSpaceBytes >> 30
	if g < 1 {
		return nil
	}
	return map[string]string{vllmCPUKVSpaceEnv: strconv.FormatInt(g, 10)}
}
