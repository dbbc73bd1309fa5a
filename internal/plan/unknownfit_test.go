package plan

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// h100sSomeUnknown is an HGX H100 node of 8 GPUs, all available, whose last
// unknown GPUs the registry gives no memory size for (a driver that did not
// answer, a passthrough device whose memory was not read); unknown 0 is the
// whole node known.
func h100sSomeUnknown(t *testing.T, unknown int) *registry.Registry {
	var devs []registry.Device
	for i := 0; i < 8; i++ {
		d := h100(i)
		if i >= 8-unknown {
			d.MemoryBytes = 0
		}
		devs = append(devs, d)
	}
	return reg(t, devs, link("nvlink", 450, ids("cuda", 8)...))
}

// DeepSeek-R1 does not fit 4 H100s at any level vLLM runs and fits 8 at
// int4. With 4 of the 8 of unknown memory the answer was a flat fits false
// whose refusal spoke of "the 4 cuda_gpu (nvidia) devices" and never named
// the other four: a no that counting them could turn into a yes. It is
// unknown (null), the refusal and the memory-refused rows name them.
func TestUnknownMemoryGPUsMakeAMisfitUnknown(t *testing.T) {
	const body = `{"model":{"name":"DeepSeek-R1"}}`
	// The premise: all 8 known, it fits; the 4 known alone, it does not.
	require.Equal(t, FitYes, shard(t, request(t, body, h100sSomeUnknown(t, 0))).Fits)
	four := reg(t, []registry.Device{h100(0), h100(1), h100(2), h100(3)}, link("nvlink", 450, ids("cuda", 4)...))
	require.Equal(t, FitNo, shard(t, request(t, body, four)).Fits, "4 GPUs and no others: a plain no")

	r := h100sSomeUnknown(t, 4)
	a := shard(t, request(t, body, r))
	assert.Equal(t, FitUnknown, a.Fits, "%s", dump(t, a))
	require.NotNil(t, a.Refusal)
	assert.Equal(t, RefusalMemory, a.Refusal.Code, "the known devices do not hold it")
	for _, id := range []string{"cuda:4", "cuda:5", "cuda:6", "cuda:7"} {
		assert.Contains(t, a.Refusal.Text, id)
	}
	assert.Contains(t, a.Refusal.Text, "memory is unknown")
	assert.NotContains(t, a.Refusal.Text, "cuda:0 (", "a GPU of known memory is not named as unknown")
	memoryRows := 0
	for _, row := range a.Levels {
		if strings.Contains(row.Reason, LevelMisfitPrefix) {
			memoryRows++
			assert.Equal(t, FitUnknown, row.Fits, "%s: refused for memory on the known GPUs only", row.Quant)
		}
	}
	assert.Positive(t, memoryRows)

	s, err := SuggestQuant(request(t, body, r))
	require.NoError(t, err)
	assert.Equal(t, FitUnknown, s.Fits)
	require.NotNil(t, s.Refusal)
	assert.Contains(t, s.Refusal.Text, "cuda:7")
}

// Qwen3-32B fits 4 H100s: with 4 known and 4 of unknown memory the plan
// uses the known ones and says which it left out and why; before, nothing
// named them, as if the node had 4 GPUs.
func TestPlanOnKnownGPUsNamesTheUnknownOnes(t *testing.T) {
	const body = `{"model":{"name":"Qwen3-32B"}}`
	a := shard(t, request(t, body, h100sSomeUnknown(t, 4)))
	require.Equal(t, FitYes, a.Fits, "%s", dump(t, a))
	for _, sh := range a.Shards {
		assert.Contains(t, []string{"cuda:0", "cuda:1", "cuda:2", "cuda:3"}, sh.DeviceID)
	}
	w := strings.Join(a.Warnings, "\n")
	for _, id := range []string{"cuda:4", "cuda:5", "cuda:6", "cuda:7"} {
		assert.Contains(t, w, id)
	}
	assert.Contains(t, w, "memory is unknown")

	s, err := SuggestQuant(request(t, body, h100sSomeUnknown(t, 4)))
	require.NoError(t, err)
	assert.Contains(t, strings.Join(s.Warnings, "\n"), "cuda:7")

	// All known: no such warning.
	k := shard(t, request(t, body, h100sSomeUnknown(t, 0)))
	assert.NotContains(t, strings.Join(k.Warnings, "\n"), "memory is unknown")
}

// A GPU whose total memory is unknown but whose free memory was read is
// planned on within its free memory (registry.Device.UsableMemoryOf): it is
// not left out, and the answer must not call it unknown. The first cut of
// the rule above named such GPUs as left out while the plan used them (the
// dgx-h100 fixture's registry with memory_bytes removed from cuda:4-7).
func TestGPUWithOnlyFreeMemoryIsNotUnknown(t *testing.T) {
	r := h100sSomeUnknown(t, 4)
	for i := 4; i < 8; i++ {
		free := int64(85045805056) // an H100's memory_free_bytes in the dgx-h100 fixture (nvidia-smi)
		r.Devices[i].MemoryFreeBytes = &free
	}
	a := shard(t, request(t, `{"model":{"name":"DeepSeek-R1"}}`, r))
	require.Equal(t, FitYes, a.Fits, "%s", dump(t, a))
	assert.Len(t, a.Shards, 8)
	assert.NotContains(t, strings.Join(a.Warnings, "\n"), "memory is unknown")
	for _, row := range a.Levels {
		assert.NotEqual(t, FitUnknown, row.Fits, row.Quant)
	}
}

// trainQwen32BFSDP is a full fine-tune of Qwen3-32B sharded by FSDP with
// gradient checkpointing: 71 GiB per device over 8 H100s, 132 GiB over 4.
const trainQwen32BFSDP = `{"model":{"name":"Qwen3-32B"},"training":{"method":"full","fsdp":true,"gradient_checkpointing":true}}`

func train(t *testing.T, body string, r *registry.Registry) *TrainingAnswer {
	t.Helper()
	a, err := EstimateTraining(request(t, body, r))
	require.NoError(t, err)
	return a
}

// A training run is planned, as inference is, on the devices of known
// memory: with cuda:4-7 of unknown memory Qwen3-32B's FSDP run was a flat
// fits false on "the smallest of 4 devices", though over all 8 it fits
// (ZeRO-3 shards it 8 ways, not 4). It is unknown, and the refusal names
// the four left out.
func TestTrainingBesideUnknownGPUsIsUnknown(t *testing.T) {
	require.Equal(t, FitYes, train(t, trainQwen32BFSDP, h100sSomeUnknown(t, 0)).Fits, "the premise: all 8 known, it fits")
	four := reg(t, []registry.Device{h100(0), h100(1), h100(2), h100(3)}, link("nvlink", 450, ids("cuda", 4)...))
	require.Equal(t, FitNo, train(t, trainQwen32BFSDP, four).Fits, "4 GPUs and no others: a plain no")

	a := train(t, trainQwen32BFSDP, h100sSomeUnknown(t, 4))
	assert.Equal(t, FitUnknown, a.Fits, "%s", dump(t, a))
	require.NotNil(t, a.Refusal)
	assert.Equal(t, RefusalMemory, a.Refusal.Code, "the known devices do not hold it")
	for _, id := range []string{"cuda:4", "cuda:5", "cuda:6", "cuda:7"} {
		assert.Contains(t, a.Refusal.Text, id)
	}
	assert.Contains(t, a.Refusal.Text, "memory is unknown")
	assert.NotContains(t, a.Refusal.Text, "cuda:0 (", "a GPU of known memory is not named as unknown")
	assert.Contains(t, a.Explanation, NotFitLine(a.Refusal.Text))
}

// A run that fits the GPUs of known memory is estimated on them, and says
// which it left out: num_devices 4 on an 8-GPU node, without a word, read
// as if the node had 4.
func TestTrainingOnKnownGPUsNamesTheUnknownOnes(t *testing.T) {
	const body = `{"model":{"name":"Llama-3.1-8B"},"training":{"method":"lora"}}`
	a := train(t, body, h100sSomeUnknown(t, 4))
	require.Equal(t, FitYes, a.Fits, "%s", dump(t, a))
	assert.Equal(t, 4, a.NumDevices)
	w := strings.Join(a.Warnings, "\n")
	for _, id := range []string{"cuda:4", "cuda:5", "cuda:6", "cuda:7"} {
		assert.Contains(t, w, id)
	}
	assert.Contains(t, w, "memory is unknown")
	assert.NotContains(t, strings.Join(train(t, body, h100sSomeUnknown(t, 0)).Warnings, "\n"), "memory is unknown")
}

// A GPU of unknown memory that does not run the training precision (a
// Tesla K80, compute capability 3.7, has no bf16) would not be trained on
// whatever its memory: it leaves a refusal for memory a plain no.
func TestTrainingLeavesOutUnknownGPUsOfAnotherPrecision(t *testing.T) {
	devs := []registry.Device{h100(0), h100(1), h100(2), h100(3)}
	k80 := gpu(registry.KindCUDA, 4, "Tesla K80", 0, "3.7")
	k80.Vendor = "nvidia"
	r := reg(t, append(devs, k80), link("nvlink", 450, ids("cuda", 4)...))
	a := train(t, trainQwen32BFSDP, r)
	assert.Equal(t, FitNo, a.Fits, "%s", dump(t, a))
	require.NotNil(t, a.Refusal)
	assert.NotContains(t, a.Refusal.Text, "cuda:4")
}

// h100sSixOf is 4 H100s of known memory and 2 of unknown: 6 in all.
func h100sSixOf(t *testing.T) *registry.Registry {
	var devs []registry.Device
	for i := 0; i < 6; i++ {
		d := h100(i)
		if i >= 4 {
			d.MemoryBytes = 0
		}
		devs = append(devs, d)
	}
	return reg(t, devs, link("nvlink", 450, ids("cuda", 6)...))
}

// A request for more devices than have known memory (tensor_parallel_size
// 8, replicas 8 on an 8-GPU node with 4 of unknown memory) was refused
// too_few_devices, "the pool has 4", fits false, naming none of the other
// four, while its levels rows said null. Counted, the four might make up
// the number: fits null, the code stays too_few_devices, the text names
// them, and the rows agree.
func TestTooFewDevicesBesideUnknownGPUsIsUnknown(t *testing.T) {
	for _, body := range []string{
		`{"model":{"name":"Qwen3-32B"},"tensor_parallel_size":8}`,
		`{"model":{"name":"Qwen3-32B"},"replicas":8}`,
	} {
		require.Equal(t, FitYes, shard(t, request(t, body, h100sSomeUnknown(t, 0))).Fits, "the premise: all 8 known, %s fits", body)
		a := shard(t, request(t, body, h100sSomeUnknown(t, 4)))
		assert.Equal(t, FitUnknown, a.Fits, "%s: %s", body, dump(t, a))
		require.NotNil(t, a.Refusal, body)
		assert.Equal(t, RefusalTooFewDevices, a.Refusal.Code, body)
		for _, id := range []string{"cuda:4", "cuda:5", "cuda:6", "cuda:7"} {
			assert.Contains(t, a.Refusal.Text, id, body)
		}
		assert.Contains(t, a.Refusal.Text, "memory is unknown", body)
		for _, row := range a.Levels {
			assert.Equal(t, FitUnknown, row.Fits, "%s %s", body, row.Quant)
		}
	}
}

// Where even counting the devices of unknown memory leaves too few (6 H100s,
// 2 of unknown memory, for tensor_parallel_size 8), the answer is no, and
// its rows too (they said null); the text still names the two, so that "the
// pool has 4" does not read as a machine of 4.
func TestTooFewDevicesEvenCountedIsNo(t *testing.T) {
	a := shard(t, request(t, `{"model":{"name":"Qwen3-32B"},"tensor_parallel_size":8}`, h100sSixOf(t)))
	assert.Equal(t, FitNo, a.Fits, "%s", dump(t, a))
	require.NotNil(t, a.Refusal)
	assert.Equal(t, RefusalTooFewDevices, a.Refusal.Code)
	assert.Contains(t, a.Refusal.Text, "cuda:4")
	assert.Contains(t, a.Refusal.Text, "cuda:5")
	for _, row := range a.Levels {
		assert.Equal(t, FitNo, row.Fits, row.Quant)
	}
}

// Training alike: num_devices 8 on 4 known and 4 of unknown memory is
// unknown; on 4 known and 2 unknown, no. Both name the GPUs left out.
func TestTrainingTooFewDevicesBesideUnknownGPUs(t *testing.T) {
	const body = `{"model":{"name":"Llama-3.1-8B"},"training":{"method":"lora","num_devices":8}}`
	require.Equal(t, FitYes, train(t, body, h100sSomeUnknown(t, 0)).Fits, "the premise: all 8 known, it fits")
	a := train(t, body, h100sSomeUnknown(t, 4))
	assert.Equal(t, FitUnknown, a.Fits, "%s", dump(t, a))
	require.NotNil(t, a.Refusal)
	assert.Equal(t, RefusalTooFewDevices, a.Refusal.Code)
	assert.Contains(t, a.Refusal.Text, "cuda:7")
	assert.Contains(t, a.Explanation, NotFitLine(a.Refusal.Text))

	b := train(t, body, h100sSixOf(t))
	assert.Equal(t, FitNo, b.Fits, "%s", dump(t, b))
	require.NotNil(t, b.Refusal)
	assert.Equal(t, RefusalTooFewDevices, b.Refusal.Code)
	assert.Contains(t, b.Refusal.Text, "cuda:5")
}

// h100AndHost is one H100 beside the host CPU with hostBytes of RAM, 0
// when /proc/meminfo was not read (the two-nvidia, tpu-v5e and
// slimbook-hero-rtx4060-igpu fixtures have none).
func h100AndHost(t *testing.T, hostBytes int64) *registry.Registry {
	return reg(t, []registry.Device{host(hostBytes), h100(0)})
}

// include_cpu plans host RAM where nothing fits the accelerators: with the
// CPU's RAM unknown, Llama-3.1-405B on one H100 was a flat fits false that
// never named the CPU, though 1 TiB of host RAM holds it. It is unknown,
// and the refusal names cpu:0. Without include_cpu host RAM is not
// planned, and the CPU is neither counted nor named.
func TestIncludeCPUOfUnknownRAMIsUnknown(t *testing.T) {
	const asked = `{"model":{"name":"Llama-3.1-405B"},"include_cpu":true}`
	require.Equal(t, FitYes, shard(t, request(t, asked, h100AndHost(t, 1<<40))).Fits, "the premise: 1 TiB of host RAM holds it")

	a := shard(t, request(t, asked, h100AndHost(t, 0)))
	assert.Equal(t, FitUnknown, a.Fits, "%s", dump(t, a))
	require.NotNil(t, a.Refusal)
	assert.Equal(t, RefusalMemory, a.Refusal.Code)
	assert.Contains(t, a.Refusal.Text, "cpu:0 (host RAM: /proc/meminfo was not readable)")
	for _, row := range a.Levels {
		assert.Equal(t, FitUnknown, row.Fits, row.Quant)
	}
	s, err := SuggestQuant(request(t, asked, h100AndHost(t, 0)))
	require.NoError(t, err)
	assert.Equal(t, FitUnknown, s.Fits)

	b := shard(t, request(t, `{"model":{"name":"Llama-3.1-405B"}}`, h100AndHost(t, 0)))
	assert.Equal(t, FitNo, b.Fits, "without include_cpu host RAM is not planned")
	require.NotNil(t, b.Refusal)
	assert.NotContains(t, b.Refusal.Text, "cpu:0")
}

// Where the accelerators hold the model, include_cpu plans no host RAM,
// known or not: no warning names the CPU.
func TestIncludeCPUOfUnknownRAMBesideAFitIsNotNamed(t *testing.T) {
	a := shard(t, request(t, `{"model":{"name":"Llama-3.1-8B"},"include_cpu":true}`, h100AndHost(t, 0)))
	require.Equal(t, FitYes, a.Fits, "%s", dump(t, a))
	assert.NotContains(t, strings.Join(a.Warnings, "\n"), "cpu:0")
}

// v100Beside is a Tesla V100 of known memory (compute capability 7.0: no
// bf16) beside other.
func v100Beside(t *testing.T, other registry.Device) *registry.Registry {
	v100 := gpu(registry.KindCUDA, 0, "Tesla V100-SXM2-32GB", 32<<30, "7.0")
	v100.Vendor = "nvidia"
	return reg(t, []registry.Device{v100, other})
}

// Llama-3.1-8B at bf16 on a V100, which runs no bf16, beside an MI300X of
// unknown memory, which does: the answer was a flat no, "cuda_gpu (nvidia)
// devices do not support bf16", naming no MI300X, though with its memory
// known the plan is made on it. Counted, it might run and hold it: fits is
// null, the code stays unsupported, the text names rocm:0, and so do the
// bf16 level row (null) and suggest's answer.
func TestUnsupportedBesideUnknownThatRunsItIsUnknown(t *testing.T) {
	const body = `{"model":{"name":"Llama-3.1-8B"},"quant":"bf16"}`
	require.Equal(t, FitYes, shard(t, request(t, body, v100Beside(t, mi300x(0)))).Fits, "the premise: the MI300X's memory known, it fits there")

	unknown := mi300x(0)
	unknown.MemoryBytes = 0
	r := v100Beside(t, unknown)
	a := shard(t, request(t, body, r))
	assert.Equal(t, FitUnknown, a.Fits, "%s", dump(t, a))
	require.NotNil(t, a.Refusal)
	assert.Equal(t, RefusalUnsupported, a.Refusal.Code, "no device of known memory runs bf16")
	assert.Contains(t, a.Refusal.Text, "rocm:0 (AMD Instinct MI300X OAM: no memory size was detected")
	assert.Contains(t, a.Refusal.Text, "they run what the others do not")
	require.Len(t, a.Levels, 1)
	assert.Equal(t, FitUnknown, a.Levels[0].Fits)

	s, err := SuggestQuant(request(t, body, r))
	require.NoError(t, err)
	assert.Equal(t, FitUnknown, s.Fits)

	// Under auto the plan is fp16 on the V100; the bf16 row, which the
	// MI300X counted might hold, says null, not no.
	auto := shard(t, request(t, `{"model":{"name":"Llama-3.1-8B"}}`, r))
	require.Equal(t, FitYes, auto.Fits, "%s", dump(t, auto))
	for _, row := range auto.Levels {
		if row.Quant == "bf16" {
			assert.Equal(t, FitUnknown, row.Fits, "%s: %s", row.Quant, row.Reason)
		}
	}
}

// An H100 of unknown memory beside the V100 joins its pool (one kind, one
// vendor); a level the V100 does not run is planned on the devices of the
// pool that run it (levelPool), as with the H100's memory known, where the
// plan is made on it. Counted, it might run and hold bf16: fits null, the
// refusal names cuda:1. (Before levelPool the pool refused bf16 whatever
// the H100's memory, and this answer was a plain no.)
func TestUnsupportedBesideUnknownGPUOfThePoolIsUnknown(t *testing.T) {
	const body = `{"model":{"name":"Llama-3.1-8B"},"quant":"bf16"}`
	require.Equal(t, FitYes, shard(t, request(t, body, v100Beside(t, h100(1)))).Fits, "the premise: the H100's memory known, bf16 is planned on it")
	h := h100(1)
	h.MemoryBytes = 0
	a := shard(t, request(t, body, v100Beside(t, h)))
	assert.Equal(t, FitUnknown, a.Fits, "%s", dump(t, a))
	require.NotNil(t, a.Refusal)
	assert.Equal(t, RefusalUnsupported, a.Refusal.Code, "no device of known memory runs bf16")
	assert.Contains(t, a.Refusal.Text, "they run what the others do not")
	assert.Contains(t, a.Refusal.Text, "cuda:1 (NVIDIA H100 80GB HBM3")
}

// cpu_offload plans host RAM for what the accelerators do not hold: with
// the CPU's RAM unknown, Llama-3.1-70B at bf16 on one H100 was a flat no
// (the explanation said the registry gives no host memory), though 1 TiB
// of host RAM holds it offloaded. Counted, the host might hold it: fits
// null, the refusal names cpu:0. Where the H100 holds the model, no host
// RAM is planned and the CPU is not named.
func TestCPUOffloadOnHostOfUnknownRAMIsUnknown(t *testing.T) {
	const asked = `{"model":{"name":"Llama-3.1-70B"},"quant":"bf16","cpu_offload":true}`
	require.Equal(t, FitYes, shard(t, request(t, asked, h100AndHost(t, 1<<40))).Fits, "the premise: 1 TiB of host RAM holds it offloaded")

	a := shard(t, request(t, asked, h100AndHost(t, 0)))
	assert.Equal(t, FitUnknown, a.Fits, "%s", dump(t, a))
	require.NotNil(t, a.Refusal)
	assert.Equal(t, RefusalMemory, a.Refusal.Code)
	assert.Contains(t, a.Refusal.Text, "cpu:0 (host RAM: /proc/meminfo was not readable)")
	s, err := SuggestQuant(request(t, asked, h100AndHost(t, 0)))
	require.NoError(t, err)
	assert.Equal(t, FitUnknown, s.Fits)

	b := shard(t, request(t, `{"model":{"name":"Llama-3.1-70B"},"quant":"bf16"}`, h100AndHost(t, 0)))
	assert.Equal(t, FitNo, b.Fits, "without cpu_offload host RAM is not planned")
	require.NotNil(t, b.Refusal)
	assert.NotContains(t, b.Refusal.Text, "cpu:0")

	c := shard(t, request(t, `{"model":{"name":"Llama-3.1-8B"},"cpu_offload":true}`, h100AndHost(t, 0)))
	require.Equal(t, FitYes, c.Fits)
	assert.NotContains(t, strings.Join(c.Warnings, "\n"), "cpu:0")
}

// h100sBesideK80 is 4 H100s of known memory beside a Tesla K80 (compute
// capability 3.7) of memory k80Bytes, 0 for unknown.
func h100sBesideK80(t *testing.T, k80Bytes int64) *registry.Registry {
	k80 := gpu(registry.KindCUDA, 4, "Tesla K80", k80Bytes, "3.7")
	k80.Vendor = "nvidia"
	return reg(t, []registry.Device{h100(0), h100(1), h100(2), h100(3), k80}, link("nvlink", 450, ids("cuda", 4)...))
}

// A GPU of unknown memory that runs no level tried whatever its memory (a
// K80, below vLLM's compute-capability floor) was named as left out for
// its memory and counted as one that might hold the model: DeepSeek-R1 on
// 4 H100s beside it said fits null, where with the K80's memory known it
// is a plain no; Qwen3-32B's plan warned of it. It is neither counted nor
// named, as a training run leaves out a GPU that does not run its
// precision (TestTrainingLeavesOutUnknownGPUsOfAnotherPrecision).
func TestUnknownGPUThatRunsNothingIsNotCounted(t *testing.T) {
	const r1 = `{"model":{"name":"DeepSeek-R1"}}`
	require.Equal(t, FitNo, shard(t, request(t, r1, h100sBesideK80(t, 12<<30))).Fits, "the premise: the K80's memory known, a plain no")
	a := shard(t, request(t, r1, h100sBesideK80(t, 0)))
	assert.Equal(t, FitNo, a.Fits, "%s", dump(t, a))
	require.NotNil(t, a.Refusal)
	assert.NotContains(t, a.Refusal.Text, "cuda:4")
	for _, row := range a.Levels {
		assert.Equal(t, FitNo, row.Fits, row.Quant)
	}

	b := shard(t, request(t, `{"model":{"name":"Qwen3-32B"}}`, h100sBesideK80(t, 0)))
	require.Equal(t, FitYes, b.Fits, "%s", dump(t, b))
	assert.NotContains(t, strings.Join(b.Warnings, "\n"), "cuda:4")
}
