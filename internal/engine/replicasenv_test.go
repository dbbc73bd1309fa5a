package engine

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/ai-hwaccel/ai-hwaccel/internal/model"
	"github.com/ai-hwaccel/ai-hwaccel/internal/quant"
	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// llama.cpp replicas run one llama-server each, every one seeing only its
// replica's GPUs. The note said "(e.g. CUDA_VISIBLE_DEVICES)" whatever the
// GPUs, which AMD's do not read in the ROCm runtime's terms (the plan's own
// single-process command names them by ROCR_VISIBLE_DEVICES and UUID:
// rocmEnv), and gave no value: run as printed, replica 0's command
// (--split-mode none --main-gpu 0) took the first GPU of the runtime's own
// order, which on ROCm is not the registry's. It now names each
// replica's variables, by the rules of the plan's single-process env.
func TestLlamaCPPReplicasNameEachReplicasVisibleDevices(t *testing.T) {
	m := &model.Model{Name: "dense", Params: 8e9, Layers: 32}
	one := func(kind registry.Kind, i int, uuid string) []Stage {
		d := &registry.Device{ID: registry.DeviceID(kind, i), Kind: kind, Index: i, UUID: uuid}
		return []Stage{{End: 32, Devices: []PlacedDevice{{ID: d.ID, Dev: d}}}}
	}
	rocm := &Placement{Model: m, Level: quant.Level("q8_0"), Kind: registry.KindROCm, DP: 2, Layers: 32, Context: 4096, Batch: 1,
		Stages:   one(registry.KindROCm, 0, "0x1c9fd5a2b3e40a11"),
		Replicas: [][]Stage{one(registry.KindROCm, 0, "0x1c9fd5a2b3e40a11"), one(registry.KindROCm, 1, "0x5e2a0b7c81d34a22")}}
	note := replicasNote(rocm)
	assert.Contains(t, note, "0 on rocm:0 (ROCR_VISIBLE_DEVICES=GPU-1c9fd5a2b3e40a11)")
	assert.Contains(t, note, "1 on rocm:1 (ROCR_VISIBLE_DEVICES=GPU-5e2a0b7c81d34a22)")
	assert.NotContains(t, note, "CUDA_VISIBLE_DEVICES")

	cuda := &Placement{Model: m, Level: quant.Level("q8_0"), Kind: registry.KindCUDA, DP: 2, Layers: 32, Context: 4096, Batch: 1,
		Stages:   one(registry.KindCUDA, 0, ""),
		Replicas: [][]Stage{one(registry.KindCUDA, 0, ""), one(registry.KindCUDA, 1, "")}}
	note = replicasNote(cuda)
	assert.Contains(t, note, "1 on cuda:1 (CUDA_DEVICE_ORDER=PCI_BUS_ID CUDA_VISIBLE_DEVICES=1)")
}
