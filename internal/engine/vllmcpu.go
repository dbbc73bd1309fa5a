package engine

import (
	"strconv"
	"strings"
)

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

// vLLM on the CPUs of several hosts runs its multiprocessing executor, never
// Ray. CpuPlatform.check_and_update_config replaces any
// distributed_executor_backend other than "mp" with "mp" ("%s is not
// supported on CPU, fallback to mp distributed executor backend";
// vllm/platforms/cpu.py of vllm-project/vllm at 0031bf29e940 always, at
// f6ff3f0f903e where the world size, TP x PP, is above 1), and the CPU
// platform sets no ray_device_key, on which vLLM's Ray code stops with
// "current platform cpu does not support ray" (vllm-project/vllm issue
// 21602; pull 25386, Ray executor and Ray data parallel for the CPU
// backend, was closed unmerged). Across hosts the mp executor takes
// --nnodes, --node-rank and --master-addr, one vllm serve per host and
// --headless on all but the head ("Running vLLM with MultiProcessing",
// docs/serving/parallelism_scaling.md at 096bd6a4a109; ParallelConfig's
// nnodes, node_rank, master_addr in vllm/config/parallel.py: "To use "mp"
// you must also set nnodes"). That came with vllm-project/vllm pull 23691;
// before it the executor was single-host ("Multiprocessing-based executor
// does not support multi-node setting", vllm/v1/executor/multiproc_executor.py
// at 00f6c9bf92aa), so an older release cannot run a CPU pipeline over
// hosts. vLLM's CPU guide (docs/getting_started/installation/cpu.md at
// 3ff2de9c9635) speaks of DP, TP and PP over sockets and NUMA nodes and
// documents no multi-host deployment: the notes say so.
//
// Replicas, one rank each, need no executor (world size 1): a data-parallel
// deployment over hosts is one vllm serve per host, --data-parallel-size-local
// the ranks each starts, the others --headless with --data-parallel-start-rank
// and the head's --data-parallel-address and --data-parallel-rpc-port
// (docs/serving/data_parallel_deployment.md at 624b7aff3e99).

// cpuMultiHostArgs are the flags a vLLM plan on the CPUs of several hosts
// adds for host 0 (the first host of the plan), and notes that say how the
// others start. A plan of replicas of multi-host pipelines gets none: vLLM
// documents no launch of data parallelism over mp-executor pipelines that
// span hosts.
func cpuMultiHostArgs(p *Placement) ([]string, []string, bool) {
	hosts := strconv.Itoa(hostsOf(p))
	const unsupported = "vLLM's CPU guide documents no deployment over several hosts, so this launch is vLLM's general multi-node one, untested upstream on CPUs"
	switch {
	case p.DP > 1 && len(p.Stages) > 1:
		return nil, []string{"vLLM: replicas of a pipeline over several hosts' CPUs need the mp executor across hosts inside each data-parallel rank, which vLLM does not document; no flags are given"}, false
	case p.DP > 1:
		// One CPU device per host: one replica per host.
		return []string{"--data-parallel-size-local", "1"}, []string{
			"vLLM: replicas on " + hosts + " hosts' CPUs run one vllm serve per host; this command is host 0's: add --data-parallel-address <host 0's address> and --data-parallel-rpc-port <port>, and start host R (1.." + strconv.Itoa(hostsOf(p)-1) + ") with the same command, address and port plus --headless --data-parallel-start-rank R (vLLM's data parallel deployment guide); Ray is no option, vLLM has no Ray support on CPUs; " + unsupported,
		}, true
	}
	return []string{"--distributed-executor-backend", "mp", "--nnodes", hosts, "--node-rank", "0"}, []string{
		"vLLM: on CPUs vLLM runs only its multiprocessing executor (its CPU platform replaces ray with mp); this command is host 0's: add --master-addr <host 0's address>, and start host R (1.." + strconv.Itoa(hostsOf(p)-1) + ") with the same command, --node-rank R and --headless; vLLM releases before pull 23691 (multi-node mp executor) run every rank on one host; " + unsupported,
	}, true
}

// hostsOf is the number of hosts a cluster plan places on: the distinct
// node prefixes of its device ids ("node1/cpu").
func hostsOf(p *Placement) int {
	seen := map[string]bool{}
	for _, u := range p.Units() {
		for _, s := range u {
			for _, d := range s.Devices {
				host, _, _ := strings.Cut(d.ID, "/")
				seen[host] = true
			}
		}
	}
	return len(seen)
}
