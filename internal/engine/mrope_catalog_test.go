package engine

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/model"
)

// Qwen3-VL's text model rotates with interleaved MRoPE: its config.json's
// text_config holds "rope_scaling": {"mrope_interleaved": true,
// "mrope_section": [24, 20, 20], "rope_type": "default"} (the 32B
// Instruct and Thinking copies of ai-dynamo/aiconfigurator
// aic-core/src/aiconfigurator_core/model_configs @ 095f58a5, the entries'
// sources; the 4B's in kohya-ss/musubi-tuner
// src/musubi_tuner/krea2/krea2_encoder.py @ 7c1cf727, a vendored copy of
// its config.json; Cosmos-Reason2-8B's, a Qwen3-VL-8B fine-tune, in
// sarcascoder/nvidia-reason2 config.json @ 0d4ef3cc, its entry's source),
// so vLLM's MRoPE table holds four times the
// 262,144 positions (mrope.py, vllmrope.go) of all 128 values of each
// head. Kept without their rope_scaling, the entries were charged the
// default kind's table of 262,144 positions.
//
// Qwen3-VL-2B-, 8B-, 30B-A3B- and 235B-A22B-Instruct still are (and so is
// 235B-A22B-Thinking, whose copy @ 72a46882 keeps only rope_theta): their
// sources, aiconfigurator's copies @ 095f58a5, leave rope_scaling out (so
// does every earlier version of those files in that repository's history),
// and no verbatim copy of their config.json was found. Candidates not
// taken: nikolay-grudanov/Team_5_AI_Tutor
// models/Qwen3-VL-8B-Instruct/config.json @ ab9ec7bd holds the same
// rope_scaling but max_position_embeddings 8192, not the release's 262144,
// so it is an edited copy; CserDu123/CameraMovement's
// sft-017-qwen3-vl-30b-a3b-full-tuning-8k-ckpt-296/config.json (Hub commit
// 543cf19) is a fine-tuned checkpoint's config, not Qwen's file; the Hub's
// tree page of Qwen/Qwen3-VL-2B-Instruct lists config.json (1.51 kB) but
// not its text. The sections follow from the 128-wide heads all Qwen3-VL
// text models share (24 + 20 + 20 = 64 frequencies), but a value inferred
// from the family is not a cited one, so each of the five is charged the
// default table, a quarter of the MRoPE one (201,326,592 bytes short in
// bf16), until its config is found.
func TestQwen3VLChargedItsMRoPETable(t *testing.T) {
	for _, name := range []string{"Qwen3-VL-4B-Instruct", "Qwen3-VL-32B-Instruct", "Qwen3-VL-32B-Thinking", "Cosmos-Reason2-8B"} {
		m := model.Lookup(name)
		require.NotNil(t, m, name)
		assert.Equal(t, model.Rope{Type: "default", Theta: 5e6, MRoPE: true}, m.Rope, name)
		assert.Equal(t, int64(262_144*4*128*2), VLLMRopeCacheBytes(m, 2), name)
	}
}

// Qwen3.5-9B's text_config gives its rotary embedding as transformers v5's
// rope_parameters: {"mrope_interleaved": true, "mrope_section": [11, 11,
// 10], "rope_type": "default", "rope_theta": 10000000,
// "partial_rotary_factor": 0.25} (leo-kreisman/Qwen3.5-9B-MLX-8bit
// config.json @ 57b66137, the entry's source), as the other Qwen3.5
// entries keep theirs: an MRoPE table of four times 262,144 positions of
// a quarter of each 256-wide head. Kept without it, the entry was read as
// the default kind over whole heads (the same bytes: 4 x 64 = 256).
func TestQwen35NineBKeepsItsRopeParameters(t *testing.T) {
	m := model.Lookup("Qwen3.5-9B")
	require.NotNil(t, m)
	assert.Equal(t, model.Rope{Type: "default", Theta: 1e7, PartialFactor: 0.25, MRoPE: true}, m.Rope)
	assert.Equal(t, int64(262_144*4*64*2), VLLMRopeCacheBytes(m, 2))
}
