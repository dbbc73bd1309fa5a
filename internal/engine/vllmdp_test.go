package engine

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/ai-hwaccel/ai-hwaccel/internal/model"
	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// GPU replicas over the nodes of a Ray cluster: vLLM starts every
// data-parallel rank on the node it is run on unless
// --data-parallel-size-local says how many are local
// (EngineArgs.create_engine_config: "Local DP size defaults to global DP
// size if not set"), so the command names the head node's replicas and
// the Ray data-parallel backend that places the others; replicas that
// each span nodes get neither (the Ray backend packs a rank on one node).
func TestVLLMGPUReplicasOverNodesNameTheLocalRanks(t *testing.T) {
	gpu := &registry.Device{Kind: registry.KindCUDA}
	dense := &model.Model{Name: "dense", Params: 8e9}
	tp2 := func(host string) []Stage {
		return []Stage{{Devices: []PlacedDevice{{ID: host + "/cuda:0", Dev: gpu}, {ID: host + "/cuda:1", Dev: gpu}}}}
	}
	p := &Placement{Model: dense, Kind: registry.KindCUDA, MultiNode: true, DP: 4, Context: 4096, Memory: Memory{Fraction: 0.9},
		Stages:   tp2("node0"),
		Replicas: [][]Stage{tp2("node0"), tp2("node0"), tp2("node1"), tp2("node1")}}
	args, _, ok := vllm{}.Args(p)
	assert.True(t, ok)
	line := strings.Join(args, " ")
	assert.Contains(t, line, "--data-parallel-size 4 ")
	assert.Contains(t, line, "--data-parallel-size-local 2")
	assert.Contains(t, line, "--data-parallel-backend ray")

	span := func(a, b string) []Stage {
		return []Stage{{Devices: []PlacedDevice{{ID: a + "/cuda:0", Dev: gpu}}}, {Devices: []PlacedDevice{{ID: b + "/cuda:0", Dev: gpu}}}}
	}
	q := &Placement{Model: dense, Kind: registry.KindCUDA, MultiNode: true, DP: 2, Context: 4096, Memory: Memory{Fraction: 0.9},
		Stages:   span("node0", "node1"),
		Replicas: [][]Stage{span("node0", "node1"), span("node2", "node3")}}
	args, notes, _ := vllm{}.Args(q)
	line = strings.Join(args, " ")
	assert.NotContains(t, line, "--data-parallel-backend")
	assert.NotContains(t, line, "--data-parallel-size-local")
	assert.Contains(t, strings.Join(notes, " "), "one vllm serve per node")
}
