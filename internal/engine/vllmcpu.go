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
// line. Later releases may default otherwise when the variable is unset (a
// report has one taking half a NUMA node's memory; not read here); a
// command that names the variable gets the same pool from all of them.

// HostKVPooler is implemented by an engine whose KV cache on a plan on
// host memory alone is a pool of the size its command names, not whatever
// the host has left: the planner fits the KV cache, and searches
// max_context_length and max_batch_size, within HostKVPoolBytes of the
// room the plan leaves (Placement.HostKVSpaceBytes).
type HostKVPooler interface {
	HostKVPoolBytes(room int64) int64
}

// HostKVPoolBytes: vLLM's CPU pool is the whole GiB of the room
// (cpuKVCacheEnv).
func (vllm) HostKVPoolBytes(room int64) int64 { return room >> 30 << 30 }

// cpuKVCacheEnv is VLLM_CPU_KVCACHE_SPACE for a plan on the host alone: the
// whole GiB of the room the plan left for the KV cache
// (Placement.HostKVSpaceBytes), rounded down so that vLLM's pool is never
// larger than what the plan counted beside the weights. nil under one GiB,
// where 0 would mean vLLM's 4 GiB default: the planner refuses such a plan
// (its KV cache must fit the named pool: hostKVHolds in internal/plan).
func cpuKVCacheEnv(p *Placement) map[string]string {
	g := p.HostKVSpaceBytes >> 30
	if g < 1 {
		return nil
	}
	return map[string]string{"VLLM_CPU_KVCACHE_SPACE": strconv.FormatInt(g, 10)}
}
