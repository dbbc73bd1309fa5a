package plan

import (
	"fmt"
	"testing"

	json "github.com/goccy/go-json"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/api/wire"
	"github.com/ai-hwaccel/ai-hwaccel/internal/engine"
	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

const gibBytes = int64(1 << 30)

// Engine names as requests and answers spell them (internal/engine).
const (
	engineVLLM     = "vllm"
	engineLlamaCPP = "llama.cpp"
)

// llamaFitMarginBytes is the memory llama.cpp's --fit keeps free per GPU
// (internal/engine/llamacpp.go).
var llamaFitMarginBytes = func() int64 {
	e, _ := engine.Lookup(engineLlamaCPP)
	return e.Memory(0).MarginBytes
}()

// gpu builds an available registry device.
func gpu(kind registry.Kind, index int, name string, memBytes int64, cc string) registry.Device {
	return registry.Device{ID: registry.DeviceID(kind, index), Kind: kind, Family: kind.Family(), Index: index,
		Name: name, Available: true, MemoryBytes: memBytes, ComputeCapability: cc}
}

func h100(i int) registry.Device {
	d := gpu(registry.KindCUDA, i, "NVIDIA H100 80GB HBM3", 81559<<20, "9.0")
	d.Vendor = "nvidia"
	return d
}

func mi300x(i int) registry.Device {
	d := gpu(registry.KindROCm, i, "AMD Instinct MI300X OAM", 206141652992, "")
	d.Vendor = "amd"
	return d
}

func host(memBytes int64) registry.Device {
	return registry.Device{ID: "cpu:0", Kind: registry.KindCPU, Family: registry.FamilyCPU, Name: "Intel(R) Xeon(R) Platinum 8480C",
		Vendor: "intel", Available: true, MemoryBytes: memBytes}
}

// reg builds a validated registry from devices and interconnects.
func reg(t testing.TB, devs []registry.Device, ics ...registry.Interconnect) *registry.Registry {
	r := registry.New()
	r.Devices = devs
	r.SystemIO.Interconnects = append(r.SystemIO.Interconnects, ics...)
	require.NoError(t, r.Validate())
	return r
}

func link(kind string, gbs float64, ids ...string) registry.Interconnect {
	return registry.Interconnect{Kind: kind, BandwidthGBs: gbs, Devices: ids}
}

func ids(prefix string, n int) []string {
	var out []string
	for i := 0; i < n; i++ {
		out = append(out, fmt.Sprintf("%s:%d", prefix, i))
	}
	return out
}

// decode is a request as the api layer hands it to the planner: decoded by
// internal/api/wire and checked by Validate.
func decode(body []byte) (*Request, error) {
	req, _, err := wire.DecodeRequest(body)
	if err != nil {
		return nil, err
	}
	return req, Validate(req)
}

// request decodes a request body and attaches a registry.
func request(t testing.TB, body string, r *registry.Registry) *Request {
	req, err := decode([]byte(body))
	require.NoError(t, err)
	if r != nil {
		req.Registry, req.RegistryShared = r, false
	}
	return req
}

// planningOf starts a planning call on a request, for tests of the stages.
func planningOf(t testing.TB, req *Request) *planning {
	p, err := newPlanning(req)
	require.NoError(t, err)
	return p
}

func shard(t testing.TB, req *Request) *ShardingAnswer {
	v, err := PlanSharding(req)
	require.NoError(t, err)
	return v
}

func dump(t testing.TB, v any) string {
	b, err := json.MarshalIndent(v, "", " ")
	require.NoError(t, err)
	return string(b)
}

func itoa(n int) string { return fmt.Sprint(n) }
