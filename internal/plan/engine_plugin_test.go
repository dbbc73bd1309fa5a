package plan_test

// An engine the planner has never heard of, registered here and planned
// through the public entry points (wire.DecodeRequest, plan.Validate, PlanSharding)
// with no change outside this file: the planner reaches engines through
// internal/engine's registry only.

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	json "github.com/goccy/go-json"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/api/wire"
	"github.com/ai-hwaccel/ai-hwaccel/internal/engine"
	"github.com/ai-hwaccel/ai-hwaccel/internal/plan"
	"github.com/ai-hwaccel/ai-hwaccel/internal/quant"
	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// layerServer is a made-up server: it runs on CUDA only, splits layers
// (never tensors), uses 80% of each GPU less 2 GiB, has no fp8 weights,
// adds a cache type of half a byte per value, and writes flags of its own.
type layerServer struct{ engine.Base }

const (
	layerServerName   = "layerserve"
	layerServerMargin = 2 << 30
)

func (layerServer) Name() string  { return layerServerName }
func (layerServer) Title() string { return "LayerServe" }

func (layerServer) RunsOn(k registry.Kind) bool { return k == registry.KindCUDA }

func (layerServer) Memory(asked float64) engine.Memory {
	if asked == 0 {
		asked = 0.8
	}
	return engine.Memory{Fraction: asked, MarginBytes: layerServerMargin}
}

func (layerServer) BudgetSource(who string, m engine.Memory) string {
	return fmt.Sprintf("%s plans within %g of each GPU less %d bytes", who, m.Fraction, m.MarginBytes)
}

func (layerServer) CacheTypes() []engine.CacheType {
	return []engine.CacheType{{Name: "half4", BytesPerElement: 0.5}}
}

func (layerServer) CannotLoad(l quant.Level) string {
	if l == quant.FP8 {
		return "LayerServe has no fp8 weights"
	}
	return ""
}

func (layerServer) Parallelism() engine.Parallelism {
	return engine.Parallelism{NoTensorWhy: "LayerServe splits layers only", Instead: "another engine"}
}

func (layerServer) Load(p *engine.Placement) (*engine.Load, string) {
	return &engine.Load{Quant: string(p.Level), Repo: "example/" + p.Model.Name}, ""
}

// Args are one --stage DEVICE:START-END per stage, the context and the
// batch.
func (layerServer) Args(p *engine.Placement) ([]string, []string, bool) {
	var a []string
	for _, s := range p.Stages {
		for _, d := range s.Devices {
			a = append(a, "--stage", fmt.Sprintf("%s:%d-%d", d.ID, s.Start, s.End))
		}
	}
	a = append(a, "--context", strconv.Itoa(p.Context), "--batch", strconv.Itoa(p.Batch))
	return a, []string{"LayerServe: flags written by the test engine"}, true
}

func (layerServer) Env(p *engine.Placement) map[string]string {
	var idx []string
	for _, s := range p.Stages {
		for _, d := range s.Devices {
			idx = append(idx, strconv.Itoa(d.Dev.Index))
		}
	}
	return map[string]string{"LAYERSERVE_DEVICES": strings.Join(idx, ",")}
}

func (layerServer) StartNotes(*engine.Placement) []string {
	return []string{"LayerServe: starts one process per stage"}
}

func registerLayerServer(t *testing.T) {
	engine.Register(layerServer{})
	t.Cleanup(func() { engine.Unregister(layerServerName) })
}

// h100s is a registry of n NVSwitch-connected H100 80GB, as JSON.
func h100s(t *testing.T, n int) string {
	r := registry.New()
	var ids []string
	for i := 0; i < n; i++ {
		d := registry.Device{ID: registry.DeviceID(registry.KindCUDA, i), Kind: registry.KindCUDA, Family: registry.KindCUDA.Family(),
			Index: i, Name: "NVIDIA H100 80GB HBM3", Vendor: "nvidia", Available: true, MemoryBytes: 81559 << 20, ComputeCapability: "9.0"}
		r.Devices = append(r.Devices, d)
		ids = append(ids, d.ID)
	}
	r.SystemIO.Interconnects = []registry.Interconnect{{Kind: registry.LinkNVSwitch, BandwidthGBs: 900, Devices: ids}}
	require.NoError(t, r.Validate())
	b, err := json.Marshal(r)
	require.NoError(t, err)
	return string(b)
}

// decode is what a host's request goes through before planning: the wire
// decoder (internal/api/wire) and the planner's own checks (plan.Validate).
func decode(body string) (*plan.Request, error) {
	req, _, err := wire.DecodeRequest([]byte(body))
	if err != nil {
		return nil, err
	}
	return req, plan.Validate(req)
}

func planWith(t *testing.T, body string) *plan.ShardingAnswer {
	t.Helper()
	req, err := decode(body)
	require.NoError(t, err)
	v, err := plan.PlanSharding(req)
	require.NoError(t, err)
	return v
}

func TestRegisteredEnginePlansEndToEnd(t *testing.T) {
	registerLayerServer(t)
	assert.Contains(t, engine.Names(), layerServerName)
	reg := h100s(t, 4)

	// Llama-3.1-70B in bf16 (~141 GB of weights) needs two H100s; an
	// engine without tensor parallelism gets a layer split.
	a := planWith(t, `{"model":{"name":"Llama-3.1-70B"},"quant":"bf16","engine":"layerserve","registry":`+reg+`}`)
	require.True(t, a.Fits.Yes(), a.Explanation)
	assert.Equal(t, plan.StrategyPipeline, a.Strategy)
	assert.Equal(t, 1, a.TPSize)
	require.NotNil(t, a.Budget)
	assert.Equal(t, layerServerName, a.Budget.Engine)
	assert.False(t, a.Budget.EngineDefault)
	assert.Equal(t, 0.8, a.Budget.MemoryFraction)
	assert.Equal(t, int64(layerServerMargin), a.Budget.MarginBytes)
	assert.Equal(t, "engine layerserve plans within 0.8 of each GPU less 2147483648 bytes", a.Budget.Source)
	total := int64(81559 << 20)
	var want []string
	for _, s := range a.Shards {
		assert.Equal(t, min(total-layerServerMargin, int64(float64(total)*0.8)), s.MemoryAvailableBytes, s.DeviceID)
		assert.LessOrEqual(t, s.MemoryBytes, s.MemoryAvailableBytes, s.DeviceID)
		want = append(want, "--stage", fmt.Sprintf("%s:%d-%d", s.DeviceID, s.LayerStart, s.LayerEnd))
	}
	require.Len(t, a.Shards, a.PPSize)
	assert.Equal(t, append(want, "--context", "4096", "--batch", "1"), a.EngineArgs[layerServerName])
	assert.Equal(t, []string{layerServerName}, keys(a.EngineArgs))
	assert.Equal(t, plan.Load{Quant: "bf16", Repo: "example/Llama-3.1-70B"}, a.Load[layerServerName])
	assert.NotEmpty(t, a.EngineEnv[layerServerName]["LAYERSERVE_DEVICES"])
	assert.Contains(t, a.Explanation, "LayerServe: flags written by the test engine")
	assert.Contains(t, a.Explanation, "LayerServe: starts one process per stage")

	// Its cache type is accepted and sized: a quarter of the 16-bit cache.
	body := `{"model":{"name":"Llama-3.1-8B"},"engine":"layerserve","context_length":32768,"registry":` + reg
	f16 := planWith(t, body+`}`)
	half := planWith(t, body+`,"kv_cache_dtype":"half4"}`)
	require.True(t, f16.Fits.Yes() && half.Fits.Yes())
	assert.InDelta(t, 0.25, float64(half.Memory.KVCacheBytes)/float64(f16.Memory.KVCacheBytes), 0.001)

	// Its levels and parallelism are its own.
	fp8 := planWith(t, `{"model":{"name":"Llama-3.1-8B"},"quant":"fp8","engine":"layerserve","registry":`+reg+`}`)
	assert.False(t, fp8.Fits.Yes())
	assert.Contains(t, fp8.Levels[0].Reason, "LayerServe has no fp8 weights")
	_, err := decode(`{"model":{"name":"Llama-3.1-8B"},"engine":"layerserve","tensor_parallel_size":2}`)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "with engine layerserve: LayerServe splits layers only; use 1 or another engine")
}

// claimingServer is layerServer claiming every CUDA device when a request
// names no engine.
type claimingServer struct{ layerServer }

func (claimingServer) Name() string { return "claimserve" }

func (claimingServer) Preference(d engine.Device) engine.Preference {
	if d.Kind == registry.KindCUDA {
		return engine.Preferred
	}
	return engine.Never
}

// An engine that claims a device kind is its default while registered;
// removed, the default is vLLM again (the planner's remembered pools are
// not reused across the change).
func TestRegisteredEngineAsDefault(t *testing.T) {
	reg := h100s(t, 2)
	body := `{"model":{"name":"Llama-3.1-8B"},"registry":` + reg + `}`
	assert.Equal(t, engine.NameVLLM, planWith(t, body).Budget.Engine)
	engine.Register(claimingServer{})
	a := planWith(t, body)
	engine.Unregister("claimserve")
	require.True(t, a.Fits.Yes(), a.Explanation)
	assert.Equal(t, "claimserve", a.Budget.Engine)
	assert.True(t, a.Budget.EngineDefault)
	assert.Equal(t, []string{"claimserve"}, keys(a.EngineArgs))
	assert.Equal(t, engine.NameVLLM, planWith(t, body).Budget.Engine)
}

// An engine that does not run on the devices says so, in its own name.
func TestRegisteredEngineThatCannotRun(t *testing.T) {
	registerLayerServer(t)
	r := registry.New()
	r.Devices = []registry.Device{{ID: "rocm:0", Kind: registry.KindROCm, Family: registry.KindROCm.Family(), Name: "AMD Instinct MI300X OAM",
		Vendor: "amd", Available: true, MemoryBytes: 206141652992}}
	require.NoError(t, r.Validate())
	b, err := json.Marshal(r)
	require.NoError(t, err)
	a := planWith(t, `{"model":{"name":"Llama-3.1-8B"},"engine":"layerserve","registry":`+string(b)+`}`)
	assert.False(t, a.Fits.Yes())
	assert.Contains(t, strings.Join(a.Explanation, "\n"), "does not fit: LayerServe does not run on "+string(registry.KindROCm)+" devices")
}

// Once removed, the engine is unknown again.
func TestUnregisteredEngineIsRefused(t *testing.T) {
	registerLayerServer(t)
	engine.Unregister(layerServerName)
	_, err := decode(`{"model":{"name":"Llama-3.1-8B"},"engine":"layerserve"}`)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `engine "layerserve" is not one of `+strings.Join(engine.Names(), ", "))
	assert.NotContains(t, engine.Names(), layerServerName)
}

func keys(m map[string][]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
