package plan

import (
	"fmt"
	"math/rand"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/cputime"
	"github.com/ai-hwaccel/ai-hwaccel/internal/errs"
	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// replicaDevices returns, per replica index, the device ids of its shards.
func replicaDevices(t testing.TB, a *ShardingAnswer) map[int][]string {
	t.Helper()
	out := map[int][]string{}
	for _, s := range a.Shards {
		require.NotNil(t, s.Replica, "shard %s has no replica index", s.DeviceID)
		out[*s.Replica] = append(out[*s.Replica], s.DeviceID)
	}
	return out
}

func TestReplicas(t *testing.T) {
	cases := []struct {
		name     string
		body     string
		quant    string
		strategy string
		dp, tp   int
		perRep   int // devices per replica
		vllm     []string
	}{
		{"70B bf16 x4 replicas: TP 2 each", `{"model":{"name":"llama-3.1-70b"},"quant":"bf16","replicas":4}`,
			"bf16", StrategyData, 4, 2, 2, []string{"--tensor-parallel-size 2", "--data-parallel-size 4"}},
		{"70B bf16 max: 4 replicas of TP 2", `{"model":{"name":"llama-3.1-70b"},"quant":"bf16","replicas":"max"}`,
			"bf16", StrategyData, 4, 2, 2, []string{"--data-parallel-size 4"}},
		{"8B max: one replica per GPU", `{"model":{"name":"llama-3.1-8b"},"replicas":"MAX"}`,
			"bf16", StrategyData, 8, 1, 1, []string{"--data-parallel-size 8"}},
		// fp8 (67.7 GiB of weights) leaves one H100 under vLLM's own
		// start-up charge (about 3 GiB) less KV cache than one 4096-token
		// sequence needs: int4 is the best level of one GPU per replica.
		{"auto quant: the best level at which 5 replicas fit", `{"model":{"name":"llama-3.1-70b"},"replicas":5}`,
			"int4", StrategyData, 5, 1, 1, []string{"--data-parallel-size 5"}},
		{"one replica is today's plan", `{"model":{"name":"llama-3.1-70b"},"replicas":1}`,
			"bf16", StrategyTensor, 1, 2, 2, []string{"--tensor-parallel-size 2"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a := shard(t, request(t, c.body, eightH100(t, true)))
			checkInvariants(t, a)
			require.True(t, a.Fits.Yes(), a.Explanation)
			assert.Equal(t, c.quant, a.Quant)
			assert.Equal(t, c.strategy, a.Strategy)
			assert.Equal(t, c.dp, a.DPSize)
			assert.Equal(t, c.tp, a.TPSize)
			assert.Equal(t, 1, a.PPSize)
			reps := replicaDevices(t, a)
			require.Len(t, reps, c.dp)
			for i, ds := range reps {
				assert.Len(t, ds, c.perRep, "replica %d", i)
			}
			args := strings.Join(a.EngineArgs["vllm"], " ")
			for _, w := range c.vllm {
				assert.Contains(t, args, w)
			}
			if c.dp == 1 {
				assert.NotContains(t, args, "--data-parallel-size")
			}
			require.NotNil(t, a.Throughput)
			if c.dp > 1 {
				assert.InDelta(t, a.Throughput.DecodeTokensPerS*float64(c.dp), a.Throughput.DecodeTokensPerSTotal, 0.1)
				assert.Contains(t, strings.Join(a.Throughput.Assumptions, "\n"), "independent requests")
				assert.Contains(t, strings.Join(a.Explanation, "\n"), "data_parallel: ")
			} else {
				assert.Zero(t, a.Throughput.DecodeTokensPerSTotal)
			}
		})
	}
}

// replicas 1 is the plan of the fewest devices without replicas, with
// dp_size 1 and replica 0 on every shard.
func TestOneReplicaIsTodaysPlan(t *testing.T) {
	for _, body := range []string{`{"model":{"name":"llama-3.1-70b"}`, `{"model":{"name":"llama-3.1-405b"},"quant":"int4"`,
		`{"model":{"name":"llama-3.1-8b"},"batch_size":32`} {
		plain := shard(t, request(t, body+`,"placement":"fewest"}`, eightH100(t, true)))
		one := shard(t, request(t, body+`,"replicas":1}`, eightH100(t, true)))
		require.True(t, one.Fits.Yes())
		assert.Equal(t, 1, one.DPSize)
		assert.Zero(t, plain.DPSize)
		require.Len(t, one.Shards, len(plain.Shards))
		for i := range one.Shards {
			require.NotNil(t, one.Shards[i].Replica)
			assert.Equal(t, 0, *one.Shards[i].Replica)
			assert.Nil(t, plain.Shards[i].Replica)
			one.Shards[i].Replica = nil
		}
		assert.Equal(t, plain.Shards, one.Shards)
		assert.Equal(t, plain.Strategy, one.Strategy)
		assert.Equal(t, plain.Throughput, one.Throughput)
		assert.Equal(t, plain.EngineArgs, one.EngineArgs)
	}
}

func TestTooManyReplicas(t *testing.T) {
	a := shard(t, request(t, `{"model":{"name":"llama-3.1-70b"},"quant":"bf16","replicas":16}`, eightH100(t, true)))
	checkInvariants(t, a)
	assert.False(t, a.Fits.Yes())
	text := strings.Join(a.Explanation, "\n")
	assert.Contains(t, text, "16 replicas need at least 16 devices")
	assert.Contains(t, text, "has 8")

	// 5 replicas of bf16 70B need 10 H100s (TP 2 each): only 4 fit.
	a = shard(t, request(t, `{"model":{"name":"llama-3.1-70b"},"quant":"bf16","replicas":5}`, eightH100(t, true)))
	checkInvariants(t, a)
	assert.False(t, a.Fits.Yes())
	assert.Contains(t, strings.Join(a.Explanation, "\n"), "is tensor_parallel over 2 devices, and the 8 identical cuda_gpu (nvidia) devices (NVIDIA H100 80GB HBM3, 79.6 GiB) hold only 4 such replicas")

	// Replicas never mix device models: 4 H100 + 4 A100 hold 4 replicas, not 8.
	var devs []registry.Device
	for i := 0; i < 4; i++ {
		devs = append(devs, h100(i))
	}
	for i := 4; i < 8; i++ {
		devs = append(devs, gpu(registry.KindCUDA, i, "NVIDIA A100-SXM4-80GB", 80*gibBytes, "8.0"))
	}
	mixed := reg(t, devs)
	a = shard(t, request(t, `{"model":{"name":"llama-3.1-8b"},"replicas":8}`, mixed))
	assert.False(t, a.Fits.Yes())
	assert.Contains(t, strings.Join(a.Explanation, "\n"), "8 replicas need at least 8 devices")
	a = shard(t, request(t, `{"model":{"name":"llama-3.1-8b"},"replicas":"max"}`, mixed))
	checkInvariants(t, a)
	require.True(t, a.Fits.Yes())
	assert.Equal(t, 4, a.DPSize)
	name := ""
	for _, s := range a.Shards {
		d := mixed.Find(s.DeviceID)
		if name == "" {
			name = d.Name
		}
		assert.Equal(t, name, d.Name, "one group of identical devices")
	}
}

// The batch is split: each replica holds the KV cache of its share, and the
// engines are told the per-replica concurrency.
func TestReplicasSplitTheBatch(t *testing.T) {
	body := `{"model":{"name":"llama-3.1-8b"},"context_length":32768,"batch_size":%d%s}`
	split := shard(t, request(t, fmt.Sprintf(body, 64, `,"replicas":4`), eightH100(t, false)))
	checkInvariants(t, split)
	require.True(t, split.Fits.Yes(), split.Explanation)
	require.Equal(t, 4, split.DPSize)
	alone := shard(t, request(t, fmt.Sprintf(body, 16, `,"placement":"fewest"`), eightH100(t, false)))
	require.True(t, alone.Fits.Yes())
	assert.Equal(t, alone.TPSize, split.TPSize, "a replica is the unit a batch of 16 needs")
	assert.Equal(t, alone.Shards[0].MemoryBytes, split.Shards[0].MemoryBytes, "a replica holds the KV cache of 16 sequences")
	assert.Equal(t, alone.Throughput.DecodeTokensPerS, split.Throughput.DecodeTokensPerS)
	assert.Equal(t, 4*alone.MaxBatchSize, split.MaxBatchSize)
	assert.Contains(t, strings.Join(split.EngineArgs["vllm"], " "), "--max-num-seqs 16")
	require.Equal(t, len(alone.Levels), len(split.Levels))
	for i := range split.Levels {
		assert.Equal(t, alone.Levels[i].TotalBytes, split.Levels[i].TotalBytes, "level rows are one replica's, at 16 sequences")
	}

	// An uneven split rounds up: 10 sequences over 4 replicas is 3 each.
	odd := shard(t, request(t, fmt.Sprintf(body, 10, `,"replicas":4,"engine":"llama.cpp"`), eightH100(t, false)))
	require.True(t, odd.Fits.Yes())
	args := odd.EngineArgs["llama.cpp"]
	assert.Contains(t, strings.Join(args, " "), "-c 98304 -np 3")
	assert.Contains(t, strings.Join(args, " "), "--main-gpu 0")
	text := strings.Join(odd.Explanation, "\n")
	assert.Contains(t, text, "llama.cpp has no data-parallel mode: run 4 llama-server processes")
	assert.Contains(t, strings.Join(odd.Throughput.Assumptions, "\n"), "12 in flight")
}

func TestReplicasRequest(t *testing.T) {
	for _, bad := range []string{`0`, `-1`, `1.5`, `"two"`, `true`, `[]`, `70000`} {
		_, err := decode([]byte(`{"model":{"params_b":7},"replicas":` + bad + `}`))
		require.Error(t, err, bad)
		assert.Equal(t, errs.InvalidArgument, errs.CodeOf(err), bad)
	}
	r, err := decode([]byte(`{"model":{"params_b":7},"replicas":3}`))
	require.NoError(t, err)
	assert.Equal(t, 3, r.Replicas)
	r, err = decode([]byte(`{"model":{"params_b":7},"replicas":" max "}`))
	require.NoError(t, err)
	assert.True(t, r.ReplicasMax)
	r, err = decode([]byte(`{"model":{"params_b":7},"replicas":null}`))
	require.NoError(t, err)
	assert.False(t, planningOf(t, r).dataParallel())

	_, err = EstimateTraining(request(t, `{"model":{"params_b":7},"replicas":2,"training":{"method":"lora"}}`, eightH100(t, false)))
	assert.Equal(t, errs.InvalidArgument, errs.CodeOf(err))

	// suggest_quant lists every replica's devices.
	v, err := SuggestQuant(request(t, `{"model":{"name":"llama-3.1-70b"},"quant":"bf16","replicas":4}`, eightH100(t, true)))
	require.NoError(t, err)
	assert.Len(t, v.Devices, 8)
}

// TestReplicaProperties draws random machines and requests (as
// TestPlanningProperties) with replicas and checks: no shard over its
// device, each replica's layers covered exactly once per rank, replicas on
// disjoint devices of one identical group with one shape, dp_size the
// number asked, and more memory never losing the fit.
func TestReplicaProperties(t *testing.T) {
	seed := int64(20261124)
	if v := os.Getenv("HWACCEL_SEED"); v != "" {
		seed, _ = strconv.ParseInt(v, 10, 64)
	}
	rng := rand.New(rand.NewSource(seed))
	fitting, dp := 0, 0
	for i := 0; i < 400; i++ {
		rc := drawCase(rng)
		if i%2 == 0 {
			rc.reg = identicalMachine(rng)
		}
		asked := []string{`"max"`, "1", "2", "3", "4", "8"}[rng.Intn(6)]
		body := strings.TrimSuffix(rc.body, "}") + `,"replicas":` + asked + "}"
		name := fmt.Sprintf("case %d %s devices=%d", i, body, len(rc.reg.Devices))
		a := shard(t, request(t, body, rc.reg))
		checkInvariants(t, a)
		if t.Failed() {
			t.Fatalf("%s\n%s", name, dump(t, a))
		}
		if !a.Fits.Yes() {
			continue
		}
		fitting++
		if asked != `"max"` {
			assert.Equal(t, asked, itoa(a.DPSize), name)
		}
		if a.DPSize > 1 {
			dp++
			assert.Equal(t, StrategyData, a.Strategy, name)
			reps := replicaDevices(t, a)
			require.Len(t, reps, a.DPSize, name)
			key := ""
			for r := 0; r < a.DPSize; r++ {
				assert.Len(t, reps[r], len(reps[0]), "%s: replicas of one shape", name)
				for _, id := range reps[r] {
					d := rc.reg.Find(id)
					require.NotNil(t, d, name)
					k := d.Name + "|" + itoa(int(d.MemoryBytes>>20))
					if key == "" {
						key = k
					}
					assert.Equal(t, key, k, "%s: replicas on identical devices", name)
				}
			}
			require.NotNil(t, a.Throughput, name)
			if a.Throughput.DecodeTokensPerS > 0 {
				assert.InDelta(t, a.Throughput.DecodeTokensPerS*float64(a.DPSize), a.Throughput.DecodeTokensPerSTotal,
					0.01*a.Throughput.DecodeTokensPerSTotal+0.1, name)
			}
		}
		b := shard(t, request(t, body, scaled(t, rc.reg, 2)))
		checkInvariants(t, b)
		assert.True(t, b.Fits.Yes(), "%s: fits with less memory, not with more", name)
		if t.Failed() {
			t.Fatalf("%s\n%s", name, dump(t, a))
		}
	}
	t.Logf("%d of 400 fit, %d with 2+ replicas", fitting, dp)
	require.Greater(t, dp, 40, "the generator must exercise data-parallel plans")
}

// identicalMachine is a machine of one or two groups of identical GPUs (the
// devices replicas can use), some with less free memory or unavailable,
// with or without a high-bandwidth link.
func identicalMachine(rng *rand.Rand) *registry.Registry {
	r := registry.New()
	if rng.Intn(2) == 0 {
		r.Devices = append(r.Devices, host(int64(64+rng.Intn(1024))*gibBytes))
	}
	next := 0
	var ids []string
	for g := 0; g < 1+rng.Intn(2); g++ {
		m := randomGPUs[rng.Intn(4)] // CUDA models with a name
		mem := int64(16+rng.Intn(180)) * gibBytes
		for i := 0; i < 1+rng.Intn(8); i++ {
			d := gpu(m.kind, next, m.name, mem, m.cc)
			next++
			if rng.Intn(5) == 0 {
				free := mem * int64(50+rng.Intn(50)) / 100
				d.MemoryFreeBytes = &free
			}
			d.Available = rng.Intn(12) != 0
			r.Devices = append(r.Devices, d)
			ids = append(ids, d.ID)
		}
	}
	if len(ids) > 1 && rng.Intn(3) != 0 {
		r.SystemIO.Interconnects = append(r.SystemIO.Interconnects, link(registry.LinkNVSwitch, 900, ids...))
	}
	return r
}

// vLLM groups a MoE model's experts across data-parallel replicas: the
// answer says the plan's full replicas are an upper bound.
func TestReplicasMoENote(t *testing.T) {
	a := shard(t, request(t, `{"model":{"name":"mixtral-8x7b-v0.1"},"replicas":2,"engine":"vllm"}`, eightH100(t, false)))
	require.True(t, a.Fits.Yes(), a.Explanation)
	assert.Equal(t, 2, a.DPSize)
	assert.Contains(t, strings.Join(a.Explanation, "\n"), "mixture-of-experts")
	b := shard(t, request(t, `{"model":{"name":"llama-3.1-8b"},"replicas":2,"engine":"vllm"}`, eightH100(t, false)))
	assert.NotContains(t, strings.Join(b.Explanation, "\n"), "mixture-of-experts")
}

// Thousands of identical devices: "max" and large counts are answered
// quickly (one sort per placement, not one per replica).
func TestReplicasManyDevicesBounded(t *testing.T) {
	var devs []registry.Device
	for i := 0; i < 4096; i++ {
		devs = append(devs, gpu(registry.KindCUDA, i, "X", 80*gibBytes, "9.0"))
	}
	all := make([]string, len(devs))
	for i := range devs {
		all[i] = devs[i].ID
	}
	r := reg(t, devs, link(registry.LinkNVSwitch, 900, all...))
	for _, b := range []string{
		`{"model":{"name":"llama-3.1-8b"},"replicas":"max"}`,
		`{"model":{"name":"llama-3.1-70b"},"replicas":"max","batch_size":1048576,"context_length":512}`,
		`{"model":{"name":"llama-3.1-405b"},"replicas":"max","engine":"llama.cpp"}`,
		`{"model":{"name":"llama-3.1-70b"},"replicas":2048}`,
		`{"model":{"name":"llama-3.1-70b"},"replicas":4097}`,
	} {
		before, start := cputime.Process(t), time.Now()
		a := shard(t, request(t, b, r))
		checkInvariants(t, a)
		cpu := cputime.Process(t) - before
		assert.Less(t, cpu, hostileCPUBound, b)
		t.Logf("%v CPU, %v wall: fits=%v %s dp=%d tp=%d pp=%d", cpu, time.Since(start), a.Fits, a.Strategy, a.DPSize, a.TPSize, a.PPSize)
	}
}

// The data_parallel line says in words how each replica is laid out: "each
// on 1 device", "each tensor parallel over 2 devices", not the strategy
// codes ("each none over 1 device", which a user reads as no replica).
func TestReplicasLineSaysEachReplicasLayoutInWords(t *testing.T) {
	line := func(body string) string {
		a := shard(t, request(t, body, eightH100(t, true)))
		require.True(t, a.Fits.Yes(), a.Explanation)
		for _, l := range a.Explanation {
			if strings.HasPrefix(l, "data_parallel:") {
				return l
			}
		}
		t.Fatalf("no data_parallel line: %v", a.Explanation)
		return ""
	}
	one := line(`{"model":{"name":"llama-3.1-8b"},"replicas":"max"}`)
	assert.Contains(t, one, "8 copies of the model, each on 1 device (tp_size 1, pp_size 1)")
	assert.NotContains(t, one, "each none")
	two := line(`{"model":{"name":"llama-3.1-70b"},"quant":"bf16","replicas":4}`)
	assert.Contains(t, two, "4 copies of the model, each tensor parallel over 2 devices (tp_size 2, pp_size 1)")
}
