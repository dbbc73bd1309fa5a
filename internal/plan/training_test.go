package plan

import (
	"fmt"
	"math"
	"os"
	"sort"
	"strings"
	"testing"

	json "github.com/goccy/go-json"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/errs"
	"github.com/ai-hwaccel/ai-hwaccel/internal/model"
	"github.com/ai-hwaccel/ai-hwaccel/internal/quant"
	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// Bounds promised in docs/accuracy.md ("Training"): every replayed measured
// training row within 20 %, except the outliers listed with their reason
// (within 25 %).
const (
	trainingBound        = 0.20
	trainingOutlierBound = 0.25
	// trainingMedianCeiling bounds the replay's median |error|, so that a
	// change of default that moves several rows inside the per-row bound
	// (checkpointing on for LoRA, 36735a78, moved two from -3 % and +4 % to
	// -18 % and -15 %) fails a test instead of passing unseen.
	trainingMedianCeiling = 0.07
)

var trainingOutliers = map[string]string{
	"LLaMA-7B|TP2, sharding stage2": "the row states neither batch nor sequence length; replayed with the TP1 row's (batch 4, 2048 tokens)",
}

// trainGPUs builds a registry of n identical GPUs of memBytes each that run
// bf16, fp16 and fp32, plus the host.
func trainGPUs(t testing.TB, n int, memBytes int64) *registry.Registry {
	t.Helper()
	r := registry.New()
	r.Devices = append(r.Devices, registry.Device{ID: "cpu:0", Kind: registry.KindCPU, Family: registry.FamilyCPU,
		Available: true, MemoryBytes: 512 << 30, Quantizations: []string{"fp32", "bf16", "fp16", "int8", "int4"}})
	for i := 0; i < n; i++ {
		r.Devices = append(r.Devices, registry.Device{
			ID: "cuda:" + string(rune('0'+i)), Kind: registry.KindCUDA, Family: registry.FamilyGPU, Index: i,
			Vendor: "nvidia", Name: "test GPU", Available: true, MemoryBytes: memBytes,
			Quantizations: []string{"fp32", "fp16", "bf16", "fp8", "int8", "int4"},
		})
	}
	return r
}

// trainRequest decodes a request body and attaches the registry.
func trainRequest(t testing.TB, body string, r *registry.Registry) *Request {
	t.Helper()
	req, err := decode([]byte(body))
	require.NoError(t, err, body)
	if r != nil {
		req.Registry = r
	}
	return req
}

func estimate(t testing.TB, req *Request) *TrainingAnswer {
	t.Helper()
	a, err := EstimateTraining(req)
	require.NoError(t, err)
	b, err := json.Marshal(a)
	require.NoError(t, err)
	require.True(t, json.Valid(b))
	return a
}

// Full mixed-precision Adam costs 2 + 2 + 12 = 16 bytes per parameter
// before activations (ZeRO paper §3.1, https://arxiv.org/abs/1910.02054):
// 7B → 112 GB; a table of 3× fp16 weights would be half of that.
func TestTrainingFullMixedPrecision(t *testing.T) {
	req := trainRequest(t, `{"model":{"params_b":7},"training":{"seq_len":1,"micro_batch":1}}`, trainGPUs(t, 1, 80<<30))
	a := estimate(t, req)
	pd := a.PerDevice
	assert.Equal(t, int64(14e9), pd.WeightsBytes)
	assert.Equal(t, int64(14e9), pd.GradientsBytes)
	assert.Equal(t, int64(84e9), pd.OptimizerBytes)
	assert.Equal(t, pd.WeightsBytes+pd.GradientsBytes+pd.OptimizerBytes+pd.ActivationsBytes+pd.FrozenModelsBytes+pd.OverheadBytes, pd.TotalBytes)
	assert.False(t, a.Fits.Yes())
	assert.Zero(t, a.MaxMicroBatch)
	assert.Equal(t, "full", a.Method)
	assert.Equal(t, int64(7e9), a.TrainableParams)
	assert.NotEmpty(t, a.Explanation)
	assert.Contains(t, strings.Join(a.Warnings, " "), "shape estimated")
}

// ZeRO stages shard optimizer (1), gradients (2), weights (3) over the
// data-parallel devices.
func TestTrainingZeROStages(t *testing.T) {
	var prev int64 = math.MaxInt64
	for stage := 0; stage <= 3; stage++ {
		body := `{"model":{"name":"Llama-3.1-8B"},"training":{"seq_len":2048,"micro_batch":1,"gradient_checkpointing":true,"zero_stage":` + string(rune('0'+stage)) + `}}`
		a := estimate(t, trainRequest(t, body, trainGPUs(t, 8, 80<<30)))
		assert.Equal(t, 8, a.NumDevices)
		assert.Less(t, a.PerDevice.TotalBytes, prev, "stage %d", stage)
		prev = a.PerDevice.TotalBytes
		P := float64(a.Params)
		switch stage {
		case 1:
			assert.InDelta(t, P*12/8, float64(a.PerDevice.OptimizerBytes), 1e6)
			assert.InDelta(t, P*2, float64(a.PerDevice.GradientsBytes), 1e6)
		case 3:
			assert.InDelta(t, P*2/8, float64(a.PerDevice.WeightsBytes), 1e6)
			assert.True(t, a.Fits.Yes())
		}
	}
	// fsdp is stage 3.
	a := estimate(t, trainRequest(t, `{"model":{"name":"Llama-3.1-8B"},"training":{"fsdp":true}}`, trainGPUs(t, 4, 80<<30)))
	assert.Equal(t, 3, a.ZeROStage)
}

// TestTrainingActivationsPlainMLP: every architecture whose FFN has no gate
// (model.Arch.PlainMLP: Falcon, GPT-2, GPT-NeoX, GPT-J, BLOOM, OPT,
// StarCoder, T5) stores the plain FFN's 4·I per token, not the gated 8·I.
func TestTrainingActivationsPlainMLP(t *testing.T) {
	s := &trainingSetup{TrainingOptions: TrainingOptions{SeqLen: 2048, MicroBatch: 1, TensorParallel: 1, Precision: "bf16"}}
	shape := model.Model{Layers: 32, Hidden: 4096, Heads: 32, Intermediate: 16384, Vocab: 50432}
	gated := shape
	gated.Architecture = "llama"
	for _, arch := range []string{"falcon", "gpt2", "gpt_neox", "gptj", "bloom", "opt", "starcoder", "t5"} {
		plain := shape
		plain.Architecture = arch
		diff := float64(activationBytes(&gated, s) - activationBytes(&plain, s))
		assert.InDelta(t, 2048.0*32*4*16384, diff, 1, arch)
	}
}

func TestTrainingActivations(t *testing.T) {
	m := model.Lookup("Llama-2-7B")
	require.NotNil(t, m)
	s := &trainingSetup{TrainingOptions: TrainingOptions{SeqLen: 2048, MicroBatch: 1, TensorParallel: 1, Precision: "bf16"}}
	full := activationBytes(m, s)
	// Per token per layer: 12h + 4·K·d + 8·I bytes = 153,600 for Llama-2-7B,
	// plus 10·V bytes per token of logits.
	want := 2048.0*32*(12*4096+4*4096+8*11008) + 10*2048*32000
	assert.InDelta(t, want, float64(full), 1)
	s.checkpointing = true
	ckpt := activationBytes(m, s)
	assert.Less(t, float64(ckpt), float64(full)/5)
	s.checkpointing = false
	off := false
	s.FlashAttention = &off
	assert.Greater(t, activationBytes(m, s), full) // attention scores stored
	s.FlashAttention = nil
	s.MicroBatch = 2
	assert.InDelta(t, 2*float64(full), float64(activationBytes(m, s)), 2)
	s.MicroBatch, s.TensorParallel = 1, 2
	assert.Less(t, activationBytes(m, s), full)
}

func TestTrainingMethods(t *testing.T) {
	gpus := trainGPUs(t, 1, 80<<30)
	get := func(training string) *TrainingAnswer {
		return estimate(t, trainRequest(t, `{"model":{"name":"Llama-3.1-8B"},"training":`+training+`}`, gpus))
	}
	base := `"seq_len":512,"micro_batch":1,"gradient_checkpointing":true`
	full := get(`{` + base + `}`)
	lora := get(`{"method":"lora",` + base + `}`)
	qlora := get(`{"method":"qlora",` + base + `}`)
	prefix := get(`{"method":"prefix",` + base + `}`)
	dpo := get(`{"method":"dpo",` + base + `}`)
	dpoLoRA := get(`{"method":"dpo","lora_rank":16,` + base + `}`)
	rlhf := get(`{"method":"ppo",` + base + `}`)
	distill := get(`{"method":"distillation","teacher":{"name":"Llama-3.1-70B"},` + base + `}`)

	// LoRA r=16 on q and v of Llama-3.1-8B: 16 × (4096+4096 + 4096+1024) × 32 layers.
	assert.Equal(t, int64(16*(8192+5120)*32), lora.TrainableParams)
	assert.Less(t, lora.PerDevice.TotalBytes, full.PerDevice.TotalBytes/3)
	assert.Less(t, qlora.PerDevice.WeightsBytes, lora.PerDevice.WeightsBytes/2)
	assert.Equal(t, int64(20*32*2*4096), prefix.TrainableParams)
	assert.Greater(t, dpo.PerDevice.FrozenModelsBytes, int64(15e9)) // reference copy
	assert.Zero(t, dpoLoRA.PerDevice.FrozenModelsBytes)             // reference = base without adapters
	assert.Greater(t, rlhf.PerDevice.TotalBytes, dpo.PerDevice.TotalBytes)
	assert.Greater(t, distill.PerDevice.FrozenModelsBytes, int64(140e9)) // 70B teacher in bf16
	assert.True(t, lora.Fits.Yes())
	assert.True(t, qlora.Fits.Yes())
	assert.False(t, full.Fits.Yes())
	assert.Greater(t, qlora.MaxMicroBatch, lora.MaxMicroBatch-1)
	for _, a := range []*TrainingAnswer{lora, qlora, prefix, dpoLoRA} {
		assert.Positive(t, a.MaxMicroBatch, a.Method)
	}
	// Optimizers: 8-bit Adam and SGD need less state than AdamW.
	adam8 := get(`{"optimizer":"adamw_8bit",` + base + `}`)
	sgd := get(`{"optimizer":"sgd",` + base + `}`)
	P := float64(full.Params)
	assert.InDelta(t, 12*P, float64(full.PerDevice.OptimizerBytes), 1e6)
	assert.InDelta(t, 6*P, float64(adam8.PerDevice.OptimizerBytes), 1e6)
	assert.InDelta(t, 4*P, float64(sgd.PerDevice.OptimizerBytes), 1e6)
	fp32 := get(`{"precision":"fp32",` + base + `}`)
	assert.InDelta(t, 16*P, float64(fp32.PerDevice.WeightsBytes+fp32.PerDevice.GradientsBytes+fp32.PerDevice.OptimizerBytes), 1e6)
}

func TestTrainingLargestMicroBatch(t *testing.T) {
	req := trainRequest(t, `{"model":{"name":"Llama-3.1-8B"},"training":{"method":"lora","seq_len":4096,"micro_batch":1}}`, trainGPUs(t, 1, 80<<30))
	a := estimate(t, req)
	require.True(t, a.Fits.Yes())
	require.Positive(t, a.MaxMicroBatch)
	s, err := validateTraining(*req.Training, planningOf(t, req))
	require.NoError(t, err)
	s.MicroBatch = a.MaxMicroBatch
	budget := a.Devices[0].MemoryAvailableBytes
	assert.LessOrEqual(t, trainingMemory(req.Model, s, 1).TotalBytes, budget)
	s.MicroBatch++
	assert.Greater(t, trainingMemory(req.Model, s, 1).TotalBytes, budget)
}

func TestTrainingDeviceSelection(t *testing.T) {
	r := trainGPUs(t, 4, 80<<30)
	// A restricted device list.
	a := estimate(t, trainRequest(t, `{"model":{"name":"Llama-3.1-8B"},"devices":["cuda:1","cuda:2"],"training":{"method":"lora"}}`, r))
	assert.Equal(t, 2, a.NumDevices)
	require.Len(t, a.Devices, 2)
	// More devices asked than present: does not fit, says why.
	a = estimate(t, trainRequest(t, `{"model":{"name":"Llama-3.1-8B"},"training":{"num_devices":16}}`, r))
	assert.False(t, a.Fits.Yes())
	assert.Contains(t, strings.Join(a.Explanation, " "), "16 devices requested")
	// No accelerator: host RAM.
	cpu := trainGPUs(t, 0, 0)
	a = estimate(t, trainRequest(t, `{"model":{"name":"Llama-3.2-1B"},"training":{"method":"lora"}}`, cpu))
	require.Len(t, a.Devices, 1)
	assert.Equal(t, "cpu:0", a.Devices[0].DeviceID)
	// No device at all.
	a = estimate(t, trainRequest(t, `{"model":{"name":"Llama-3.2-1B"}}`, registry.New()))
	assert.False(t, a.Fits.Yes())
	assert.NotNil(t, a.Devices)
	assert.Empty(t, a.Devices)
	// A GPU without bf16 is skipped for bf16 training.
	old := trainGPUs(t, 1, 16<<30)
	old.Devices[1].Quantizations = []string{"fp32", "fp16", "int8"}
	a = estimate(t, trainRequest(t, `{"model":{"name":"Llama-3.2-1B"},"training":{"method":"lora"}}`, old))
	assert.Equal(t, "cpu:0", a.Devices[0].DeviceID)
	a = estimate(t, trainRequest(t, `{"model":{"name":"Llama-3.2-1B"},"training":{"method":"lora","precision":"fp16"}}`, old))
	assert.Equal(t, "cuda:0", a.Devices[0].DeviceID)
}

func TestTrainingRequestErrors(t *testing.T) {
	for _, body := range []string{
		`{"model":{"params_b":7},"training":{"method":"magic"}}`,
		`{"model":{"params_b":7},"training":{"optimizer":"lion"}}`,
		`{"model":{"params_b":7},"training":{"precision":"fp8"}}`,
		`{"model":{"params_b":7},"training":{"zero_stage":4}}`,
		`{"model":{"params_b":7},"training":{"zero_stage":2,"fsdp":true}}`,
		`{"model":{"params_b":7},"training":{"micro_batch":-1}}`,
		`{"model":{"params_b":7},"training":{"num_devices":3,"tensor_parallel":2}}`,
		`{"model":{"params_b":7},"training":{"lora_targets":["attn"]}}`,
		`{"model":{"params_b":7},"training":{"method":"distillation","teacher":{"name":"no-such-model-xyz"}}}`,
	} {
		req, err := decode([]byte(body))
		if err == nil {
			req.Registry = trainGPUs(t, 1, 80<<30)
			_, err = EstimateTraining(req)
		}
		require.Error(t, err, body)
		assert.Contains(t, []string{errs.InvalidArgument, errs.UnknownModel}, errs.CodeOf(err), body)
	}
	_, err := decode([]byte(`{"model":{"params_b":7},"training":{"unknown_key":1}}`))
	require.Error(t, err)
	assert.Equal(t, errs.InvalidArgument, errs.CodeOf(err))
}

// trainingRow is a training record of internal/calibration/data/memory.json
// (published measurements, each record with its source).
type trainingRow struct {
	Kind        string  `json:"kind"`
	Model       string  `json:"model"`
	Method      string  `json:"method"`
	Config      string  `json:"config"`
	GPUMemoryGB float64 `json:"gpu_memory_gb"`
	UpperBound  float64 `json:"gpu_memory_gb_upper_bound"`
	Source      string  `json:"source"`
}

// trainingReplay says how a row is replayed. The rows give the model,
// method and hardware; what they leave out is an assumption stated here and
// in docs/accuracy.md.
type trainingReplay struct {
	model    string // request "model" object
	training string // request "training" object
	devices  int
	assume   string
	skip     string // why a row is not modeled
}

// llama65B is LLaMA-65B's shape: LLaMA paper (arXiv 2302.13971) Table 2
// (dimension 8192, 64 heads, 80 layers), FFN 22016 and vocabulary 32000 as
// in the 7B..65B Hugging Face conversions.
const llama65B = `{"config":{"model_type":"llama","num_hidden_layers":80,"hidden_size":8192,"intermediate_size":22016,"num_attention_heads":64,"vocab_size":32000}}`

var trainingReplays = map[string]trainingReplay{
	"bigscience/T0_3B|Full finetuning": {
		model: `{"params_b":3}`, training: `{"precision":"fp32","seq_len":64,"micro_batch":8,"gradient_checkpointing":false}`, devices: 1,
		assume: "fp32 (PEFT examples load without torch_dtype), 64-token sequences, batch 8 (twitter_complaints example); shape from the nominal 3B",
	},
	"bigscience/T0_3B|PEFT-LoRA + DeepSpeed ZeRO-3 CPU offload": {
		skip: "CPU offload: the GPU share is set by DeepSpeed bucket sizes the row does not give; offload is not modeled",
	},
	"bigscience/mt0-xxl|PEFT-LoRA (PyTorch)": {
		model: `{"params_b":12}`, training: `{"method":"lora","lora_rank":8,"precision":"fp32","seq_len":64,"micro_batch":8,"gradient_checkpointing":false}`, devices: 1,
		assume: "fp32 frozen base, LoRA r=8 on q,v (PEFT example), 64 tokens × 8, no gradient checkpointing (the example's plain PyTorch loop); shape from the nominal 12B",
	},
	"bigscience/bloomz-7b1|PEFT-LoRA (PyTorch)": {
		model: `{"params_b":7}`, training: `{"method":"lora","lora_rank":8,"precision":"fp32","seq_len":64,"micro_batch":8,"gradient_checkpointing":false}`, devices: 1,
		assume: "fp32 frozen base, LoRA r=8 on q,v (PEFT example), 64 tokens × 8, no gradient checkpointing (the example's plain PyTorch loop); shape from the nominal 7B",
	},
	"LLaMA-7B|TP1 PP1, sharding stage2, bs 4, flash-attn": {
		model: `{"name":"Llama-2-7B"}`, training: `{"precision":"fp16","zero_stage":2,"micro_batch":4,"seq_len":2048}`, devices: 8,
		assume: "LLaMA-7B = Llama-2-7B shape; fp16 mixed precision with AdamW; 2048-token sequences (LLaMA's context); no recomputation",
	},
	"LLaMA-7B|TP2, sharding stage2": {
		model: `{"name":"Llama-2-7B"}`, training: `{"precision":"fp16","zero_stage":2,"tensor_parallel":2,"micro_batch":4,"seq_len":2048}`, devices: 8,
		assume: "as the TP1 row (batch 4, 2048 tokens), tensor parallel 2 × data parallel 4",
	},
	"LLaMA 65B|QLoRA (4-bit NF4 base + LoRA adapters, paged optimizers)": {
		model: llama65B, training: `{"method":"qlora","lora_rank":64,"lora_targets":["all-linear"],"gradient_checkpointing":true,"seq_len":512,"micro_batch":1}`, devices: 1,
		assume: "QLoRA paper setup: r=64 on all linear layers, gradient checkpointing, 512-token sequences, batch 1",
	},
}

func loadTrainingRows(t *testing.T) []trainingRow {
	b, err := os.ReadFile("../calibration/data/memory.json")
	require.NoError(t, err)
	var doc struct {
		Rows []trainingRow `json:"memory_measured"`
	}
	require.NoError(t, json.Unmarshal(b, &doc))
	var out []trainingRow
	for _, r := range doc.Rows {
		switch r.Kind {
		case "finetune_peak_memory", "training_gpu_memory_per_device", "finetune_fits":
			out = append(out, r)
		}
	}
	return out
}

// TestTrainingAgainstMeasurements replays the training rows of memory.json
// and prints the table of docs/accuracy.md:
//
//	go test ./internal/plan/ -run TestTrainingAgainstMeasurements -v
func TestTrainingAgainstMeasurements(t *testing.T) {
	rows := loadTrainingRows(t)
	require.Len(t, rows, 7)
	var rel []float64
	for _, r := range rows {
		key := r.Model + "|" + r.Method + r.Config
		if r.Method == "" {
			key = r.Model + "|" + r.Config
		}
		rp, ok := trainingReplays[key]
		require.True(t, ok, "no replay for %q", key)
		if rp.skip != "" {
			t.Logf("%-22s %-44s not modeled: %s", r.Model, clipText(r.Method+r.Config, 44), rp.skip)
			continue
		}
		gpuBytes := int64(80 << 30)
		if r.UpperBound > 0 {
			gpuBytes = int64(r.UpperBound * (1 << 30))
		}
		body := `{"model":` + rp.model + `,"training":` + rp.training + `}`
		a := estimate(t, trainRequest(t, body, trainGPUs(t, rp.devices, gpuBytes)))
		got := float64(a.PerDevice.TotalBytes) / (1 << 30)
		if r.Kind == "finetune_fits" {
			t.Logf("%-22s %-44s fits in %.0f GiB: estimate %.1f GiB, fits=%v  (%s)", r.Model, clipText(r.Method, 44), r.UpperBound, got, a.Fits, rp.assume)
			assert.True(t, a.Fits.Yes(), r.Model)
			continue
		}
		e := (got - r.GPUMemoryGB) / r.GPUMemoryGB
		rel = append(rel, math.Abs(e))
		t.Logf("%-22s %-44s measured %6.2f GiB estimate %6.2f GiB %+6.1f%%  (%s)", r.Model, clipText(r.Method+r.Config, 44), r.GPUMemoryGB, got, 100*e, rp.assume)
		bound := trainingBound
		if why, ok := trainingOutliers[key]; ok {
			bound = trainingOutlierBound
			t.Logf("  outlier: %s", why)
		}
		assert.LessOrEqual(t, math.Abs(e), bound, key)
	}
	require.Len(t, rel, 5)
	sort.Float64s(rel)
	p90 := rel[int(math.Ceil(0.9*float64(len(rel))))-1]
	t.Logf("training peak memory: n=%d median |error| %.1f%% p90 %.1f%% max %.1f%%", len(rel), 100*rel[len(rel)/2], 100*p90, 100*rel[len(rel)-1])
	assert.LessOrEqual(t, rel[len(rel)/2], trainingMedianCeiling, "median |error| of the training replay")
}

func clipText(s string, n int) string {
	if len(s) > n {
		return s[:n-1] + "…"
	}
	return s
}

// QLoRA of an 8B model on one 24 GB GPU is what the QLoRA reference trainer
// runs with gradient checkpointing on (its --gradient_checkpointing defaults
// to true, https://github.com/artidoro/qlora/blob/main/qlora.py); PEFT's
// prepare_model_for_kbit_training turns it on by default too
// (https://huggingface.co/docs/peft/package_reference/peft_model). 24564 MiB
// is what nvidia-smi reports for an RTX 4090 (fb_memory_usage/total of
// netdata's rtx-4090-driver-535.xml capture,
// https://github.com/netdata/go.d.plugin modules/nvidia_smi/testdata).
func TestTrainingAdaptersCheckpointByDefault(t *testing.T) {
	rtx4090 := trainGPUs(t, 1, 24564<<20)
	for _, method := range []string{"qlora", "lora"} {
		a := estimate(t, trainRequest(t, `{"model":{"name":"Llama-3.1-8B"},"training":{"method":"`+method+`"}}`, rtx4090))
		assert.True(t, a.GradientCheckpointing, method)
		if method == "qlora" {
			assert.True(t, a.Fits.Yes(), "%s: %d bytes", method, a.PerDevice.TotalBytes)
		}
	}
	// An explicit false is honoured, and the answer says checkpointing fits.
	off := estimate(t, trainRequest(t, `{"model":{"name":"Llama-3.1-8B"},"training":{"method":"qlora","gradient_checkpointing":false}}`, rtx4090))
	assert.False(t, off.GradientCheckpointing)
	assert.False(t, off.Fits.Yes())
	require.NotNil(t, off.FitsWith)
	assert.True(t, off.FitsWith.GradientCheckpointing)
	assert.Equal(t, 0, off.FitsWith.ZeROStage)
	assert.Less(t, off.FitsWith.PerDeviceBytes, int64(24564<<20))
	assert.Contains(t, strings.Join(off.Explanation, "\n"), "fits with gradient_checkpointing")
	// Full fine-tuning keeps checkpointing off unless asked.
	full := estimate(t, trainRequest(t, `{"model":{"name":"Llama-3.1-8B"}}`, rtx4090))
	assert.False(t, full.GradientCheckpointing)
}

// Full fine-tuning of an 8B model on 8x H100 80GB does not fit replicated
// (16 bytes per parameter, ZeRO paper §3.1) but does with weights, gradients
// and optimizer sharded, which is how it is run (DeepSpeed ZeRO-3 or FSDP
// full shard, https://huggingface.co/docs/transformers/deepspeed).
func TestTrainingSuggestsZeRO3(t *testing.T) {
	h100x8 := trainGPUs(t, 8, 80<<30)
	a := estimate(t, trainRequest(t, `{"model":{"name":"Llama-3.1-8B"},"training":{"method":"full"}}`, h100x8))
	assert.False(t, a.Fits.Yes())
	assert.Equal(t, 0, a.ZeROStage)
	require.NotNil(t, a.FitsWith)
	assert.Equal(t, 3, a.FitsWith.ZeROStage)
	assert.False(t, a.FitsWith.GradientCheckpointing)
	z3 := estimate(t, trainRequest(t, `{"model":{"name":"Llama-3.1-8B"},"training":{"method":"full","zero_stage":3}}`, h100x8))
	assert.True(t, z3.Fits.Yes())
	assert.Nil(t, z3.FitsWith)
	assert.Equal(t, z3.PerDevice.TotalBytes, a.FitsWith.PerDeviceBytes)
	assert.Contains(t, strings.Join(a.Explanation, "\n"), "fits with zero_stage 3 (ZeRO-3/FSDP): "+gib(z3.PerDevice.TotalBytes)+" per device")
	// One device: sharding cannot help, so nothing is suggested but what does.
	one := estimate(t, trainRequest(t, `{"model":{"name":"Llama-3.1-8B"},"training":{"method":"full"}}`, trainGPUs(t, 1, 80<<30)))
	assert.False(t, one.Fits.Yes())
	assert.Nil(t, one.FitsWith)
}

// QLoRA's frozen base may be stored in any precision the planner knows,
// GGUF types included, and is sized by that type's rules: NF4 (int4, the
// default), bitsandbytes int8, or a GGUF q4_k_m.
func TestQLoRABaseQuant(t *testing.T) {
	rtx4090 := trainGPUs(t, 1, 24564<<20)
	get := func(base string) *TrainingAnswer {
		extra := ""
		if base != "" {
			extra = `,"base_quant":"` + base + `"`
		}
		return estimate(t, trainRequest(t, `{"model":{"name":"Llama-3.1-8B"},"training":{"method":"qlora"`+extra+`}}`, rtx4090))
	}
	nf4 := get("")
	assert.Equal(t, "nf4", nf4.BaseQuant, "named as asked (the default), sized as int4")
	assert.Equal(t, "int4", get("int4").BaseQuant)
	assert.Equal(t, nf4.PerDevice.WeightsBytes, get("nf4").PerDevice.WeightsBytes)
	q4km := get("Q4_K_M")
	assert.Equal(t, "q4_k_m", q4km.BaseQuant)
	m := model.Lookup("Llama-3.1-8B")
	adapters := nf4.PerDevice.WeightsBytes - quant.WeightsBytes(m, quant.INT4)
	assert.Equal(t, quant.WeightsBytes(m, "q4_k_m")+adapters, q4km.PerDevice.WeightsBytes)
	assert.Greater(t, get("int8").PerDevice.WeightsBytes, q4km.PerDevice.WeightsBytes)

	for _, bad := range []string{`{"method":"qlora","base_quant":"q9_z"}`, `{"method":"lora","base_quant":"int4"}`} {
		_, err := decode([]byte(`{"model":{"name":"Llama-3.1-8B"},"training":` + bad + `}`))
		if err == nil {
			_, err = EstimateTraining(trainRequest(t, `{"model":{"name":"Llama-3.1-8B"},"training":`+bad+`}`, rtx4090))
		}
		assert.Error(t, err, bad)
	}
}

// TestLoRAWidthsUnderMLA: LoRA's q, k, v and o adapters take each
// projection's own width, under multi-head latent attention the config's
// MLA widths rather than hidden / heads (DeepSeek-V3: 7168 / 128 = 56).
// DeepSeek-V3 (config.json of deepseek-ai/DeepSeek-V3: 61 layers, hidden
// 7168, 128 heads and 128 key/value heads, qk_nope 128 + qk_rope 64 = 192,
// v_head_dim 128), r = 16: q 7168 in, 128 x 192 out; k the same; v
// 128 x 128 out; o 128 x 128 in, 7168 out. Llama-3.1-8B keeps
// 16 x (4096 + 4096 + 4096 + 1024) x 32 on q and v (TestTrainingMethods).
func TestLoRAWidthsUnderMLA(t *testing.T) {
	v3 := model.Lookup("DeepSeek-V3")
	require.NotNil(t, v3)
	const h, qk, v = 7168, 128 * 192, 128 * 128
	assert.Equal(t, int64(16*(h+qk)*61), loraParams(v3, 16, []string{"q"}))
	assert.Equal(t, int64(16*(h+qk)*61), loraParams(v3, 16, []string{"k"}))
	assert.Equal(t, int64(16*(h+v)*61), loraParams(v3, 16, []string{"v"}))
	assert.Equal(t, int64(16*(v+h)*61), loraParams(v3, 16, []string{"o"}))
	llama := model.Lookup("Llama-3.1-8B")
	require.NotNil(t, llama)
	assert.Equal(t, int64(16*(8192+5120)*32), loraParams(llama, 16, []string{"q", "v"}))
}

// When nothing the run can turn on makes it fit its devices, the
// explanation says how many devices of the same memory it would take with
// gradient checkpointing and ZeRO stage 3: full fine-tuning of a 70B model
// holds about 16 bytes per parameter of weights, gradients and optimizer
// state (ZeRO paper §3.1), about 1.1 TB, more than 8 x 80 GiB.
func TestTrainingSaysHowManyDevicesWouldDo(t *testing.T) {
	h100x8 := trainGPUs(t, 8, 80<<30)
	a := estimate(t, trainRequest(t, `{"model":{"name":"Llama-3.1-70B"},"training":{"method":"full"}}`, h100x8))
	require.False(t, a.Fits.Yes())
	require.Nil(t, a.FitsWith)
	line := ""
	for _, l := range a.Explanation {
		if strings.Contains(l, "such devices") {
			line = l
		}
	}
	require.NotEmpty(t, line, "%q", a.Explanation)
	var n int
	_, err := fmt.Sscanf(line[strings.Index(line, "on ")+3:], "%d", &n)
	require.NoError(t, err, line)
	assert.Greater(t, n, 8, line)
	big := estimate(t, trainRequest(t, fmt.Sprintf(`{"model":{"name":"Llama-3.1-70B"},"training":{"method":"full","zero_stage":3,"gradient_checkpointing":true,"num_devices":%d}}`, n), trainGPUs(t, n, 80<<30)))
	assert.True(t, big.Fits.Yes(), "%d devices: %s", n, line)
	small := estimate(t, trainRequest(t, fmt.Sprintf(`{"model":{"name":"Llama-3.1-70B"},"training":{"method":"full","zero_stage":3,"gradient_checkpointing":true,"num_devices":%d}}`, n-1), trainGPUs(t, n-1, 80<<30)))
	assert.False(t, small.Fits.Yes(), "%d devices are not enough", n-1)
}

// TestTrainOnHostRAMExplanationReadsAsTwoStatements: a GPU without bf16 (a
// V100, compute capability 7.0) beside host RAM: the explanation says the
// GPU is skipped and the estimate is on host RAM as two statements, not run
// together ("skipped no accelerator runs bf16").
func TestTrainOnHostRAMExplanationReadsAsTwoStatements(t *testing.T) {
	r := trainGPUs(t, 0, 0)
	r.Devices = append(r.Devices, detectedCUDA("Tesla V100-PCIE-32GB", 32<<30, "7.0"))
	a := estimate(t, trainRequest(t, `{"model":{"name":"Llama-3.2-1B"},"training":{"method":"lora"}}`, r))
	require.True(t, a.Fits.Yes(), strings.Join(a.Explanation, "\n"))
	assert.Contains(t, strings.Join(a.Explanation, "\n"), "cuda_gpu (nvidia) devices do not run bf16: skipped; no accelerator runs bf16: estimating on host RAM")
}

// A companion model the method does not use is refused, as base_quant
// outside qlora is: "--method lora --teacher 70b --reward 7b" was answered
// as plain LoRA, the two models dropped without a word.
func TestTrainingCompanionOutsideItsMethodIsRefused(t *testing.T) {
	h200 := trainGPUs(t, 1, 143771<<20)
	for _, c := range []struct{ training, want string }{
		{`{"method":"lora","teacher":"70b"}`, `request: training.teacher applies to "method": "distillation", not lora`},
		{`{"method":"distillation","reward":"7b"}`, `request: training.reward applies to "method": "rlhf", not distillation`},
		{`{"method":"full","critic":"7b"}`, `request: training.critic applies to "method": "rlhf", not full`},
		{`{"method":"qlora","reference":"8b"}`, `request: training.reference applies to "method": "dpo" or "method": "rlhf", not qlora`},
	} {
		_, err := EstimateTraining(trainRequest(t, `{"model":{"name":"Llama-3.1-8B"},"training":`+c.training+`}`, h200))
		require.Error(t, err, c.training)
		assert.Equal(t, errs.InvalidArgument, errs.CodeOf(err), c.training)
		assert.Equal(t, c.want, errs.MessageOf(err), c.training)
	}
	for _, ok := range []string{`{"method":"distillation","teacher":"70b"}`, `{"method":"dpo","reference":"8b"}`,
		`{"method":"rlhf","reference":"8b","reward":"7b","critic":"7b"}`, `{"method":"ppo","reward":"7b"}`} {
		_, err := EstimateTraining(trainRequest(t, `{"model":{"name":"Llama-3.1-8B"},"training":`+ok+`}`, h200))
		assert.NoError(t, err, ok)
	}
}

// A training sequence longer than the model's trained context is estimated
// (long-context fine-tuning is done) with a warning that says so and what
// it takes: Llama-3.1-8B's config gives 131072 positions, so 262144 needs
// its RoPE scaling extended 2x; Laguna-S-2.1's config scales with YaRN,
// factor 32 over 8192 positions (262144), so 524288 needs factor 64. At or
// within the context no such warning. Before, the estimate said nothing.
func TestTrainingSeqLenPastTrainedContextWarns(t *testing.T) {
	r := trainGPUs(t, 8, 80<<30)
	a := estimate(t, trainRequest(t, `{"model":{"name":"Llama-3.1-8B"},"training":{"method":"lora","seq_len":262144}}`, r))
	assert.Equal(t, 262144, a.SeqLen)
	assert.Contains(t, a.Warnings, "seq_len 262144 exceeds the model's trained context (131072 positions in its config): the model uses positions past it only with its RoPE scaling extended 2x (rope_scaling: YaRN, linear, or a larger factor of the scaling it has), as long-context fine-tuning sets it; the memory estimate does not depend on it")

	b := estimate(t, trainRequest(t, `{"model":{"name":"Laguna-S-2.1"},"training":{"method":"qlora","seq_len":524288}}`, r))
	assert.Contains(t, strings.Join(b.Warnings, "\n"), "seq_len 524288 exceeds the model's trained context (262144 positions in its config): the model uses positions past it only with its RoPE scaling extended 2x (rope_scaling: the config's yarn factor 32 to 64, or YaRN)")

	c := estimate(t, trainRequest(t, `{"model":{"name":"Llama-3.1-8B"},"training":{"method":"lora","seq_len":131072}}`, r))
	assert.NotContains(t, strings.Join(c.Warnings, "\n"), "trained context")
	assert.Equal(t, a.PerDevice.WeightsBytes, c.PerDevice.WeightsBytes, "the estimate is made the same way")
}

// TestTrainingDevicesPastSuggestion checks the counts docs/accuracy.md
// ("Training") gives for setups past maxDevicesSuggested: full and LoRA
// fine-tuning of Llama-3.1-8B at its defaults on the 8 GB laptop RTX 4060
// of the slimbook-hero-rtx4060-igpu fixture (8,000,000,000 bytes budgeted,
// the answer's memory_available_bytes) would take that many devices with
// gradient checkpointing and ZeRO-3, devicesThatWould's setting searched
// past its bound (docs audit of session 16: the figures were unchecked).
func TestTrainingDevicesPastSuggestion(t *testing.T) {
	const budget = 8_000_000_000
	fewest := func(method string) int {
		req := trainRequest(t, `{"model":{"name":"Llama-3.1-8B"},"training":{"method":"`+method+`"}}`, trainGPUs(t, 1, 8<<30))
		s, err := validateTraining(*req.Training, planningOf(t, req))
		require.NoError(t, err)
		k, _ := devicesThatWould(req.Model, s, budget)
		require.Zero(t, k, "%s fits on %d devices: the doc's example is no longer past the bound", method, k)
		s.checkpointing, s.ZeROStage = true, 3
		for k := maxDevicesSuggested + 1; k <= 10000; k++ {
			if trainingMemory(req.Model, s, k).TotalBytes <= budget {
				return k
			}
		}
		return 0
	}
	doc, err := os.ReadFile("../../docs/accuracy.md")
	require.NoError(t, err)
	quote := fmt.Sprintf("would take %d or %d of them", fewest("full"), fewest("lora"))
	assert.Contains(t, strings.Join(strings.Fields(string(doc)), " "), quote)
}
