package quant

import (
	"math"

	"github.com/ai-hwaccel/ai-hwaccel/internal/model"
)

// GGUFFileBytes is the weights a GGUF checkpoint's file holds at level l:
// WeightsBytes, what llama.cpp loads to run the model, plus the MTP (nextn)
// layers the file holds beside it (model.Checkpoint.FileMTP,
// FileMTPBytes). It is the figure a file listing's size checks; a plan's
// device memory stays WeightsBytes.
func GGUFFileBytes(m *model.Model, l Level, ck model.Checkpoint) int64 {
	w := WeightsBytes(m, l)
	if w == 0 || ck.FileMTP == "" {
		return w
	}
	return w + FileMTPBytes(m, l, ck.FileMTP == FileMTPWithEmbedHead)
}

// FileMTPWithEmbedHead is the model.Checkpoint.FileMTP value of a file whose
// MTP layers hold their own copies of the embedding and output head.
const FileMTPWithEmbedHead = "layer+embed-head"

// FileMTPBytes is the bytes of the model's MTP layers (model.Model.MTPLayers)
// in a GGUF file of level l that holds them. The converter writes each as a
// block past the model's (block_count is num_hidden_layers plus
// num_nextn_predict_layers: Glm4MoeModel in conversion/glm.py of
// https://github.com/unslothai/llama.cpp at
// d32676d77426540327835040d5d3279728f0b4c8, a synced fork of
// ggml-org/llama.cpp; convert_hf_to_gguf.py since
// ggml-org/llama.cpp#14939, ef0144c0, b6085, which added the glm4moe
// architecture), so llama-quant (src/llama-quant.cpp there) types it as
// any layer of a model that many layers deep: its attn_v and ffn_down by
// their rules for the last layer of n_layer + n (use_more_bits: the last
// eighth), its MoE experts as the model's. The nextn tensors beside it are
// of category OTHER (tensor_get_category matches neither
// "token_embd.weight" nor "output.weight" in "blk.N.nextn.embed_tokens" or
// "nextn.shared_head_head"), so eh_proj ({2h, h}) and, with embedHead, the
// layer's own embedding and head ({h, vocab} each) take the mix's base
// type; enorm, hnorm and shared_head_norm are 1-D and stay F32. At run
// time llama.cpp creates those tensors with TENSOR_SKIP unless MTP is on
// (llama_model_glm4_moe::load_arch_tensors, src/models/glm4-moe.cpp there:
// "skip all tensors in the NextN layers"; llama_model_loader logs "model
// has unused tensor ... -- ignoring" and takes their bytes out of
// size_data; so since that PR: TENSOR_SKIP for blocks past n_layer in
// src/llama-model.cpp at ef0144c0), so they are no device memory of a plan. 0 for a model
// without MTP layers, without a shape, or whose MTP layer is not one of
// the model's own layers (model.Arch.DenseMTPWithHead: a dense layer with
// a head of its own, which no GGUF of the catalog holds).
func FileMTPBytes(m *model.Model, l Level, embedHead bool) int64 {
	if !hasShape(m) || m.MTPLayers <= 0 || m.Arch().DenseMTPWithHead {
		return 0
	}
	// The model as the file's block count describes it: the MTP layers
	// appended to the stack, so the type rules see n_layer + n. (The
	// model's own layers are typed with that count too; WeightsBytes types
	// them with n_layer, which may move one layer's attn_v or ffn_down
	// across a use_more_bits boundary: a fraction of a layer.)
	file := *m
	file.Layers = m.Layers + m.MTPLayers
	info, ok := levelFor(&file, l)
	if !ok {
		return 0
	}
	contract := l.IsContract()
	h, V := float64(m.Hidden), float64(m.Vocab)
	var bits float64
	for i := m.Layers; i < file.Layers; i++ {
		ts := appendLayerTensors(nil, &file, i)
		ts = append(ts,
			tensor{catOther2D, i, 2 * h * h, 2 * m.Hidden, partNone}, // nextn.eh_proj
			tensor{catF32, i, 3 * h, 0, partNone})                    // nextn.enorm, hnorm, shared_head_norm
		if embedHead {
			ts = append(ts,
				tensor{catOther2D, i, V * h, m.Hidden, partNone}, // nextn.embed_tokens
				tensor{catOther2D, i, V * h, m.Hidden, partNone}) // nextn.shared_head_head
		}
		for _, t := range ts {
			bits += t.elements * tensorBits(&file, l, contract, info, t)
		}
	}
	return int64(math.Ceil(bits / 8))
}

// FileExtraBytes is what a GGUF checkpoint's tensors hold beyond the weights
// derived at level l (WeightsBytes), where the file was made by rules other
// than mainline llama.cpp's (ck.SizeMix) and its size is stated
// (ck.SizeBytes): the size less GGUFFileBytes, the derived weights plus
// the MTP layers the file holds that llama.cpp skips at load, so the extra
// is device memory. The file's metadata (the tokenizer: some MB, its
// strings and merges, which the config does not state) stays in it: a plan
// that charges the extra is over by those MB, not under. 0 for a file of
// mainline's rules, one without a stated size, or one not larger than
// derived.
func FileExtraBytes(m *model.Model, l Level, ck model.Checkpoint) int64 {
	if ck.SizeMix == "" || ck.SizeBytes <= 0 {
		return 0
	}
	derived := GGUFFileBytes(m, l, ck)
	if derived <= 0 {
		return 0
	}
	return max(ck.SizeBytes-derived, 0)
}
