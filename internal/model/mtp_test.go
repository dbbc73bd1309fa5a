package model

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMTPParamsDeepSeekV3: DeepSeek-V3.1's MTP module (num_nextn_predict_layers
// 1) is the tensors vLLM builds for it, DeepSeekMultiTokenPredictorLayer in
// vllm/model_executor/models/deepseek_mtp.py of vllm-project/vllm: enorm and
// hnorm (h each), eh_proj (2h × h, no bias), shared_head.norm (h) and one
// DeepseekV2DecoderLayer, here an MoE layer as every layer past
// first_k_dense_replace. The shared_head.head and embed_tokens the
// checkpoint stores beside them are the model's own (HubParamsSource of the
// catalog entry); the router's e_score_correction_bias (256) is left out, as
// the shape leaves it out of every MoE layer.
func TestMTPParamsDeepSeekV3(t *testing.T) {
	m := Lookup("DeepSeek-V3.1")
	require.NotNil(t, m)
	// int64: the MoE block's count overflows a 32-bit int.
	const h, heads, qLoRA, kvLoRA, nope, rope, v int64 = 7168, 128, 1536, 512, 128, 64, 128
	const experts, expertInter int64 = 256, 2048
	attention := h*qLoRA + qLoRA + qLoRA*heads*(nope+rope) + // q_a_proj, q_a_layernorm, q_b_proj
		h*(kvLoRA+rope) + kvLoRA + kvLoRA*heads*(nope+v) + // kv_a_proj_with_mqa, kv_a_layernorm, kv_b_proj
		heads*v*h // o_proj
	moe := experts*3*h*expertInter + 3*h*expertInter + experts*h // experts, shared expert, gate
	block := attention + moe + 2*h                               // input_layernorm, post_attention_layernorm
	want := 2*h + 2*h*h + h + block                              // enorm, hnorm, eh_proj, shared_head.norm
	assert.Equal(t, want, m.MTPParams)
}

// TestMTPParamsStepIsDenseWithOwnHead: a Step-3.5/3.7 MTP layer is built by
// Step3p5AMultiTokenPredictorLayer (vllm/model_executor/models/step3p5_mtp.py
// of vllm-project/vllm): enorm, hnorm (h each), eh_proj (2h × h, no bias), a
// SharedHead of its own (norm, h, and head, vocab × h: the checkpoint stores
// one per MTP layer, the three "published MTP output entries" of
// NVIDIA-NeMo/Megatron-Bridge@067f987
// examples/model_verification_cards/step35-flash/card.yaml, 3,167,748,096
// bytes = 3 × 128,896 × 4,096 × 2) and one Step3p5DecoderLayer at index
// num_hidden_layers + i. That layer's FFN is an MoE block only for an index
// in moe_layers_enum (else range(1, num_hidden_layers)), so the MTP layers,
// indices 45-47, are dense MLPs of intermediate_size
// (vllm/model_executor/models/step3p5.py, Step3p5DecoderLayer). The
// catalog's Step-3.7-Flash config gives no attention_other_setting nor
// use_head_wise_attn_gate, so the attention is 64 query heads and 8 key/value
// heads of 128, as the decoder layers' are costed; the per-head q_norm and
// k_norm (2 × 128) are left out as in every decoder layer.
func TestMTPParamsStepIsDenseWithOwnHead(t *testing.T) {
	m := Lookup("Step-3.7-Flash")
	require.NotNil(t, m)
	const h, vocab, heads, kvHeads, d, inter, n = 4096, 128896, 64, 8, 128, 11264, 3
	attention := h*heads*d + 2*h*kvHeads*d + heads*d*h // q, k, v, o
	block := attention + 3*h*inter + 2*h               // gate/up/down, two norms
	layer := 2*h + 2*h*h + h + vocab*h + block         // enorm, hnorm, eh_proj, shared_head norm and head
	assert.Equal(t, int64(n*layer), m.MTPParams)
}

// TestStep37AgainstStep35HubCount: Step-3.7-Flash's text backbone is
// Step-3.5-Flash's, "byte-identical Step-3.5 (45 layers, hybrid
// full/sliding 64/96 GQA, MoE 288×top-8, head-wise attention gate, MTP 3
// layers)" (NVIDIA-NeMo/Megatron-Bridge@067f987
// examples/models/stepfun/step37/README.md), so Step-3.5-Flash's Hub count
// (the catalog entry's HubParams) is the count of the layers the catalog's
// config describes, with the MTP layers. What the shape leaves beyond it is
// exactly what that reduced config does not state: the sliding layers' 96
// query heads of 128 (attention_other_setting in vLLM's
// Step3p5DecoderLayer, vllm/model_executor/models/step3p5.py, against the
// 64 costed) with their head-wise gate g_proj (h × 96), in the 33 sliding
// decoder layers and the 3 MTP layers, which are sliding as the 48-entry
// layer_types of the published config lists them (the count balances only
// so); the full layers' gate (h × 64, 12 layers); the per-head q_norm and
// k_norm (2 × 128, 48 layers); the routers' router_bias (288, 42 MoE
// layers, moe_layers_enum 3-44 of
// src/megatron/bridge/models/stepfun/configuration_step35.py there).
func TestStep37AgainstStep35HubCount(t *testing.T) {
	e := catalogEntry(t, "Step-3.7-Flash")
	m := Lookup("Step-3.7-Flash")
	require.NotNil(t, m)
	const h, d, kv = 4096, 128, 8
	attention := func(heads, gate int) int { return 2*h*heads*d + 2*h*kv*d + gate*h*heads }
	slidingExtra := attention(96, 1) - attention(64, 0)
	missing := 36*slidingExtra + 12*h*64 + 48*2*d + 42*288
	assert.Equal(t, e.HubParams-int64(missing), m.Params+m.MTPParams)
}
