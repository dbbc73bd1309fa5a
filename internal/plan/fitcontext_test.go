package plan

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/engine"
	"github.com/ai-hwaccel/ai-hwaccel/internal/model"
	"github.com/ai-hwaccel/ai-hwaccel/internal/quant"
	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// llamaFitRow is the name of a file of
// internal/calibration/data/llamacpp-cuda-h200-fit: MODEL[-F16]-cardCARD[-cCTX].txt,
// Q4_K_M unless F16 (the data's README).
var llamaFitRow = regexp.MustCompile(`^(Llama-3\.1-8B)(-F16)?-card(\d+)(?:-c(\d+))?\.txt$`)

// llamaFitArgs is the last line of such a file: the -c and -ngl llama.cpp's
// own --fit chose.
var llamaFitArgs = regexp.MustCompile(`-c (\d+) -ngl (-?\d+)`)

// TestLlamaCPPFitReplay plans every row of llama.cpp's own --fit on an
// imitated card (llama-fit-params -fitt MARGIN on a real H200: it placed the
// model within CARD MiB, its CUDA context inside) as a CUDA GPU of CARD MiB
// plus the 1 GiB llama.cpp's default --fit-target keeps free, with host
// memory for offload: with no context asked, the context within 5 % of
// llama.cpp's choice (its "-c 0": the trained context), all layers on the
// GPU; with -c given, -ngl within one layer of llama.cpp's (issue 27).
func TestLlamaCPPFitReplay(t *testing.T) {
	dir := filepath.Join("..", "calibration", "data", "llamacpp-cuda-h200-fit")
	paths, err := filepath.Glob(filepath.Join(dir, "Llama-3.1-8B*card*.txt"))
	require.NoError(t, err)
	require.Len(t, paths, 11)
	var rows []string
	for _, p := range paths {
		name := filepath.Base(p)
		m := llamaFitRow.FindStringSubmatch(name)
		require.NotNil(t, m, name)
		data, err := os.ReadFile(p)
		require.NoError(t, err)
		lines := strings.Split(strings.TrimSpace(string(data)), "\n")
		got := llamaFitArgs.FindStringSubmatch(lines[len(lines)-1])
		require.NotNil(t, got, name)
		theirCtx, _ := strconv.Atoi(got[1])
		theirNGL, _ := strconv.Atoi(got[2])
		card, _ := strconv.ParseInt(m[3], 10, 64)
		q := "q4_k_m"
		if m[2] != "" {
			q = "f16"
		}
		body := fmt.Sprintf(`{"model":{"name":%q},"quant":%q,"engine":"llama.cpp","cpu_offload":true`, m[1], q)
		if m[4] != "" {
			body += `,"context_length":` + m[4]
		}
		d := gpu(registry.KindCUDA, 0, "imitated card", (card+1024)<<20, "9.0")
		a := shard(t, request(t, body+"}", reg(t, []registry.Device{d, host(256 << 30)})))
		require.True(t, a.Fits.Yes(), "%s: %s", name, dump(t, a.Explanation))
		args := a.EngineArgs["llama.cpp"]
		ourNGL, _ := strconv.Atoi(flagAfter(args, "-ngl"))
		ourCtx, _ := strconv.Atoi(flagAfter(args, "-c"))
		if theirNGL < 0 {
			theirNGL = a.Model.Layers + 1 // all layers and the output layer
		}
		if theirCtx == 0 {
			theirCtx = 131072 // -c 0: the trained context, unchanged
		}
		rows = append(rows, fmt.Sprintf("| %s | -c %d -ngl %d | -c %d -ngl %d |", name, theirCtx, theirNGL, ourCtx, ourNGL))
		assert.InDelta(t, theirNGL, ourNGL, 1, "%s: -ngl", name)
		assert.InEpsilon(t, theirCtx, ourCtx, 0.05, "%s: -c", name)
	}
	t.Logf("llama.cpp --fit vs this planner:\n| row | llama.cpp | planned |\n|---|---|---|\n%s", strings.Join(rows, "\n"))
}

// flagAfter is the value following flag in args, "" when absent.
func flagAfter(args []string, flag string) string {
	for i := 0; i+1 < len(args); i++ {
		if args[i] == flag {
			return args[i+1]
		}
	}
	return ""
}

// context_length "auto" asks any engine for the context it would choose
// itself: vLLM on an H100 gets Llama-3.1-8B's whole trained context (it
// fits), the same as with no context_length, and --max-model-len says so.
// For vLLM the context is per sequence (its pool is shared by the batch),
// so four sequences do not divide it as llama.cpp's -c -np does.
func TestContextAutoOnAnyEngine(t *testing.T) {
	r := reg(t, []registry.Device{h100(0)})
	auto := shard(t, request(t, `{"model":{"name":"Llama-3.1-8B"},"quant":"fp16","engine":"vllm","context_length":"auto"}`, r))
	require.True(t, auto.Fits.Yes(), auto.Explanation)
	assert.Equal(t, "131072", flagAfter(auto.EngineArgs["vllm"], "--max-model-len"))
	assert.Contains(t, strings.Join(auto.Explanation, "\n"), "context: 131072 tokens per sequence, chosen: the model's trained context, which fits whole")
	plain := shard(t, request(t, `{"model":{"name":"Llama-3.1-8B"},"quant":"fp16","engine":"vllm"}`, r))
	assert.Equal(t, auto.EngineArgs, plain.EngineArgs, "no context_length plans as \"auto\" for vLLM")
	four := shard(t, request(t, `{"model":{"name":"Llama-3.1-8B"},"quant":"fp16","engine":"vllm","context_length":"auto","batch_size":4}`, r))
	assert.Equal(t, "131072", flagAfter(four.EngineArgs["vllm"], "--max-model-len"))
	// Engine "none" runs the context it is given: 4096 unless "auto".
	none := shard(t, request(t, `{"model":{"name":"Llama-3.1-8B"},"quant":"fp16","engine":"none"}`, r))
	assert.NotContains(t, strings.Join(none.Explanation, "\n"), "context: ")
	noneAuto := shard(t, request(t, `{"model":{"name":"Llama-3.1-8B"},"quant":"fp16","engine":"none","context_length":"auto"}`, r))
	assert.Contains(t, strings.Join(noneAuto.Explanation, "\n"), "context: 131072 tokens per sequence, chosen")
}

// servingContextFlags are the context flags of the engines that serve from
// one paged KV pool.
var servingContextFlags = map[string]string{"vllm": "--max-model-len", "sglang": "--context-length"}

// With no context_length, a vLLM or SGLang plan takes the model's trained
// context reduced to the largest multiple of 256 with which one
// full-length sequence fits the KV pool (what vLLM needs to start, and what
// its --max-model-len auto chooses), and says so; an explicit context
// stands, and still fails when it does not fit (issue 21 item 3).
func TestServingContextChosenWhenNoneAsked(t *testing.T) {
	card := reg(t, []registry.Device{gpu(registry.KindCUDA, 0, "NVIDIA GeForce RTX 4090", 24<<30, "8.9")})
	big := reg(t, []registry.Device{h100(0)})
	for eng, flag := range servingContextFlags {
		t.Run(eng, func(t *testing.T) {
			a := shard(t, request(t, `{"model":{"name":"Llama-3.1-8B"},"quant":"bf16","engine":"`+eng+`"}`, card))
			require.True(t, a.Fits.Yes(), a.Explanation)
			c, err := strconv.Atoi(flagAfter(a.EngineArgs[eng], flag))
			require.NoError(t, err)
			assert.Greater(t, c, 4096)
			assert.Less(t, c, 131072, "the trained context does not fit 24 GiB beside bf16 weights")
			assert.Zero(t, c%256)
			assert.GreaterOrEqual(t, a.MaxContextLength, c, "the chosen context fits")
			assert.Less(t, a.MaxContextLength, c+256, "and is the largest multiple of 256 that does")
			why := strings.Join(a.Explanation, "\n")
			assert.Contains(t, why, fmt.Sprintf("context: %d tokens per sequence, chosen: the model's trained context (131072), reduced to the largest multiple of 256 with which one full-length sequence fits", c))

			whole := shard(t, request(t, `{"model":{"name":"Llama-3.1-8B"},"quant":"bf16","engine":"`+eng+`"}`, big))
			require.True(t, whole.Fits.Yes(), whole.Explanation)
			assert.Equal(t, "131072", flagAfter(whole.EngineArgs[eng], flag))

			given := shard(t, request(t, `{"model":{"name":"Llama-3.1-8B"},"quant":"bf16","engine":"`+eng+`","context_length":4096}`, card))
			assert.Equal(t, "4096", flagAfter(given.EngineArgs[eng], flag))
			assert.NotContains(t, strings.Join(given.Explanation, "\n"), "context: ")
			tooLong := shard(t, request(t, `{"model":{"name":"Llama-3.1-8B"},"quant":"bf16","engine":"`+eng+`","context_length":131072}`, card))
			assert.False(t, tooLong.Fits.Yes(), "an explicit context is planned as asked")
		})
	}
}

// A chosen context does not make the headline speed the speed at its full
// depth: decode and prefill are stated at a KV depth of 4096 tokens per
// sequence (the same figures as a plan asked for 4096 on the same
// devices), the assumptions say so and give decode at the full depth.
func TestChosenContextSpeedDepth(t *testing.T) {
	r := reg(t, []registry.Device{h100(0)})
	chosen := shard(t, request(t, `{"model":{"name":"Llama-3.1-8B"},"quant":"bf16","engine":"vllm"}`, r))
	at4k := shard(t, request(t, `{"model":{"name":"Llama-3.1-8B"},"quant":"bf16","engine":"vllm","context_length":4096}`, r))
	full := shard(t, request(t, `{"model":{"name":"Llama-3.1-8B"},"quant":"bf16","engine":"vllm","context_length":131072}`, r))
	require.Equal(t, "131072", flagAfter(chosen.EngineArgs["vllm"], "--max-model-len"))
	require.NotNil(t, chosen.Throughput)
	assert.Equal(t, at4k.Throughput.DecodeTokensPerS, chosen.Throughput.DecodeTokensPerS)
	assert.Equal(t, at4k.Throughput.PrefillTokensPerS, chosen.Throughput.PrefillTokensPerS)
	assert.Less(t, full.Throughput.DecodeTokensPerS, chosen.Throughput.DecodeTokensPerS, "a 128k cache is slower to read")
	notes := strings.Join(chosen.Throughput.Assumptions, "\n")
	assert.Contains(t, notes, "the KV cache of 4096 tokens x 1 sequence at")
	assert.Contains(t, notes, fmt.Sprintf("speeds are stated at a KV depth of 4096 tokens per sequence, not at the chosen context of 131072: at that full depth decode is %.1f tokens/s", full.Throughput.DecodeTokensPerS))
	// llama.cpp's chosen context is stated the same way.
	ll := shard(t, request(t, `{"model":{"name":"Llama-3.1-8B"},"quant":"q4_k_m","engine":"llama.cpp"}`, r))
	ll4k := shard(t, request(t, `{"model":{"name":"Llama-3.1-8B"},"quant":"q4_k_m","engine":"llama.cpp","context_length":4096}`, r))
	require.Equal(t, "131072", flagAfter(ll.EngineArgs["llama.cpp"], "-c"))
	assert.Equal(t, ll4k.Throughput.DecodeTokensPerS, ll.Throughput.DecodeTokensPerS)
	assert.Contains(t, strings.Join(ll.Throughput.Assumptions, "\n"), "speeds are stated at a KV depth of 4096 tokens per sequence")
}

// A llama.cpp plan with no context_length takes --fit's context and hands
// off the same choice to llama.cpp (--fit on --fit-target --fit-ctx); an
// explicit context_length stands.
func TestLlamaCPPContextLikeFit(t *testing.T) {
	d := gpu(registry.KindCUDA, 0, "GPU", 24<<30, "8.9")
	r := reg(t, []registry.Device{d})
	a := shard(t, request(t, `{"model":{"name":"Llama-3.1-8B"},"quant":"q8_0","engine":"llama.cpp"}`, r))
	require.True(t, a.Fits.Yes(), a.Explanation)
	c, err := strconv.Atoi(flagAfter(a.EngineArgs["llama.cpp"], "-c"))
	require.NoError(t, err)
	assert.Greater(t, c, 4096)
	assert.Less(t, c, 131072, "the whole trained context does not fit 24 GiB at Q8_0")
	assert.Zero(t, c%256)
	assert.Contains(t, strings.Join(a.Explanation, "\n"), "--fit on --fit-target 1024 --fit-ctx 4096")
	given := shard(t, request(t, `{"model":{"name":"Llama-3.1-8B"},"quant":"q8_0","engine":"llama.cpp","context_length":8192}`, r))
	assert.Equal(t, "8192", flagAfter(given.EngineArgs["llama.cpp"], "-c"))
	// Four sequences share llama.cpp's -c: at most the trained context in
	// all, as -c 0 -np 4 gives.
	big := reg(t, []registry.Device{h100(0)})
	four := shard(t, request(t, `{"model":{"name":"Llama-3.1-8B"},"quant":"q8_0","engine":"llama.cpp","batch_size":4}`, big))
	require.True(t, four.Fits.Yes(), four.Explanation)
	assert.Equal(t, "131072", flagAfter(four.EngineArgs["llama.cpp"], "-c"))
	assert.Equal(t, "4", flagAfter(four.EngineArgs["llama.cpp"], "-np"))
}

// Qwen3-32B on a 24 GiB GPU at 32k with a q8_0 cache: Q4_K_M does not fit,
// and llama.cpp's auto walks on to the GGUF types people run there, IQ4_XS
// or Q3_K_M; plan and suggest agree, and the level table shows every rung
// tried (issue 27 item 4).
func TestLlamaCPPAutoWalksTheGGUFLadder(t *testing.T) {
	r := reg(t, []registry.Device{gpu(registry.KindCUDA, 0, "NVIDIA GeForce RTX 4090", 24<<30, "8.9")})
	body := `{"model":{"name":"Qwen3-32B"},"engine":"llama.cpp","context_length":32768,"kv_cache_dtype":"q8_0"}`
	a := shard(t, request(t, body, r))
	require.True(t, a.Fits.Yes(), a.Explanation)
	assert.Contains(t, []string{"iq4_xs", "q3_k_m"}, a.Quant)
	s, err := SuggestQuant(request(t, body, r))
	require.NoError(t, err)
	assert.Equal(t, a.Quant, s.Quant, "plan and suggest agree")
	var tried []string
	for _, row := range a.Levels {
		tried = append(tried, row.Quant)
	}
	assert.Subset(t, tried, []string{"q8_0", "q6_k", "q5_k_m", "q4_k_m", "iq4_xs"})
}

// Llama-3.1-70B on one 24 GiB GPU: no 4-bit or 3-bit K-quant fits, and
// llama.cpp's auto goes on to the 2- and 3-bit i-quants people run a 70B
// there with; plan and suggest agree (issue 27 item 4).
func TestLlamaCPPAutoOffersIQ2For70BOn24GB(t *testing.T) {
	r := reg(t, []registry.Device{gpu(registry.KindCUDA, 0, "NVIDIA GeForce RTX 4090", 24<<30, "8.9")})
	body := `{"model":{"name":"Llama-3.1-70B"},"engine":"llama.cpp"}`
	a := shard(t, request(t, body, r))
	require.True(t, a.Fits.Yes(), a.Explanation)
	assert.Regexp(t, `^iq[23]_`, a.Quant)
	s, err := SuggestQuant(request(t, body, r))
	require.NoError(t, err)
	assert.Equal(t, a.Quant, s.Quant, "plan and suggest agree")
	for _, row := range s.Levels {
		if row.Quant == a.Quant {
			break
		}
		assert.False(t, row.Fits.Yes(), "%s is better than the choice and fits", row.Quant)
	}
	assert.Contains(t, strings.Join(a.Explanation, "\n"), a.Quant+" loses much quality (mean KL divergence")
	t.Logf("chosen %s, -c %s", a.Quant, flagAfter(a.EngineArgs["llama.cpp"], "-c"))
}

// "Does not fit at any precision" for llama.cpp means every rung of the
// GGUF ladder was tried, down to IQ1_S (issue 27 item 4).
func TestLlamaCPPRefusalTriesEveryRung(t *testing.T) {
	r := reg(t, []registry.Device{gpu(registry.KindCUDA, 0, "NVIDIA GeForce RTX 4090", 24<<30, "8.9")})
	s, err := SuggestQuant(request(t, `{"model":{"name":"Llama-3.1-405B"},"engine":"llama.cpp"}`, r))
	require.NoError(t, err)
	require.False(t, s.Fits.Yes())
	var tried []string
	for _, row := range s.Levels {
		tried = append(tried, row.Quant)
	}
	assert.Subset(t, tried, []string{"q8_0", "q4_k_m", "iq4_xs", "q3_k_m", "iq3_xxs", "iq2_m", "iq2_xxs", "iq1_m", "iq1_s"})
	assert.Equal(t, "iq1_s", tried[len(tried)-1])
}

// A draft model (draft_model) and a vision projector (mmproj) are counted
// on the plan's first GPU, and llama.cpp's command loads them: -md/-ngld
// and --mmproj; a projector kept in host memory (--no-mmproj-offload) is
// counted there instead (issue 27 item 5).
func TestLlamaCPPDraftAndProjectorAreCounted(t *testing.T) {
	r := reg(t, []registry.Device{gpu(registry.KindCUDA, 0, "NVIDIA GeForce RTX 4090", 24<<30, "8.9")})
	base := `{"model":{"name":"Qwen3-8B"},"engine":"llama.cpp","quant":"q4_k_m","context_length":8192`
	plain := shard(t, request(t, base+`}`, r))
	require.True(t, plain.Fits.Yes(), plain.Explanation)
	with := shard(t, request(t, base+`,"draft_model":{"name":"Qwen3-0.6B"},"mmproj":{"size_bytes":1000000000}}`, r))
	require.True(t, with.Fits.Yes(), with.Explanation)

	draft := model.Lookup("Qwen3-0.6B")
	require.NotNil(t, draft)
	want := quant.WeightsBytes(draft, "q4_k_m") + quant.KVCacheBytes(draft, 8192, 1, quant.KVOptions{}) + 1e9
	got := with.Shards[0].MemoryBytes - plain.Shards[0].MemoryBytes
	assert.Equal(t, want, got, "draft weights + draft KV + projector on the first GPU")

	// unsloth/Qwen3-0.6B-GGUF publishes the draft's Q4_K_M (catalog.json):
	// -hfd downloads it, as -hf does the main model.
	args := with.EngineArgs["llama.cpp"]
	assert.Equal(t, "unsloth/Qwen3-0.6B-GGUF:Q4_K_M", flagAfter(args, "-hfd"))
	assert.NotContains(t, args, "-md")
	assert.Equal(t, strconv.Itoa(draft.Layers+1), flagAfter(args, "-ngld"))
	assert.Equal(t, "MMPROJ.gguf", flagAfter(args, "--mmproj"))
	assert.NotContains(t, args, "--no-mmproj-offload")

	host := shard(t, request(t, base+`,"mmproj":{"size_bytes":1000000000,"offload":false}}`, r))
	require.True(t, host.Fits.Yes())
	assert.Equal(t, plain.Shards[0].MemoryBytes, host.Shards[0].MemoryBytes, "a projector in host memory adds nothing on the GPU")
	assert.Equal(t, plain.Budget.HostBytes+1e9, host.Budget.HostBytes)
	assert.Contains(t, host.EngineArgs["llama.cpp"], "--no-mmproj-offload")

	// No GGUF of the draft at Q5_0 is known: -md names the file to make,
	// and a note says so.
	q50 := shard(t, request(t, `{"model":{"name":"Qwen3-8B"},"engine":"llama.cpp","quant":"q5_0","context_length":8192,"draft_model":{"name":"Qwen3-0.6B"}}`, r))
	require.True(t, q50.Fits.Yes(), q50.Explanation)
	assert.Equal(t, "Qwen3-0.6B-Q5_0.gguf", flagAfter(q50.EngineArgs["llama.cpp"], "-md"))
	assert.NotContains(t, q50.EngineArgs["llama.cpp"], "-hfd")
	assert.Contains(t, q50.Explanation, "llama.cpp: no published GGUF of the draft model at Q5_0 is known; -md Qwen3-0.6B-Q5_0.gguf stands for one")
}

// A projector's image encoder reserves a compute buffer beside the
// projector's weights (llama.cpp's mtmd warm-up): the plan counts it from
// the encoder the mmproj file describes (Projector.Encoder) or else the
// model's vision_config (medgemma-27b-it: Gemma 3's SigLIP at 896 px), with
// the score matrix when flash attention is off; a text model with a projector
// given by size only adds the size.
func TestLlamaCPPProjectorComputeBuffer(t *testing.T) {
	r := reg(t, []registry.Device{gpu(registry.KindCUDA, 0, "NVIDIA H200", 141<<30, "9.0")})
	added := func(body string, enc *model.VisionEncoder) int64 {
		plain := shard(t, request(t, body+`}`, r))
		req := request(t, body+`,"mmproj":{"size_bytes":800000000}}`, r)
		req.Projector.Encoder = enc
		with := shard(t, req)
		require.True(t, with.Fits.Yes(), with.Explanation)
		return with.Shards[0].MemoryBytes - plain.Shards[0].MemoryBytes
	}
	siglip := &model.VisionEncoder{ImageSize: 896, PatchSize: 14, Hidden: 1152, Intermediate: 4304, Heads: 16, Layers: 27}
	text := `{"model":{"name":"Qwen3-8B"},"engine":"llama.cpp","quant":"q4_k_m","context_length":8192`
	assert.Equal(t, int64(800000000), added(text, nil), "a text model and a projector by size: its size")
	assert.Equal(t, int64(800000000)+quant.ProjectorComputeBytes(siglip, true), added(text, siglip))
	assert.Equal(t, int64(800000000+4096*(4304+3*1152)*4), added(text, siglip), "121.25 MiB with flash attention")

	vlm := `{"model":{"name":"medgemma-27b-it"},"engine":"llama.cpp","quant":"q4_k_m","context_length":8192`
	assert.Equal(t, int64(800000000+4096*(4304+3*1152)*4), added(vlm, nil), "the model's own tower")
	noFA := vlm + `,"flash_attention":false`
	assert.Equal(t, int64(800000000+4096*4096*16*4+6*4096*1152*4), added(noFA, nil), "1132 MiB with the scores")
}

// fitOrderAnswer plans model (at quant q, "" for auto) with llama.cpp and
// cpu_offload, no context asked, on a 24 GiB RTX 3090 and hostGiB of host
// RAM, and returns the answer, its llama.cpp arguments and its context line.
func fitOrderAnswer(t *testing.T, model, q string, hostGiB int64) (*ShardingAnswer, []string, string) {
	t.Helper()
	r := reg(t, []registry.Device{rtx3090(), host(hostGiB << 30)})
	body := `{"model":{"name":"` + model + `"},"engine":"llama.cpp","cpu_offload":true`
	if q != "" {
		body += `,"quant":"` + q + `"`
	}
	a := shard(t, request(t, body+`}`, r))
	require.True(t, a.Fits.Yes(), strings.Join(a.Explanation, "\n"))
	var line string
	for _, l := range a.Explanation {
		if strings.HasPrefix(l, "context: ") {
			require.Empty(t, line, "one context line")
			line = l
		}
	}
	return a, a.EngineArgs["llama.cpp"], line
}

// llama.cpp's --fit (common/fit.cpp, common_params_fit_impl) with no -c
// first reduces the context (step 2) and moves weights to the CPU only
// once the context is at its floor (--fit-ctx, 4096) and the model still
// does not fit: Qwen3-30B-A3B Q8_0 (31.2 GiB with every tensor on the GPU
// at 4096, the token embedding staying in host RAM as llama.cpp keeps its
// input layer: load_tensors in src/llama-model.cpp; the row of the levels
// table and the refusal say the same) on a 24 GiB card keeps -c 4096 and moves experts, and the
// answer says that the floor decided and which steps placed the experts.
func TestFitOrderMoEKeepsTheFloorThenMovesExperts(t *testing.T) {
	a, args, line := fitOrderAnswer(t, "Qwen3-30B-A3B", "q8_0", 64)
	assert.Equal(t, StrategyOffload, a.Strategy)
	assert.Equal(t, "4096", argValue(args, "-c"), "%v", args)
	n := argValue(args, "--n-cpu-moe")
	require.NotEmpty(t, n, "%v", args)
	require.NotEmpty(t, line, strings.Join(a.Explanation, "\n"))
	assert.True(t, strings.HasPrefix(line, "context: 4096 tokens per sequence, llama.cpp --fit's floor (--fit-ctx 4096)"), line)
	assert.Contains(t, line, "trained context (40960 per sequence)")
	assert.Contains(t, line, "step 2")
	assert.Contains(t, line, "needs 31.2 GiB with every tensor on the GPU against 23.1 GiB usable")
	assert.Contains(t, line, "steps 3 and 4")
	assert.Contains(t, line, "--n-cpu-moe "+n)
}

// Q5_K_M of the same model fits the card at the floor: --fit then
// shrinks the context until it fits (step 2) and moves nothing, although
// cpu_offload would allow the trained context with experts on the host.
func TestFitOrderMoEReducesTheContextBeforeMovingExperts(t *testing.T) {
	a, args, line := fitOrderAnswer(t, "Qwen3-30B-A3B", "q5_k_m", 64)
	assert.Equal(t, StrategyNone, a.Strategy)
	assert.Empty(t, argValue(args, "--n-cpu-moe"), "%v", args)
	c, err := strconv.Atoi(argValue(args, "-c"))
	require.NoError(t, err, "%v", args)
	assert.Greater(t, c, 4096)
	assert.Less(t, c, 40960)
	assert.True(t, strings.HasPrefix(line, fmt.Sprintf("context: %d tokens per sequence, chosen as llama.cpp's --fit chooses", c)), line)
}

// gpt-oss-120b (MXFP4) on 24 GiB: the floor, then experts of whole layers
// and part of one more (-ot), as in --fit's step 4.
func TestFitOrderGptOss120bKeepsTheFloor(t *testing.T) {
	a, args, line := fitOrderAnswer(t, "gpt-oss-120b", "", 128)
	assert.Equal(t, StrategyOffload, a.Strategy)
	assert.Equal(t, "4096", argValue(args, "-c"), "%v", args)
	require.NotEmpty(t, argValue(args, "--n-cpu-moe"), "%v", args)
	require.NotEmpty(t, argValue(args, "-ot"), "%v", args)
	assert.True(t, strings.HasPrefix(line, "context: 4096 tokens per sequence, llama.cpp --fit's floor (--fit-ctx 4096)"), line)
	assert.Contains(t, line, "trained context (131072 per sequence)")
	assert.Contains(t, line, "steps 3 and 4")
	assert.Contains(t, line, "part of one more layer")
}

// A dense model, Llama-3.1-70B Q4_K_M on 24 GiB: the floor, then whole
// layers from the back (--fit's step 3): the last -ngl layers on the GPU.
func TestFitOrderDenseKeepsTheFloorThenMovesLayers(t *testing.T) {
	a, args, line := fitOrderAnswer(t, "Llama-3.1-70B", "q4_k_m", 128)
	assert.Equal(t, StrategyOffload, a.Strategy)
	assert.Equal(t, "4096", argValue(args, "-c"), "%v", args)
	ngl := argValue(args, "-ngl")
	require.NotEmpty(t, ngl, "%v", args)
	assert.Less(t, atoi(ngl), a.Model.Layers+1)
	assert.Empty(t, argValue(args, "--n-cpu-moe"), "%v", args)
	assert.True(t, strings.HasPrefix(line, "context: 4096 tokens per sequence, llama.cpp --fit's floor (--fit-ctx 4096)"), line)
	assert.Contains(t, line, "trained context (131072 per sequence)")
	assert.Contains(t, line, "step 3")
	assert.NotContains(t, line, "step 4")
	assert.Contains(t, line, "-ngl "+ngl)
}

// An asked context stands: no line about the floor.
func TestFitOrderGivenContextHasNoFloorLine(t *testing.T) {
	r := reg(t, []registry.Device{rtx3090(), host(64 << 30)})
	a := shard(t, request(t, `{"model":{"name":"Qwen3-30B-A3B"},"engine":"llama.cpp","cpu_offload":true,"quant":"q8_0","context_length":4096}`, r))
	require.True(t, a.Fits.Yes())
	for _, l := range a.Explanation {
		assert.False(t, strings.HasPrefix(l, "context: "), l)
	}
}

// A trained context at or below the floor is what --fit keeps (its step
// 2 changes nothing: n_ctx_max <= n_ctx_min): Falcon-40B (2048 tokens)
// Q8_0 on 24 GiB runs at -c 2048 with layers in host RAM.
func TestFitOrderTrainedContextBelowTheFloor(t *testing.T) {
	a, args, line := fitOrderAnswer(t, "Falcon-40B", "q8_0", 128)
	assert.Equal(t, StrategyOffload, a.Strategy)
	assert.Equal(t, "2048", argValue(args, "-c"), "%v", args)
	assert.True(t, strings.HasPrefix(line, "context: 2048 tokens per sequence, the model's trained context, which is not above llama.cpp --fit's floor (--fit-ctx 4096)"), line)
	assert.Contains(t, line, "step 3")
}

// Where not every layer's dense weights fit the GPU (Qwen3-235B-A22B Q8_0
// on 8 GiB), --fit's step 3 puts the dense weights of the last layers on
// the GPU with every routed expert in host RAM and stops; the plan does the
// same (-ngl K --cpu-moe) and the context line names that step.
func TestFitOrderMoEDenseWeightsOfLastLayersIsStep3(t *testing.T) {
	d := gpu(registry.KindCUDA, 0, "NVIDIA GeForce RTX 3090", 8<<30, "8.6")
	d.Vendor = "nvidia"
	r := reg(t, []registry.Device{d, host(512 << 30)})
	a := shard(t, request(t, `{"model":{"name":"Qwen3-235B-A22B"},"engine":"llama.cpp","cpu_offload":true,"quant":"q8_0"}`, r))
	require.True(t, a.Fits.Yes(), strings.Join(a.Explanation, "\n"))
	args := a.EngineArgs["llama.cpp"]
	require.Empty(t, argValue(args, "--n-cpu-moe"), "%v", args)
	require.Contains(t, args, "--cpu-moe", "every expert in host RAM: %v", args)
	ngl := atoi(argValue(args, "-ngl"))
	assert.Greater(t, ngl, 0, "%v", args)
	assert.Less(t, ngl, a.Model.Layers, "%v", args)
	assert.Equal(t, "4096", argValue(args, "-c"), "%v", args)
	var line string
	for _, l := range a.Explanation {
		if strings.HasPrefix(l, "context: ") {
			line = l
		}
	}
	assert.True(t, strings.HasPrefix(line, "context: 4096 tokens per sequence, llama.cpp --fit's floor (--fit-ctx 4096)"), line)
	assert.NotContains(t, line, "differs")
	assert.Contains(t, line, "its step 3")
	assert.Contains(t, line, "-ngl "+itoa(ngl)+" --cpu-moe")
	assert.NotContains(t, line, "it fills the GPU with whole layers from the back")
}

// With cpu_offload asked for, the low-quality note of a llama.cpp plan
// said "a larger GPU, or quant q4_k_m with cpu_offload, keeps more of
// it": the request already had cpu_offload. It says what to change: the
// quant, the layers that do not fit then in host RAM, run on the CPU.
func TestLowQualityNoteWithCPUOffloadAskedNamesTheQuant(t *testing.T) {
	host := registry.Device{ID: "cpu:0", Kind: registry.KindCPU, Family: registry.FamilyCPU, Name: "host", Available: true,
		MemoryBytes: 128 * gibBytes, Cores: 16}
	r := reg(t, []registry.Device{host, gpu(registry.KindCUDA, 0, "NVIDIA GeForce RTX 4090", 24<<30, "8.9")})
	a := shard(t, request(t, `{"model":{"name":"Llama-3.1-70B"},"engine":"llama.cpp","cpu_offload":true}`, r))
	require.True(t, a.Fits.Yes(), a.Explanation)
	require.Regexp(t, `^iq[12]_`, a.Quant, "auto weighs decode speed and keeps the 70B on the GPU")
	text := strings.Join(a.Explanation, "\n")
	assert.Contains(t, text, a.Quant+" loses much quality (mean KL divergence")
	assert.NotContains(t, text, "with cpu_offload, keeps more of it")
	assert.Contains(t, text, `; "quant": "q4_k_m" keeps more of it, the layers that do not fit in host RAM (the cpu_offload asked for) running on the CPU`)
	q4 := shard(t, request(t, `{"model":{"name":"Llama-3.1-70B"},"engine":"llama.cpp","cpu_offload":true,"quant":"q4_k_m"}`, r))
	assert.True(t, q4.Fits.Yes(), "what the note names fits: %q", q4.Explanation)
	assert.Equal(t, "q4_k_m", q4.Quant)
}

// A projector given by size for a catalog VLM whose GGUF repository's
// mmproj file the catalog names (Qwen/Qwen3-VL-8B-Instruct-GGUF) is the one
// llama-server -hf downloads and loads itself: no --mmproj stand-in, a line
// naming the file (the Q8_0 projector beside Q4_K_M weights, as llama.cpp's
// find_best_mmproj takes it), the size counted. Where the catalog names none
// (ggml-org/Qwen2.5-VL-7B-Instruct-GGUF), MMPROJ.gguf stands for it.
func TestLlamaCPPProjectorByHFRepository(t *testing.T) {
	r := reg(t, []registry.Device{gpu(registry.KindCUDA, 0, "NVIDIA GeForce RTX 4090", 24<<30, "8.9")})
	body := `{"model":{"name":"Qwen3-VL-8B-Instruct"},"engine":"llama.cpp","quant":"q4_k_m","context_length":8192`
	plain := shard(t, request(t, body+`}`, r))
	with := shard(t, request(t, body+`,"mmproj":{"size_bytes":1000000000}}`, r))
	require.True(t, with.Fits.Yes(), with.Explanation)
	assert.Greater(t, with.Shards[0].MemoryBytes-plain.Shards[0].MemoryBytes, int64(1e9-1), "the projector's size is counted")
	args := with.EngineArgs["llama.cpp"]
	assert.NotContains(t, args, "--mmproj")
	assert.NotContains(t, args, "--no-mmproj")
	assert.Contains(t, with.Explanation, "llama.cpp: -hf also downloads the repository's vision projector and loads it (mmproj-Qwen3VL-8B-Instruct-Q8_0.gguf: llama.cpp takes the mmproj file whose type is nearest the weights', here Q8_0 beside Q4_K_M weights), counted at the size given")

	host := shard(t, request(t, body+`,"mmproj":{"size_bytes":1000000000,"offload":false}}`, r))
	assert.Contains(t, host.EngineArgs["llama.cpp"], "--no-mmproj-offload")
	assert.NotContains(t, host.EngineArgs["llama.cpp"], "--mmproj")

	other := shard(t, request(t, `{"model":{"name":"Qwen2.5-VL-7B-Instruct"},"engine":"llama.cpp","quant":"q4_k_m","context_length":8192,"mmproj":{"size_bytes":1000000000}}`, r))
	require.True(t, other.Fits.Yes(), other.Explanation)
	assert.Equal(t, "MMPROJ.gguf", flagAfter(other.EngineArgs["llama.cpp"], "--mmproj"))
	assert.Contains(t, other.Explanation, "llama.cpp: the projector was given by size; --mmproj MMPROJ.gguf stands for its file")
}

// The note named q4_k_m with cpu_offload asked for where q4_k_m does not
// fit even with host RAM: DeepSeek-R1 with llama.cpp offloaded on the
// h200-vm fixture (one H200, 125 GiB of host RAM) plans unsloth's Q2_K;
// q4_k_m is 377.4 GiB. It names the best type better than q2_k that fits
// offloaded (iq3_xs, 254.9 GiB on one device; iq3_s, 270.1 GiB, does
// not), and says so where none does.
func TestLowQualityNoteNamesOnlyATypeThatFitsOffloaded(t *testing.T) {
	r := h200Detected(t)
	a := shard(t, request(t, `{"model":{"name":"DeepSeek-R1"},"engine":"llama.cpp","cpu_offload":true}`, r))
	require.True(t, a.Fits.Yes(), a.Explanation)
	require.Equal(t, "q2_k", a.Quant)
	text := strings.Join(a.Explanation, "\n")
	assert.Contains(t, text, "q2_k loses much quality")
	assert.NotContains(t, text, `"quant": "q4_k_m" keeps more of it`)
	assert.Contains(t, text, `; "quant": "iq3_xs" keeps more of it, the layers that do not fit in host RAM (the cpu_offload asked for) running on the CPU`)
	better := shard(t, request(t, `{"model":{"name":"DeepSeek-R1"},"engine":"llama.cpp","cpu_offload":true,"quant":"iq3_xs"}`, r))
	assert.True(t, better.Fits.Yes(), "what the note names fits: %q", better.Explanation)
	worse := shard(t, request(t, `{"model":{"name":"DeepSeek-R1"},"engine":"llama.cpp","cpu_offload":true,"quant":"iq3_s"}`, r))
	assert.False(t, worse.Fits.Yes(), "the next better type does not fit: %q", worse.Explanation)

	// With half the host RAM no type better than the plan's fits.
	small := *r
	small.Devices = append([]registry.Device{}, r.Devices...)
	for i := range small.Devices {
		if small.Devices[i].Kind == registry.KindCPU {
			small.Devices[i].MemoryBytes /= 2
			if small.Devices[i].MemoryFreeBytes != nil {
				half := *small.Devices[i].MemoryFreeBytes / 2
				small.Devices[i].MemoryFreeBytes = &half
			}
		}
	}
	a = shard(t, request(t, `{"model":{"name":"DeepSeek-R1"},"engine":"llama.cpp","cpu_offload":true,"quant":"iq2_xxs"}`, &small))
	require.True(t, a.Fits.Yes(), a.Explanation)
	text = strings.Join(a.Explanation, "\n")
	assert.Contains(t, text, "iq2_xxs loses much quality")
	assert.NotContains(t, text, "keeps more of it")
	assert.Contains(t, text, "of the types not warned of (iq3_xxs and better) none fits, even with the cpu_offload asked for")
}

// A chosen context's speed is stated at a depth of 4096 tokens per
// sequence, and at that depth vLLM's pool runs every sequence of the batch
// that fits there, not only the few that fit at full context. Before, the
// full-context estimate's cap (10 sequences of 131072 for Llama-3.1-70B
// bf16 on eight H100s at batch 64) was left on the plan and leaked into the
// 4096-deep estimate: "decode ... over 10 sequences", "the KV cache of
// 4096 tokens x 10 sequences", while 64 x 4096 tokens fit the pool many
// times over.
func TestChosenContextSpeedRunsTheBatchThatFitsAtItsDepth(t *testing.T) {
	r := eightH100(t, false)
	a := shard(t, request(t, `{"model":{"name":"Llama-3.1-70B"},"quant":"bf16","engine":"vllm","batch_size":64}`, r))
	require.True(t, a.Fits.Yes(), a.Explanation)
	require.Equal(t, "131072", flagAfter(a.EngineArgs["vllm"], "--max-model-len"))
	require.NotNil(t, a.Throughput)
	require.Less(t, a.MaxBatchSize, 64, "the pool holds fewer than 64 full-length sequences")
	assert.Equal(t, 64, a.Throughput.Sequences)
	notes := strings.Join(a.Throughput.Assumptions, "\n")
	assert.Contains(t, notes, "the KV cache of 4096 tokens x 64 sequences")
	given := shard(t, request(t, `{"model":{"name":"Llama-3.1-70B"},"quant":"bf16","engine":"vllm","batch_size":64,"context_length":4096}`, r))
	assert.Equal(t, given.Throughput.DecodeTokensPerS, a.Throughput.DecodeTokensPerS, "the same 64 sequences at the same depth")
	full := shard(t, request(t, `{"model":{"name":"Llama-3.1-70B"},"quant":"bf16","engine":"vllm","batch_size":64,"context_length":131072}`, r))
	assert.Equal(t, a.MaxBatchSize, full.Throughput.Sequences, "at full context the pool's count runs")
	assert.Contains(t, notes, fmt.Sprintf("at that full depth decode is %.1f tokens/s over %d sequences, all the KV pool holds at that depth", full.Throughput.DecodeTokensPerS, a.MaxBatchSize))
}

// The line of a chosen context names the limit it meets: for both paged
// engines their own KV pool, which the plan is fitted in (vLLM's start-up
// accounting; SGLang's pool as profile_max_num_token sizes it, staticPool:
// TestSGLangContextAndBatchAreItsPool). Between 9bd51277 and the fit in
// SGLang's pool, an SGLang plan's line named "the KV cache this plan's
// budget leaves SGLang", the budget then being smaller than SGLang's pool
// (Qwen3-32B at 0.5 on the h200-vm fixture: 32256 tokens against 34529).
func TestContextLineNamesTheLimitItMeets(t *testing.T) {
	sglang, ok := engine.Lookup("sglang")
	require.True(t, ok)
	vllm, ok := engine.Lookup("vllm")
	require.True(t, ok)
	line := contextLine(sglang, true, false, 34304, 40960, 4096, 40960, 1)
	assert.Contains(t, line, "reduced to the largest multiple of 256 with which one full-length sequence fits SGLang's KV pool")
	assert.NotContains(t, line, "budget leaves")
	assert.Contains(t, contextLine(vllm, true, false, 32256, 40960, 4096, 40960, 1), "fits vLLM's KV pool")
}
