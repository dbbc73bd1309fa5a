package engine

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/model"
	"github.com/ai-hwaccel/ai-hwaccel/internal/quant"
	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// A plan over the nodes of a cluster names no visibility variable (one
// environment cannot name two machines' GPUs), so its command ran on
// whatever GPUs each node exposes: a plan on cuda:4-7 of two nodes
// (--devices node0/cuda:4-7,node1/cuda:4-7) printed a bare
// "vllm serve ... --distributed-executor-backend ray", which Ray places on
// every GPU a node has, cuda:0-3 first. Ray limits a node to the GPUs
// visible where it is started ("set the CUDA_VISIBLE_DEVICES environment
// variable before starting a Ray node", ROCR_VISIBLE_DEVICES for AMD GPUs:
// https://docs.ray.io/en/latest/ray-core/scheduling/accelerators.html), and
// SGLang's one launch_server per node takes them like any CUDA process, so
// the notes name each node's variable.
func TestMultiNodePlansNameEachNodesGPUs(t *testing.T) {
	dense := &model.Model{Name: "dense", Params: 8e9}
	dev := func(i int) *registry.Device {
		return &registry.Device{ID: registry.DeviceID(registry.KindCUDA, i), Kind: registry.KindCUDA, Index: i}
	}
	stage := func(node string, from int) Stage {
		var ds []PlacedDevice
		for i := from; i < from+4; i++ {
			ds = append(ds, PlacedDevice{ID: node + "/cuda:" + strings.TrimPrefix(dev(i).ID, "cuda:"), Dev: dev(i)})
		}
		return Stage{Devices: ds}
	}
	p := &Placement{Model: dense, Level: quant.BF16, Kind: registry.KindCUDA, MultiNode: true, TP: 4, Context: 4096, Memory: Memory{Fraction: 0.9},
		Stages: []Stage{stage("node0", 4), stage("node1", 4)}}
	for _, e := range []Engine{vllm{}, sglang{}} {
		_, notes, ok := e.Args(p)
		require.True(t, ok, e.Name())
		all := strings.Join(notes, "\n")
		assert.Contains(t, all, "node0: CUDA_DEVICE_ORDER=PCI_BUS_ID CUDA_VISIBLE_DEVICES=4,5,6,7", "%s: %s", e.Name(), all)
		assert.Contains(t, all, "node1: CUDA_DEVICE_ORDER=PCI_BUS_ID CUDA_VISIBLE_DEVICES=4,5,6,7", "%s: %s", e.Name(), all)
	}
	_, notes, _ := vllm{}.Args(p)
	assert.Contains(t, strings.Join(notes, "\n"), "ray start", "vLLM's ranks run where Ray places them")
}
