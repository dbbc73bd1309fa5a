package plan

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/ai-hwaccel/ai-hwaccel/internal/quant"
)

// explainChoice writes the explanation from the facts a search recorded,
// without planning anything.
func TestExplainChoiceFromRecordedFacts(t *testing.T) {
	rows := []LevelRow{
		{Quant: "bf16", TotalBytes: 150 << 30, Reason: "doesn't fit: too big"},
		{Quant: "fp8", TotalBytes: 75 << 30, Fits: FitYes, Strategy: StrategyTensor},
		{Quant: "int4", TotalBytes: 40 << 30, Fits: FitYes, Strategy: StrategyNone},
	}
	fits := &choice{LevelsWhy: "auto", Rows: rows, Outcome: outcomeFits, Plan: planned{Fits: true, Level: quant.FP8}}
	assert.Equal(t, []string{"auto", "bf16 rejected: doesn't fit: too big", "fp8 fits (strategy tensor_parallel; 75.0 GiB as on one device)"},
		explainChoice(fits))
	// Strategy "none" is a name, not a word: the line says what it means
	// (a new user read "int4 fits (none; ...)" as "fits nothing").
	oneDevice := &choice{LevelsWhy: "auto", Rows: []LevelRow{rows[0], rows[2]}, Outcome: outcomeFits, Plan: planned{Fits: true, Level: quant.INT4}}
	assert.Equal(t, "int4 fits on one device (strategy none; 40.0 GiB)", explainChoice(oneDevice)[2])

	onHost := *fits
	onHost.Outcome, onHost.HostOnly = outcomeFitsOnHost, false
	assert.Equal(t, "include_cpu: no accelerator plan fits, so host RAM is used", explainChoice(&onHost)[1])

	none := &choice{LevelsWhy: "auto", Rows: rows[:1], Outcome: outcomeNothingFits, CouldOffload: true, CouldIncludeCPU: true}
	assert.Equal(t, []string{"auto", "bf16 rejected: doesn't fit: too big",
		"cpu_offload: true would keep the layers that do not fit in host RAM (llama.cpp runs them on the CPU; vLLM and SGLang read their weights across PCIe every step)",
		"include_cpu: true would plan on host RAM (the CPU) when no accelerator has room"}, explainChoice(none))

	noDevices := &choice{LevelsWhy: "quant int8 was requested", Outcome: outcomeNoDevices, Devices: []string{"cuda:3"}}
	assert.Equal(t, []string{"quant int8 was requested", "requested devices: cuda:3"}, explainChoice(noDevices))
	noDevices.Devices = nil
	assert.Equal(t, []string{"quant int8 was requested"}, explainChoice(noDevices), "the answer adds the refusal's does-not-fit line")

	offload := &choice{LevelsWhy: "auto", Outcome: outcomeFitsOffloaded, OffloadWithReplicas: false,
		Rows: []LevelRow{{Quant: "bf16", TotalBytes: 150 << 30}}, Plan: planned{Level: quant.BF16}}
	assert.Equal(t, []string{"auto", "bf16 chosen with cpu_offload (150.0 GiB as on one device)",
		"cpu_offload: no level fits on the accelerators alone, so the layers that do not fit stay in host RAM and run on the CPU; decode is bound by host memory bandwidth"},
		explainChoice(offload))
	offload.HostAtPCIe = "the host's memory bandwidth is not known"
	assert.Equal(t, "cpu_offload: no level fits on the accelerators alone, so the layers that do not fit stay in host RAM and run on the CPU; decode is bound by PCIe: the host's memory bandwidth is not known, so what the host part reads a step is timed at the GPU's PCIe bandwidth",
		explainChoice(offload)[2])

	hostOnly := &choice{LevelsWhy: "auto", HostOnly: true, Outcome: outcomeNothingFits, OffloadWithReplicas: true}
	assert.Equal(t, []string{"auto", "no available accelerator with known usable memory: planning on host RAM",
		"cpu_offload is not combined with replicas: the replicas would share one host's RAM and PCIe"}, explainChoice(hostOnly))
}
