package api

import (
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	json "github.com/goccy/go-json"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fullPlan plans request on a fixture machine and returns the whole answer.
func fullPlan(t *testing.T, machine, request string) map[string]any {
	t.Helper()
	detect := fixtureDetect(t, machine)
	req := request[:len(request)-1] + `,"detect":` + detect + `}`
	out := PlanSharding(context.Background(), []byte(req), NoEnv)
	var a map[string]any
	require.NoError(t, json.Unmarshal(out, &a), "%s", out)
	require.NotContains(t, a, "error", "%s", out)
	return a
}

func argsOf(a map[string]any, engine string) []string {
	var out []string
	ea, _ := a["engine_args"].(map[string]any)
	l, _ := ea[engine].([]any)
	for _, s := range l {
		out = append(out, s.(string))
	}
	return out
}

func loadOf(a map[string]any, engine string) map[string]any {
	l, _ := a["load"].(map[string]any)
	m, _ := l[engine].(map[string]any)
	return m
}

func envOf(a map[string]any, engine string) map[string]any {
	l, _ := a["engine_env"].(map[string]any)
	m, _ := l[engine].(map[string]any)
	return m
}

func flagValue(args []string, flag string) string {
	for i, s := range args {
		if s == flag && i+1 < len(args) {
			return args[i+1]
		}
	}
	return ""
}

func explanation(a map[string]any) string {
	var out []string
	for _, s := range a["explanation"].([]any) {
		out = append(out, s.(string))
	}
	return strings.Join(out, "\n")
}

// gpt-oss-120b is published in MXFP4 (experts) + BF16 (the rest), 60.8 GiB
// (model card, arXiv 2508.10925): auto plans that checkpoint on one H100,
// not a 217.6 GiB bf16 upcast over four, and names the repository to load.
func TestPlanNativeMXFP4Checkpoint(t *testing.T) {
	a := fullPlan(t, "dgx-h100", `{"model":{"name":"gpt-oss-120b"},"placement":"fewest"}`)
	assert.Equal(t, true, a["fits"])
	assert.Equal(t, "mxfp4", a["quant"])
	assert.Equal(t, "none", a["strategy"])
	require.Len(t, a["shards"], 1)
	w := a["memory"].(map[string]any)["weights_bytes"].(float64) / (1 << 30)
	assert.InDelta(t, 60.8, w, 1.0)
	levels := a["levels"].([]any)
	assert.Equal(t, "mxfp4", levels[0].(map[string]any)["quant"], "no bf16 upcast is tried first")
	v := loadOf(a, "vllm")
	assert.Equal(t, "openai/gpt-oss-120b", v["repo"])
	assert.Equal(t, "mxfp4", v["quant"])
	args := argsOf(a, "vllm")
	assert.NotContains(t, args, "--dtype", "vLLM reads the MXFP4 format from the checkpoint")
	assert.NotContains(t, args, "--quantization")
	assert.Equal(t, map[string]any{"CUDA_VISIBLE_DEVICES": "0", "CUDA_DEVICE_ORDER": "PCI_BUS_ID"}, envOf(a, "vllm"))
	assert.Nil(t, loadOf(a, "llama.cpp"), "the plan was made on vLLM's budget: no llama.cpp load")
	assert.Contains(t, explanation(a), "openai/gpt-oss-120b")

	// Planned for llama.cpp, the same model loads the published MXFP4 GGUF.
	a = fullPlan(t, "dgx-h100", `{"model":{"name":"gpt-oss-120b"},"engine":"llama.cpp"}`)
	assert.Equal(t, "mxfp4", a["quant"])
	l := loadOf(a, "llama.cpp")
	assert.Equal(t, "MXFP4_MOE", l["gguf_type"])
	assert.Equal(t, "ggml-org/gpt-oss-120b-GGUF", l["repo"])
}

// FP8 checkpoints (DeepSeek-V3, Meta's Llama-3.1-405B-Instruct-FP8) are
// planned in FP8 under auto, loading the FP8 repository; a requested fp8
// picks the FP8 checkpoint of a BF16 model.
func TestPlanNativeFP8Checkpoints(t *testing.T) {
	a := fullPlan(t, "dgx-h100", `{"model":{"name":"meta-llama/Llama-3.1-405B-Instruct-FP8"}}`)
	assert.Equal(t, "fp8", a["quant"])
	assert.Equal(t, true, a["fits"])
	assert.Equal(t, "meta-llama/Llama-3.1-405B-Instruct-FP8", loadOf(a, "vllm")["repo"])
	assert.NotContains(t, argsOf(a, "vllm"), "--quantization", "the checkpoint declares fp8")
	assert.Equal(t, "fp8", a["levels"].([]any)[0].(map[string]any)["quant"])

	a = fullPlan(t, "dgx-h100", `{"model":{"name":"DeepSeek-V3"}}`)
	assert.Equal(t, "fp8", a["levels"].([]any)[0].(map[string]any)["quant"], "DeepSeek-V3 ships FP8: no bf16 row")

	a = fullPlan(t, "dgx-h100", `{"model":{"name":"Llama-3.1-405B"},"quant":"fp8"}`)
	assert.Equal(t, "meta-llama/Llama-3.1-405B-FP8", loadOf(a, "vllm")["repo"])

	// Llama-3.1-405B is published in BF16: auto keeps bf16 first.
	a = fullPlan(t, "dgx-h100", `{"model":{"name":"Llama-3.1-405B"}}`)
	assert.Equal(t, "bf16", a["levels"].([]any)[0].(map[string]any)["quant"])
}

// A requested level with no published checkpoint says so: vLLM cannot
// quantize to int4 on load.
func TestPlanSaysWhenNoCheckpointIsPublished(t *testing.T) {
	// Issue 21 item 5: a catalog model with no published checkpoint at the
	// plan's level gets the checkpoint it needs (load.needs, no repo), not
	// a command that would load other weights or a placeholder.
	a := fullPlan(t, "dgx-h100", `{"model":{"name":"Phi-4"},"quant":"int4","engine":"vllm"}`)
	ld := loadOf(a, "vllm")
	require.NotNil(t, ld)
	assert.Nil(t, ld["repo"])
	assert.Equal(t, "a checkpoint of Phi-4 stored at int4 (AWQ, GPTQ or compressed-tensors); the catalog knows none published", ld["needs"])
	assert.Contains(t, explanation(a), "no int4 checkpoint of Phi-4")
	a = fullPlan(t, "dgx-h100", `{"model":{"name":"Phi-4"},"quant":"int4","engine":"sglang"}`)
	assert.Contains(t, loadOf(a, "sglang")["needs"], "a checkpoint of Phi-4 stored at int4")

	a = fullPlan(t, "dgx-h100", `{"model":{"name":"Qwen3-32B"},"quant":"int4","engine":"vllm"}`)
	assert.Equal(t, "Qwen/Qwen3-32B-AWQ", loadOf(a, "vllm")["repo"])
}

// --main-gpu and CUDA_VISIBLE_DEVICES in CUDA's numbering: the plan's GPUs
// are listed by their PCI-bus-order index with CUDA_DEVICE_ORDER=PCI_BUS_ID
// (CUDA's default order is "fastest first" by an unspecified heuristic), and
// the process numbers the visible devices from 0, so --main-gpu is 0.
// On two-nvidia (2x L40S) an 8B model pinned to cuda:1, second on the PCI
// bus, used to say --main-gpu 1 with no CUDA_VISIBLE_DEVICES: CUDA's
// fastest-first order need not follow the bus.
func TestPlanCUDADeviceOrder(t *testing.T) {
	a := fullPlan(t, "two-nvidia", `{"model":{"name":"Llama-3.1-8B"},"quant":"q4_k_m","devices":["cuda:1"],"engine":"llama.cpp"}`)
	require.Equal(t, true, a["fits"])
	assert.Equal(t, map[string]any{"CUDA_VISIBLE_DEVICES": "1", "CUDA_DEVICE_ORDER": "PCI_BUS_ID"}, envOf(a, "llama.cpp"))
	assert.Equal(t, "0", flagValue(argsOf(a, "llama.cpp"), "--main-gpu"))

	// A layer split over both lists both, in the order of --tensor-split.
	a = fullPlan(t, "two-nvidia", `{"model":{"name":"Llama-3.3-70B-Instruct"},"quant":"q6_k","engine":"llama.cpp"}`)
	require.Equal(t, true, a["fits"])
	var order []string
	for _, s := range a["shards"].([]any) {
		order = append(order, strings.TrimPrefix(s.(map[string]any)["device_id"].(string), "cuda:"))
	}
	assert.Equal(t, strings.Join(order, ","), envOf(a, "llama.cpp")["CUDA_VISIBLE_DEVICES"])
	assert.Len(t, strings.Split(flagValue(argsOf(a, "llama.cpp"), "--tensor-split"), ","), 2)
}

// llama.cpp loads the published GGUF of the planned type: Llama-3.3-70B
// int4 is bartowski's Q4_K_M file, sized as that file (42.5 GB).
func TestPlanLlamaCPPLoadsThePublishedGGUF(t *testing.T) {
	a := fullPlan(t, "dgx-h100", `{"model":{"name":"Llama-3.3-70B-Instruct"},"quant":"int4","engine":"llama.cpp"}`)
	require.Equal(t, true, a["fits"])
	assert.Equal(t, "q4_k_m", a["quant"])
	l := loadOf(a, "llama.cpp")
	assert.Equal(t, "bartowski/Llama-3.3-70B-Instruct-GGUF", l["repo"])
	assert.Equal(t, "Llama-3.3-70B-Instruct-Q4_K_M.gguf", l["file"])
	assert.Equal(t, "Q4_K_M", l["gguf_type"])
	// The token embedding stays in host memory (budget.host_bytes).
	w := a["memory"].(map[string]any)["weights_bytes"].(float64) + a["budget"].(map[string]any)["host_bytes"].(float64)
	assert.InEpsilon(t, 42.5e9, w, 0.01)
	assert.Contains(t, explanation(a), "int4 for llama.cpp means the GGUF type Q4_K_M")
}

// suggest's candidate list for llama.cpp is the GGUF types int8 and int4
// mean there; for a model published in MXFP4 it starts at mxfp4.
func TestSuggestTargetsGGUFTypesForLlamaCPP(t *testing.T) {
	dir, err := filepath.Abs(filepath.Join("..", "..", "testdata", "machines", "two-nvidia"))
	require.NoError(t, err)
	detect := fmt.Sprintf(`{"sysroot":%q,"path":%q,"env":{},"cache_ttl_ms":0}`, filepath.Join(dir, "root"), filepath.Join(dir, "bin"))
	var s struct {
		Quant  string `json:"quant"`
		Levels []struct {
			Quant string `json:"quant"`
		} `json:"levels"`
	}
	out := SuggestQuant(context.Background(), []byte(`{"model":{"name":"Llama-3.3-70B-Instruct"},"engine":"llama.cpp","detect":`+detect+`}`), NoEnv)
	require.NoError(t, json.Unmarshal(out, &s), "%s", out)
	var got []string
	for _, l := range s.Levels {
		got = append(got, l.Quant)
	}
	// Q2_K is larger than IQ2_M, a better type, on this shape: not planned.
	assert.Equal(t, []string{"bf16", "fp16", "q8_0", "q6_k", "q5_k_m", "q4_k_m", "iq4_xs", "q3_k_m",
		"iq3_m", "iq3_s", "iq3_xs", "iq3_xxs", "iq2_m", "iq2_s", "iq2_xs", "iq2_xxs", "iq1_m", "iq1_s"}, got, "the GGUF ladder (issue 27 item 4)")

	out = SuggestQuant(context.Background(), []byte(`{"model":{"name":"gpt-oss-20b"},"detect":`+detect+`}`), NoEnv)
	require.NoError(t, json.Unmarshal(out, &s), "%s", out)
	assert.Equal(t, "mxfp4", s.Quant)
}

// ROCm plans name their GPUs by UUID in ROCR_VISIBLE_DEVICES: the ROCm
// runtime numbers GPUs in KFD topology order, not the registry's bus order,
// and has no CUDA_DEVICE_ORDER. On mi300x-8, an 8B model pinned to rocm:3
// used to say --main-gpu 3 with no environment; now the process sees only
// that GPU, as its device 0. The UUIDs are the fixture's sysfs unique_id.
func TestPlanROCmVisibleDevices(t *testing.T) {
	a := fullPlan(t, "mi300x-8", `{"model":{"name":"Llama-3.1-8B"},"quant":"q4_k_m","devices":["rocm:3"],"engine":"llama.cpp"}`)
	require.Equal(t, true, a["fits"])
	det := detectFixtureDevices(t, "mi300x-8")
	uuid := det["rocm:3"]["uuid"].(string)
	require.NotEmpty(t, uuid)
	assert.Equal(t, map[string]any{"ROCR_VISIBLE_DEVICES": "GPU-" + uuid}, envOf(a, "llama.cpp"))
	assert.Equal(t, "0", flagValue(argsOf(a, "llama.cpp"), "--main-gpu"))

	// A vLLM tensor-parallel plan lists each of its GPUs once, in rank order.
	a = fullPlan(t, "mi300x-8", `{"model":{"name":"Llama-3.1-405B"},"quant":"bf16"}`)
	require.Equal(t, true, a["fits"])
	var want []string
	for _, s := range a["shards"].([]any) {
		id := s.(map[string]any)["device_id"].(string)
		want = append(want, "GPU-"+det[id]["uuid"].(string))
	}
	require.NotEmpty(t, want)
	assert.Equal(t, strings.Join(want, ","), envOf(a, "vllm")["ROCR_VISIBLE_DEVICES"])
}

// detectFixtureDevices detects a fixture machine and returns its devices by id.
func detectFixtureDevices(t *testing.T, machine string) map[string]map[string]any {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("..", "..", "testdata", "machines", machine))
	require.NoError(t, err)
	req := fmt.Sprintf(`{"sysroot":%q,"path":%q,"env":{},"cache_ttl_ms":0}`, filepath.Join(dir, "root"), filepath.Join(dir, "bin"))
	var reg struct {
		Devices []map[string]any `json:"devices"`
	}
	out := Detect(context.Background(), []byte(req), NoEnv)
	require.NoError(t, json.Unmarshal(out, &reg), "%s", out)
	m := map[string]map[string]any{}
	for _, d := range reg.Devices {
		m[d["id"].(string)] = d
	}
	return m
}

// A MIG plan selects its slice: CUDA_VISIBLE_DEVICES takes the MIG
// instance's UUID (CUDA C++ Programming Guide, "CUDA Environment Variables",
// https://docs.nvidia.com/cuda/cuda-programming-guide/05-appendices/environment-variables.html),
// since the slice has no plain index. The plan used to set no environment
// at all, so vLLM started on whatever the process saw (issue 21 item 5).
func TestPlanMIGSetsItsSlice(t *testing.T) {
	a := fullPlan(t, "a100-80gb-pcie-mig-2x3g", `{"model":{"name":"Llama-3.1-8B"},"engine":"vllm"}`)
	require.Equal(t, true, a["fits"])
	shards := a["shards"].([]any)
	require.Len(t, shards, 1)
	id := shards[0].(map[string]any)["device_id"].(string)
	det := detectFixtureDevices(t, "a100-80gb-pcie-mig-2x3g")
	mig := det[id]["mig"].(map[string]any)["instance"].(string)
	require.True(t, strings.HasPrefix(mig, "MIG-"), mig)
	assert.Equal(t, map[string]any{"CUDA_VISIBLE_DEVICES": mig}, envOf(a, "vllm"))
}

// localBF16Folder is a model folder as a user has it: the Hub's config.json
// of ibm-granite/granite-3.1-1b-a400m-instruct at its bf16 commit
// (testdata/hub/SOURCES.md) and one safetensors file whose header stores
// the weights as BF16 (header only; planning never reads tensor data).
func localBF16Folder(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	cfg, err := os.ReadFile(filepath.Join("..", "..", "testdata", "hub", "ibm-granite--granite-3.1-1b-a400m-instruct", "config.bf16.json"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "config.json"), cfg, 0o600))
	hdr, err := json.Marshal(map[string]any{"w": map[string]any{"dtype": "BF16", "shape": []int64{1334464512}, "data_offsets": []int64{0, 2668929024}}})
	require.NoError(t, err)
	st := binary.LittleEndian.AppendUint64(nil, uint64(len(hdr)))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "model.safetensors"), append(st, hdr...), 0o600))
	return dir
}

// A bf16 folder planned at int4 cannot be served as it is: vllm serve of the
// folder would load 16-bit weights into an int4 budget (issue 21 item 5).
// The answer's load says which checkpoint is needed; at its own level, and
// at fp8 (quantized on load), the folder is what vLLM serves.
func TestPlanLocalFolderAtAnotherLevelNeedsACheckpoint(t *testing.T) {
	dir := localBF16Folder(t)
	a := fullPlan(t, "two-nvidia", fmt.Sprintf(`{"model":{"path":%q},"quant":"int4","engine":"vllm"}`, dir))
	require.Equal(t, true, a["fits"])
	ld := loadOf(a, "vllm")
	require.NotNil(t, ld)
	assert.Equal(t, "int4", ld["quant"])
	assert.Nil(t, ld["repo"])
	assert.Contains(t, ld["needs"], "a checkpoint of this model stored at int4 (AWQ, GPTQ or compressed-tensors)")
	assert.Contains(t, ld["needs"], "stored as bf16")
	assert.Contains(t, explanation(a), "vLLM: needs a checkpoint of this model stored at int4")

	a = fullPlan(t, "two-nvidia", fmt.Sprintf(`{"model":{"path":%q},"engine":"vllm"}`, dir))
	assert.Equal(t, "bf16", a["quant"], "auto plans the folder's own level")
	for _, q := range []string{"auto", "bf16", "fp16", "fp8"} {
		a = fullPlan(t, "two-nvidia", fmt.Sprintf(`{"model":{"path":%q},"quant":%q,"engine":"vllm"}`, dir, q))
		require.Equal(t, true, a["fits"], q)
		assert.NotContains(t, explanation(a), "needs a checkpoint", q)
		assert.Nil(t, loadOf(a, "vllm")["needs"], q)
	}
}

// A catalog model whose release is the Hugging Face repository of its own
// name is served from that repository at the format it is stored in:
// moonshotai/Kimi-K2-Thinking is the release itself, stored as INT4
// (compressed-tensors, "Native INT4 Quantization" in vLLM's recipe,
// https://github.com/vllm-project/recipes/blob/main/moonshotai/Kimi-K2-Think.md,
// whose command is `vllm serve moonshotai/Kimi-K2-Thinking`). The plan
// used to give `vllm serve MODEL` (issue 21, after item 5). Another level
// has no published checkpoint: the plan says which one it needs.
func TestPlanServesTheReleaseRepositoryOfACatalogModel(t *testing.T) {
	a := fullPlan(t, "mi300x-8", `{"model":{"name":"Kimi-K2-Thinking"},"engine":"vllm","context_length":8192}`)
	require.Equal(t, true, a["fits"], "%v", a["explanation"])
	assert.Equal(t, "int4", a["quant"], "auto plans the format the release is stored in first")
	ld := loadOf(a, "vllm")
	require.NotNil(t, ld)
	assert.Equal(t, "moonshotai/Kimi-K2-Thinking", ld["repo"])
	assert.Equal(t, "compressed-tensors", ld["method"])
	assert.Nil(t, ld["needs"])
	assert.NotContains(t, explanation(a), "vllm serve MODEL")

	a = fullPlan(t, "mi300x-8", `{"model":{"name":"moonshotai/Kimi-K2-Thinking"},"engine":"vllm","quant":"fp8","context_length":8192}`)
	ld = loadOf(a, "vllm")
	require.NotNil(t, ld)
	assert.Nil(t, ld["repo"], "no FP8 or 16-bit checkpoint of Kimi-K2-Thinking is published")
	assert.Contains(t, ld["needs"], "a checkpoint of Kimi-K2-Thinking stored at fp8")
}
