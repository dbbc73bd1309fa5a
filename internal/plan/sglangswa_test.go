package plan

import (
	"strconv"
	"strings"
	"testing"

	"github.com/goccy/go-json"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/model"
)

// SGLang sizes one token's cache in its pool by its own rules, not by the
// windows the planner gives a model's local layers
// (python/sglang/srt/model_executor/model_runner_kv_cache_mixin.py at
// sgl-project/sglang 001ccef0072a4537d4ec6bdd50a73e6feb2c907d):
//   - a hybrid-SWA architecture (is_hybrid_swa_model in
//     python/sglang/srt/configs/model_config.py at 001adf56: GptOss,
//     Llama4ForConditionalGeneration, MiMoV2, Step3p5/3p7, Gemma4, Laguna)
//     keeps its window layers in a second pool of swa_full_tokens_ratio
//     (0.8 by default, python/sglang/srt/server_args.py at 001067ff) times
//     the full layers' tokens, so max_total_num_tokens, the full pool's
//     tokens, is the rest over F x n_full + 0.8 x S x n_swa bytes
//     (set_num_tokens_hybrid_swa);
//   - any other model caches the whole context on every layer:
//     get_cell_size_per_token is KV heads x (head_dim + v_head_dim) x
//     num_layers x bytes whatever sliding_window says, and Gemma 2/3 are
//     kept out of the hybrid pool outright
//     (python/sglang/srt/arg_groups/model_overrides/gemma2_gemma3.py:
//     disable_hybrid_swa_memory).
//
// The plan's pool (engine_expect.sglang: kv_cache_gib over
// max_total_num_tokens) is therefore that many bytes a token, computed
// here from each model's config.json; its context and batch are what that
// pool holds. Before, the planner counted window layers at their window:
// gpt-oss-120b at 36,864 bytes a token where SGLang takes 66,355 (1.8x),
// Mistral-7B-v0.1 at 32768 tokens 8x too few.
func TestSGLangPoolTokensAsSGLangSizesWindowLayers(t *testing.T) {
	const bf16 = 2
	cases := []struct {
		name, body string
		gpus       int
		// perLayer is one token of one layer on one rank, KV heads per
		// rank x (head_dim + v_head_dim) x 2 bytes; full and window the
		// layers of each kind SGLang counts.
		perLayer      float64
		full, window  int
		windowTokens  float64 // the window pool's tokens per full-pool token
		wantRatioFlag bool
	}{
		// openai/gpt-oss-120b config.json: 36 layers, layer_types
		// alternating sliding_attention and full_attention (18 each), 8
		// KV heads of head_dim 64; KV cache bf16 (the mxfp4 checkpoint
		// runs --dtype bfloat16).
		{"gpt-oss-120b on an H200", `{"model":{"name":"gpt-oss-120b"},"engine":"sglang"}`, 1, 8 * (64 + 64) * bf16, 18, 18, 0.8, true},
		// meta-llama/Llama-4-Scout-17B-16E-Instruct config.json
		// (Llama4ForConditionalGeneration): 48 layers, every 4th global
		// (SGLang's get_hybrid_layer_ids: (i + 1) % 4 == 0), 8 KV heads
		// of head_dim 128, 1 per rank at TP 8.
		{"Llama-4-Scout over 8 H200s", `{"model":{"name":"Llama-4-Scout-17B-16E-Instruct"},"engine":"sglang","quant":"bf16","tensor_parallel_size":8}`, 8, 1 * (128 + 128) * bf16, 12, 36, 0.8, true},
		// google/gemma-3-27b config.json (text_config): 62 layers,
		// 16 KV heads of head_dim 128; every layer at the whole context.
		{"Gemma-3-27B on an H200", `{"model":{"name":"Gemma-3-27B"},"engine":"sglang","quant":"bf16"}`, 1, 16 * (128 + 128) * bf16, 62, 0, 0, false},
		// mistralai/Mistral-7B-v0.1 config.json: 32 layers, all with
		// sliding_window 4096, 8 KV heads of 4096 / 32 = 128; every layer
		// at the whole context.
		{"Mistral-7B-v0.1 on an H200", `{"model":{"name":"Mistral-7B-v0.1"},"engine":"sglang","quant":"bf16"}`, 1, 8 * (128 + 128) * bf16, 32, 0, 0, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a := shard(t, request(t, tc.body, h200s(t, tc.gpus)))
			require.True(t, a.Fits.Yes(), a.Explanation)
			e, ok := a.EngineExpect["sglang"]
			require.True(t, ok, "engine_expect.sglang")
			cell := tc.perLayer * (float64(tc.full) + tc.windowTokens*float64(tc.window))
			tokens := float64(e.MaxTotalNumTokens)
			// kv_cache_gib is rounded to hundredths: 0.1 % at tens of GiB.
			assert.InEpsilon(t, e.KVCacheGiB*(1<<30)/cell, tokens, 0.002,
				"SGLang's pool of %.2f GiB at %.1f bytes a token", e.KVCacheGiB, cell)
			args := a.EngineArgs["sglang"]
			ctx, err := strconv.Atoi(flagAfter(args, "--context-length"))
			require.NoError(t, err)
			assert.LessOrEqual(t, ctx, int(e.MaxTotalNumTokens), "one sequence fits the pool")
			assert.Equal(t, int(e.MaxTotalNumTokens)/ctx, a.MaxBatchSize, "the batch is the pool's")
			if tc.wantRatioFlag {
				assert.Equal(t, "0.8", flagAfter(args, "--swa-full-tokens-ratio"), "the ratio the pool was sized with")
			} else {
				assert.NotContains(t, args, "--swa-full-tokens-ratio")
			}
		})
	}
}

// A model with recurrent (Mamba, gated DeltaNet) layers beside attention
// is, for SGLang, a "mambaish" model: profile_max_num_token counts only its
// full-attention layers in a token's cell and hands the rest to
// handle_max_mamba_cache first, which gives the mamba state pool
// mamba_full_memory_ratio / (1 + mamba_full_memory_ratio) of it (0.9 by
// default in python/sglang/srt/server_args.py; the pool rounded down to
// whole states of mamba_cache_per_req), so the KV pool holds rest / 1.9
// over the attention layers' bytes a token
// (python/sglang/srt/model_executor/model_runner_kv_cache_mixin.py at
// 001ccef0). Qwen3-Next-80B-A3B (config.json: 48 layers,
// full_attention_interval 4, so 12 full-attention layers, 2 KV heads of
// head_dim 256): 12 x 2 x (256 + 256) x 2 bytes = 24,576 bytes a token
// in a KV pool of rest / 1.9. Before, the planner counted each
// sequence's recurrent state beside its tokens in the whole rest (about
// 1.9x SGLang's tokens at long contexts).
func TestSGLangPoolTokensOfAMambaHybrid(t *testing.T) {
	a := shard(t, request(t, `{"model":{"name":"Qwen3-Next-80B-A3B-Instruct"},"engine":"sglang","quant":"fp8"}`, h200s(t, 1)))
	require.True(t, a.Fits.Yes(), a.Explanation)
	e, ok := a.EngineExpect["sglang"]
	require.True(t, ok, "engine_expect.sglang")
	const cell = 12 * 2 * (256 + 256) * 2
	rest := e.KVCacheGiB * (1 << 30)
	// One state rounded off the mamba pool (74 MiB of tens of GiB) and
	// kv_cache_gib's hundredths: 0.5 %.
	assert.InEpsilon(t, rest/1.9/cell, float64(e.MaxTotalNumTokens), 0.005, "SGLang's KV pool of %.2f GiB / 1.9", e.KVCacheGiB)
	ctx, err := strconv.Atoi(flagAfter(a.EngineArgs["sglang"], "--context-length"))
	require.NoError(t, err)
	assert.LessOrEqual(t, ctx, int(e.MaxTotalNumTokens), "one sequence fits the pool")
	assert.Equal(t, int(e.MaxTotalNumTokens)/ctx, a.MaxBatchSize, "the batch is the pool's")
	assert.NotContains(t, a.EngineArgs["sglang"], "--swa-full-tokens-ratio")
}

// SGLang's hybrid-SWA pool is chosen by the checkpoint's class, not by its
// layers: is_hybrid_swa_model (python/sglang/srt/configs/model_config.py
// at sgl-project/sglang 001adf564fd332c285397a46a034ee2f93ba7515) lists
// Llama4ForConditionalGeneration and not Llama4ForCausalLM, the text-only
// class (EntryClass of python/sglang/srt/models/llama4.py at
// 003cb210149dabe1daf32be9c38ed7fe56093190), which reads a config of
// model_type llama4_text without vision_config. Its chunked layers then
// hold the whole context in get_cell_size_per_token, like every other
// model outside the list. The config here is the text_config of
// meta-llama/Llama-4-Scout-17B-16E-Instruct's config.json as the catalog
// holds it (the one Llama4ForCausalLM reads: transformers'
// Llama4TextConfig): 48 layers, 8 KV heads of head_dim 128, 1 per rank at
// TP 8. Before, the planner gave it the hybrid pool of its
// ConditionalGeneration release (0.8 of the window layers' tokens) and
// --swa-full-tokens-ratio, which SGLang ignores for it.
func TestSGLangTextOnlyLlama4IsNoHybridSWA(t *testing.T) {
	release, err := model.ReleaseConfig("Llama-4-Scout-17B-16E-Instruct")
	require.NoError(t, err)
	text, ok := release["text_config"].(map[string]any)
	require.True(t, ok, "the release's text_config")
	require.Equal(t, "llama4_text", text["model_type"])
	body, err := json.Marshal(map[string]any{"model": map[string]any{"config": text}, "engine": "sglang", "quant": "bf16", "tensor_parallel_size": 8})
	require.NoError(t, err)
	a := shard(t, request(t, string(body), h200s(t, 8)))
	require.True(t, a.Fits.Yes(), a.Explanation)
	e, ok := a.EngineExpect["sglang"]
	require.True(t, ok, "engine_expect.sglang")
	const cell = 48 * 1 * (128 + 128) * 2 // every layer, whole context, bf16
	assert.InEpsilon(t, e.KVCacheGiB*(1<<30)/cell, float64(e.MaxTotalNumTokens), 0.002,
		"SGLang's pool of %.2f GiB at %d bytes a token", e.KVCacheGiB, cell)
	assert.NotContains(t, a.EngineArgs["sglang"], "--swa-full-tokens-ratio")
}

// SGLang runs at most a third of its mamba state pool's states at once
// for a model with recurrent layers: init_memory caps max_num_reqs (the
// --max-running-requests asked, or its own default) at
// max_mamba_cache_size // calculate_mamba_ratio(), 3 with the radix cache
// on and no extra buffer (MAMBA_CACHE_SIZE_MAX_RUNNING_REQUESTS_RATIO;
// --mamba-scheduler-strategy auto is no_buffer), and
// handle_max_mamba_cache makes max_mamba_cache_size the states of
// mamba_cache_per_req that fit 0.9 / 1.9 of the rest
// (python/sglang/srt/model_executor/model_runner_kv_cache_mixin.py at
// sgl-project/sglang 001ccef0072a4537d4ec6bdd50a73e6feb2c907d;
// python/sglang/srt/server_args.py: mamba_ssm_dtype float32,
// mamba_full_memory_ratio 0.9, mamba_scheduler_strategy auto ->
// no_buffer). Qwen3-Next-80B-A3B's state (config.json: 36 gated DeltaNet
// layers of 16 key heads and 32 value heads of dim 128, conv kernel 4) is
// per layer a (2 x 16 x 128 + 32 x 128) x 3 bf16 conv state and a
// 32 x 128 x 128 float32 one (hybrid_gdn_params, CONV_DTYPE bfloat16):
// 36 x (49,152 + 2,097,152) = 77,266,944 bytes a request. On one H200 at
// 8192 tokens the pool holds about 143 sequences but 337 states, so SGLang
// runs 112 at once; at the whole 262,144-token context the pool binds
// first. Before, max_batch_size was the pool's whatever the states.
func TestSGLangMambaStatesCapRunningRequests(t *testing.T) {
	const perRequest = 36 * ((2*16*128+32*128)*3*2 + 32*128*128*4)
	plan := func(ctx, batch int) *ShardingAnswer {
		body := `{"model":{"name":"Qwen3-Next-80B-A3B-Instruct"},"engine":"sglang","quant":"fp8","context_length":` + itoa(ctx)
		if batch > 0 {
			body += `,"batch_size":` + itoa(batch)
		}
		a := shard(t, request(t, body+`}`, h200s(t, 1)))
		require.True(t, a.Fits.Yes(), a.Explanation)
		return a
	}
	a := plan(8192, 0)
	e := a.EngineExpect["sglang"]
	states := e.KVCacheGiB * (1 << 30) * 0.9 / 1.9 / perRequest
	want := int(states) / 3
	require.Less(t, want, int(e.MaxTotalNumTokens)/8192, "the states bind, not the pool")
	// kv_cache_gib's hundredths move the states by under 0.1.
	assert.InDelta(t, want, a.MaxBatchSize, 1, "a third of %.1f states", states)
	assert.Equal(t, float64(a.MaxBatchSize), e.MaxConcurrency, "engine_expect's concurrency is the requests SGLang runs")

	a = plan(262144, 0)
	e = a.EngineExpect["sglang"]
	assert.Equal(t, int(e.MaxTotalNumTokens)/262144, a.MaxBatchSize, "the pool binds")

	a = plan(8192, 200)
	assert.Contains(t, strings.Join(a.Explanation, "\n"), "max_mamba_cache_size", dump(t, a.Explanation))
}
