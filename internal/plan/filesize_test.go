package plan

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/quant"
	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// twoH200 is two H200s of 141 GiB each.
func twoH200(t *testing.T) *registry.Registry {
	var devs []registry.Device
	for i := range 2 {
		d := gpu(registry.KindCUDA, i, "NVIDIA H200", 141<<30, "9.0")
		d.Vendor = "nvidia"
		devs = append(devs, d)
	}
	return reg(t, devs)
}

// miniMaxQ6KFile is the Q6_K file of bartowski/MiniMaxAI_MiniMax-M2.7-GGUF
// as the catalog lists it (197.05 GB, made by bartowski's quant_types
// rules, 9.3 GB more than mainline llama.cpp's Q6_K mix of this shape);
// fileMetadataAllowance is what such a file holds that is no tensor (its
// tokenizer metadata: a few MB).
const (
	miniMaxQ6KFile        = 197_050_000_000
	fileMetadataAllowance = 50_000_000
)

// A plan that loads a GGUF file known to be bigger than the weights derived
// from mainline llama.cpp's mix (the checkpoint's size_mix) charges the
// file's tensors: MiniMax-M2.7 at q6_k under llama.cpp loads bartowski's
// 197.05 GB file, not the 187.75 GB derived, and says so; the levels table's
// row of q6_k, suggest and the memory of the plan all carry it.
func TestPlanLoadingABiggerFileChargesTheFile(t *testing.T) {
	body := `{"model":{"name":"MiniMax-M2.7"},"engine":"llama.cpp","quant":"q6_k","context_length":4096}`
	req := request(t, body, twoH200(t))
	a := shard(t, req)
	require.True(t, a.Fits.Yes(), a.Explanation)
	require.Equal(t, "bartowski/MiniMaxAI_MiniMax-M2.7-GGUF", a.Load[engineLlamaCPP].Repo)
	// llama.cpp keeps token_embd in host memory (its budget's
	// HostEmbeddings), so the devices hold the file less that tensor
	// (Q6_K in a Q6_K mix) and the metadata.
	m := planningOf(t, req).Model
	embd := int64(float64(m.Vocab) * float64(m.Hidden) * quant.Level("q6_k").BitsPerWeight() / 8)
	onDevices := int64(miniMaxQ6KFile) - embd
	assert.GreaterOrEqual(t, a.Memory.WeightsBytes, onDevices-fileMetadataAllowance, "the plan charges the file's tensors")
	assert.LessOrEqual(t, a.Memory.WeightsBytes, onDevices, "no more than the file")
	assert.NotEmpty(t, explanationWith(a.Explanation, "weights: bartowski/MiniMaxAI_MiniMax-M2.7-GGUF:Q6_K is 197.05 GB, 9.3 GB more than mainline llama.cpp's Q6_K mix of this shape: bartowski's quant_types rules; the plan charges the file"), "%q", a.Explanation)
	row := lineOfLevel(a.Levels, "q6_k")
	require.NotNil(t, row)
	assert.GreaterOrEqual(t, row.TotalBytes, onDevices-fileMetadataAllowance+a.Memory.KVCacheBytes, "the levels table's row charges the file too")

	s, err := SuggestQuant(request(t, body, twoH200(t)))
	require.NoError(t, err)
	assert.Equal(t, a.Memory.WeightsBytes, s.Memory.WeightsBytes, "suggest charges the file")
	assert.NotEmpty(t, explanationWith(s.Explanation, "weights: bartowski/MiniMaxAI_MiniMax-M2.7-GGUF:Q6_K is 197.05 GB"), "%q", s.Explanation)
}

// A level whose published file is made by mainline llama.cpp's rules
// (q4_k_m of the same repository, within 1 % of the derived weights)
// charges the derived weights and prints no such line.
func TestPlanLoadingAMainlineFileChargesTheDerivedWeights(t *testing.T) {
	a := shard(t, request(t, `{"model":{"name":"MiniMax-M2.7"},"engine":"llama.cpp","quant":"q4_k_m","context_length":4096}`, twoH200(t)))
	require.True(t, a.Fits.Yes(), a.Explanation)
	assert.Empty(t, explanationWith(a.Explanation, "more than mainline llama.cpp's"), "%q", a.Explanation)
	assert.Less(t, a.Memory.WeightsBytes, int64(140e9))
}

// Laguna-S-2.1's Q4_K_M file (Poolside's own mix, 96 GB by LocalAI's
// gallery) is 26 % larger than mainline llama.cpp's Q4_K_M mix of the
// shape (70.77 GB): the plan that loads it charges the 96 GB, less the
// token embedding llama.cpp keeps in host memory, and names the file.
func TestPlanLoadingLagunaQ4KMChargesPoolsidesFile(t *testing.T) {
	req := request(t, `{"model":{"name":"Laguna-S-2.1"},"engine":"llama.cpp","quant":"q4_k_m","context_length":4096}`, twoH200(t))
	a := shard(t, req)
	require.True(t, a.Fits.Yes(), a.Explanation)
	m := planningOf(t, req).Model
	embd := int64(float64(m.Vocab) * float64(m.Hidden) * 8.5 / 8) // token_embd: Q8_0 at most
	assert.GreaterOrEqual(t, a.Memory.WeightsBytes, int64(96e9)-embd-fileMetadataAllowance)
	assert.NotEmpty(t, explanationWith(a.Explanation, "weights: poolside/Laguna-S-2.1-GGUF laguna-s-2.1-Q4_K_M.gguf is 96.00 GB, 25.2 GB more than mainline llama.cpp's Q4_K_M mix of this shape: Poolside's own mix"), "%q", a.Explanation)
}

// Under llama.cpp's --n-cpu-moe the routed experts of the first N layers
// stay in host RAM: bartowski's MiniMax-M2.7 Q6_K file holds most of its
// 9.3 GB beyond mainline's mix in ffn_down_exps raised to Q8_0 (the
// quant_types branch: use_more_bits tensors), so the host holds those
// layers' experts at the file's types, not mainline's. The plan charged
// the extra to every layer's part on the GPU: here its host shard said
// 49.0 GB where the file's experts of the layers it moved are 51.5 GB.
func TestMoEOffloadChargesTheFilesExpertsToTheHost(t *testing.T) {
	h200 := gpu(registry.KindCUDA, 0, "NVIDIA H200", 141<<30, "9.0")
	h200.Vendor = "nvidia"
	req := request(t, `{"model":{"name":"MiniMax-M2.7"},"engine":"llama.cpp","quant":"q6_k","cpu_offload":true,"context_length":4096}`, reg(t, []registry.Device{h200, host(512 << 30)}))
	a := shard(t, req)
	require.True(t, a.Fits.Yes(), a.Explanation)
	n := atoi(argValue(a.EngineArgs["llama.cpp"], "--n-cpu-moe"))
	require.Positive(t, n, "%v", a.EngineArgs["llama.cpp"])
	require.Len(t, a.Shards, 2)
	m := planningOf(t, req).Model
	mainline, ok := quant.RoutedExpertBytes(m, "q6_k")
	require.True(t, ok)
	// The branch's raise, counted here from its rule: ffn_down_exps of
	// 256 experts x 1536 x 3072 from Q6_K to Q8_0 in use_more_bits layers.
	raise := 256.0 * 1536 * 3072 * (8.5 - 6.5625) / 8
	down := func(i int) float64 {
		if i < 62/8 || i >= 7*62/8 || (i-62/8)%3 == 2 {
			return mainline.ByLayer[i].Down + raise
		}
		return mainline.ByLayer[i].Down
	}
	var onHost float64
	for i := range n {
		onHost += down(i) + mainline.ByLayer[i].Gate + mainline.ByLayer[i].Up
	}
	// --fit's order moves ffn_down of layer n first, then ffn_gate (-ot).
	switch argValue(a.EngineArgs["llama.cpp"], "-ot") {
	case "":
	case `blk\.` + itoa(n) + `\.ffn_down_exps=CPU`:
		onHost += down(n)
	case `blk\.` + itoa(n) + `\.ffn_(gate|down)_exps=CPU`:
		onHost += down(n) + mainline.ByLayer[n].Gate
	default:
		require.Fail(t, "unexpected -ot", "%v", a.EngineArgs["llama.cpp"])
	}
	hostShard := a.Shards[1]
	assert.GreaterOrEqual(t, hostShard.MemoryBytes, int64(onHost), "the host holds the file's experts of layers 0-%d", n-1)
	assert.Less(t, hostShard.MemoryBytes, int64(onHost)+int64(2<<30), "and little beside them (compute buffer, overhead)")
	assert.Equal(t, a.Shards[0].MemoryBytes+hostShard.MemoryBytes, a.Memory.TotalBytes)
}

// A refusal says which file it tried where that file is larger than
// mainline's mix: Laguna-S-2.1's Q4_K_M file (96 GB) on one 80 GB H100
// needs 90.4 GiB, about 25 GB above the type's usual size, and only the
// file line says why (and that a Q4_K_M of mainline's mix is smaller).
// Before, the refusal said "weights 89.2 GiB" and nothing of the file.
func TestRefusalNamesTheLargerFileItTried(t *testing.T) {
	h100 := gpu(registry.KindCUDA, 0, "NVIDIA H100 80GB HBM3", 80<<30, "9.0")
	h100.Vendor = "nvidia"
	a := shard(t, request(t, `{"model":{"name":"Laguna-S-2.1"},"engine":"llama.cpp","quant":"q4_k_m","context_length":4096}`, reg(t, []registry.Device{h100})))
	require.False(t, a.Fits.Yes(), a.Explanation)
	assert.NotEmpty(t, explanationWith(a.Explanation, "weights: poolside/Laguna-S-2.1-GGUF laguna-s-2.1-Q4_K_M.gguf is 96.00 GB, 25.2 GB more than mainline llama.cpp's Q4_K_M mix of this shape: Poolside's own mix: imatrix-quantized routed experts, a Q8_0 signal path; the memory it needs counts the file"), "%q", a.Explanation)
	b := shard(t, request(t, `{"model":{"name":"MiniMax-M2.7"},"engine":"llama.cpp","quant":"q4_k_m","context_length":4096}`, reg(t, []registry.Device{h100})))
	require.False(t, b.Fits.Yes(), b.Explanation)
	assert.Empty(t, explanationWith(b.Explanation, "weights: "), "a file of mainline's mix gets no such line: %q", b.Explanation)
}
