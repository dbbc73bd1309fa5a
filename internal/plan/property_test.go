package plan

import (
	"fmt"
	"math"
	"math/rand"
	"os"
	"slices"
	"strconv"
	"testing"

	json "github.com/goccy/go-json"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/engine"
	"github.com/ai-hwaccel/ai-hwaccel/internal/model"
	"github.com/ai-hwaccel/ai-hwaccel/internal/modelio"
	"github.com/ai-hwaccel/ai-hwaccel/internal/quant"
	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// randomCase is one randomly drawn planning problem.
type randomCase struct {
	reg  *registry.Registry
	body string
}

var randomGPUs = []struct {
	kind registry.Kind
	name string
	cc   string
}{
	{registry.KindCUDA, "NVIDIA H100 80GB HBM3", "9.0"},
	{registry.KindCUDA, "NVIDIA A100-SXM4-80GB", "8.0"},
	{registry.KindCUDA, "NVIDIA GeForce RTX 4090", "8.9"},
	{registry.KindCUDA, "Tesla T4", "7.5"},
	{registry.KindCUDA, "", ""},
	{registry.KindROCm, "AMD Instinct MI300X OAM", ""},
	{registry.KindTPU, "TPU v5e", ""},
	{registry.KindIntelNPU, "", ""},
}

var randomModels = []string{`{"name":"llama-3.1-8b"}`, `{"name":"llama-3.1-70b"}`, `{"name":"llama-3.1-405b"}`,
	`{"name":"qwen2.5-0.5b"}`, `{"name":"mixtral-8x7b-v0.1"}`, `{"name":"gemma-2-27b"}`}

// randomMaxContext is the catalog's maximum context of each random model.
var randomMaxContext = func() []int {
	out := make([]int, len(randomModels))
	for i, body := range randomModels {
		var spec model.Spec
		if json.Unmarshal([]byte(body), &spec) == nil {
			if m, err := modelio.Resolve(spec); err == nil {
				out[i] = m.MaxContext
			}
		}
	}
	return out
}()

func drawCase(rng *rand.Rand) randomCase {
	r := registry.New()
	if rng.Intn(2) == 0 {
		r.Devices = append(r.Devices, host(int64(8+rng.Intn(1024))*gibBytes))
	}
	n := rng.Intn(9)
	kinds := []int{rng.Intn(len(randomGPUs)), rng.Intn(len(randomGPUs))}
	next := map[registry.Kind]int{}
	var cuda []string
	for i := 0; i < n; i++ {
		g := randomGPUs[kinds[rng.Intn(2)]]
		d := gpu(g.kind, next[g.kind], g.name, int64(4+rng.Intn(200))*gibBytes, g.cc)
		next[g.kind]++
		if rng.Intn(3) == 0 {
			free := d.MemoryBytes * int64(20+rng.Intn(80)) / 100
			d.MemoryFreeBytes = &free
		}
		d.Available = rng.Intn(10) != 0
		r.Devices = append(r.Devices, d)
		if g.kind == registry.KindCUDA {
			cuda = append(cuda, d.ID)
		}
	}
	if len(cuda) > 1 && rng.Intn(2) == 0 {
		r.SystemIO.Interconnects = append(r.SystemIO.Interconnects, link(registry.LinkNVSwitch, 900, cuda...))
	}
	var m string
	maxContext := 0
	if rng.Intn(2) == 0 {
		i := rng.Intn(len(randomModels))
		m, maxContext = randomModels[i], randomMaxContext[i]
	} else {
		m = fmt.Sprintf(`{"params_b":%.3f}`, math.Exp(rng.Float64()*math.Log(1000))/2)
	}
	ctx := []int{512, 4096, 32768, 131072}[rng.Intn(4)]
	if maxContext > 0 {
		ctx = min(ctx, maxContext) // a longer context is refused (TestContextBeyondTheModel)
	}
	body := fmt.Sprintf(`{"model":%s,"context_length":%d,"batch_size":%d`, m,
		ctx, []int{1, 4, 32}[rng.Intn(3)])
	if e := []string{"", "vllm", "llama.cpp"}[rng.Intn(3)]; e != "" {
		body += fmt.Sprintf(`,"engine":%q`, e)
	}
	if rng.Intn(4) == 0 {
		body += fmt.Sprintf(`,"quant":%q`, []string{"fp32", "bf16", "fp16", "fp8", "int8", "int4"}[rng.Intn(6)])
	}
	if rng.Intn(4) == 0 {
		body += `,"include_cpu":true`
	}
	if rng.Intn(4) == 0 {
		body += `,"cpu_offload":true`
	}
	return randomCase{reg: r, body: body + "}"}
}

// scaled returns a copy of r with every device's memory (and free memory)
// multiplied by f.
func scaled(t testing.TB, r *registry.Registry, f int64) *registry.Registry {
	c := registry.New()
	for _, d := range r.Devices {
		d.MemoryBytes *= f
		if d.MemoryFreeBytes != nil {
			v := *d.MemoryFreeBytes * f
			d.MemoryFreeBytes = &v
		}
		c.Devices = append(c.Devices, d)
	}
	c.SystemIO.Interconnects = append(c.SystemIO.Interconnects, r.SystemIO.Interconnects...)
	require.NoError(t, c.Validate())
	return c
}

// onHost classes a plan: 0 on accelerators only, 1 offloaded to host RAM,
// 2 in host RAM only.
func onHost(a *ShardingAnswer) int {
	if a.Strategy == StrategyOffload {
		return 1
	}
	for _, s := range a.Shards {
		if s.DeviceID != "cpu:0" {
			return 0
		}
	}
	return 2
}

func levelRank(q string) int {
	i := slices.Index(autoLevels, quant.Level(q))
	if i < 0 {
		return len(autoLevels)
	}
	return i
}

// TestPlanningProperties checks, over 500 random machines and models (fixed
// seed): plans never exceed device memory and cover every layer exactly
// once; more memory never makes a plan worse; a higher precision never needs
// less memory; suggest never picks a level a device cannot run.
func TestPlanningProperties(t *testing.T) {
	seed := int64(20261123)
	if v := os.Getenv("HWACCEL_SEED"); v != "" {
		seed, _ = strconv.ParseInt(v, 10, 64)
	}
	rng := rand.New(rand.NewSource(seed))
	fitting := 0
	for i := 0; i < 500; i++ {
		rc := drawCase(rng)
		require.NoError(t, rc.reg.Validate())
		name := fmt.Sprintf("case %d %s devices=%d", i, rc.body, len(rc.reg.Devices))

		a := shard(t, request(t, rc.body, rc.reg))
		checkInvariants(t, a)
		if t.Failed() {
			t.Fatalf("%s\n%s", name, dump(t, a))
		}
		if a.Fits.Yes() {
			fitting++
		}

		// Higher precision never needs less memory on the same devices: a
		// fitting row counts the overhead and activations of the pool it is
		// planned on (the fastest that fits, which may differ by level), a
		// row refused for memory that of the pool whose refusal it states,
		// any other row that fits nowhere the request's estimate. Known exception: an
		// engine that keeps the token embedding in host memory (llama.cpp)
		// subtracts it sized at the level's bits per weight (newCosts), not
		// at the type the per-tensor walk gives it, so on such a pool q6_k
		// can count a few MB more on the device than q8_0.
		prev := map[*pool]int64{}
		for _, row := range a.Levels {
			if row.pool != nil && row.pool.Budget.HostEmbeddings {
				continue
			}
			if p, ok := prev[row.pool]; ok {
				require.LessOrEqual(t, row.TotalBytes, p, "%s\n%s", name, dump(t, a))
			}
			prev[row.pool] = row.TotalBytes
		}

		// More memory never makes the plan worse.
		b := shard(t, request(t, rc.body, scaled(t, rc.reg, 2)))
		checkInvariants(t, b)
		// (A plan on accelerators beats one offloaded to host RAM, which
		// beats one in host RAM, whatever the precision: include_cpu and
		// cpu_offload only fall back to host RAM.)
		if a.Fits.Yes() {
			require.True(t, b.Fits.Yes(), "%s: fits with less memory, not with more", name)
			require.LessOrEqual(t, onHost(b), onHost(a), "%s: moved to host RAM with more memory", name)
			if onHost(b) == onHost(a) {
				require.LessOrEqual(t, levelRank(b.Quant), levelRank(a.Quant), "%s: lower precision with more memory", name)
				if b.Quant == a.Quant {
					require.LessOrEqual(t, strategyRank[b.Strategy], strategyRank[a.Strategy], "%s: %s became %s", name, a.Strategy, b.Strategy)
				}
			}
		}

		// Suggest never picks a level a device cannot run.
		v, err := SuggestQuant(request(t, rc.body, rc.reg))
		require.NoError(t, err)
		s := v
		require.Equal(t, a.Fits, s.Fits, name)
		if s.Fits.Yes() {
			require.Equal(t, a.Quant, s.Quant, name)
			// (as the plan's engine answers it: its own rule where it has
			// one, else the device's precision list)
			e, ok := engine.Lookup(s.Budget.Engine)
			require.True(t, ok, name)
			m := planningOf(t, request(t, rc.body, rc.reg)).Model
			for _, id := range s.Devices {
				d := rc.reg.Find(id)
				require.NotNil(t, d, name)
				why, byList := deviceRefuses(e, d, m, quant.Level(s.Quant))
				require.True(t, why == "" && !byList, "%s: %s cannot run %s with %s: %s", name, id, s.Quant, e.Name(), why)
			}
		}
	}
	t.Logf("%d of 500 random cases fit", fitting)
	require.Greater(t, fitting, 100, "the generator must exercise fitting plans")
	require.Less(t, fitting, 480, "and failing ones")
}
