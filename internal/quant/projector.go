package quant

import "github.com/ai-hwaccel/ai-hwaccel/internal/model"

// ProjectorComputeBytes is the compute buffer llama.cpp's mtmd reserves for
// a vision encoder e (an --mmproj projector) when it loads: the warm-up
// builds the encoder's graph for one image of e.ImageSize² pixels and
// reserves what ggml's allocator needs for it (clip_model_loader::warmup and
// reserve_compute_meta, tools/mtmd/clip.cpp of ggml-org/llama.cpp). The
// graph is build_vit's (same file): per layer a pre-norm attention and an
// MLP over n = (image_size / patch_size)² patches of width h, in F32.
//
//   - With flash attention (llama.cpp's default where the backend has it,
//     the CPU's included) the buffer is the larger of two live sets: the
//     MLP's, its n × I activation beside three n × h ones (the residual,
//     the normalised input, the down projection): n·(I + 3h)·4 bytes; and
//     the attention's, the residual, Q, K, V and the output in F32 with K
//     and V cast to F16, which ggml's allocator packed into 5.5 n × h F32
//     rows: 22·n·h bytes.
//   - Without it (-fa off) the score matrix, n² per head in F32, beside six
//     n × h activations (residual, Q, K, V, V's transposed copy, the
//     attention output): n²·H·4 + 6·n·h·4 bytes.
//
// These reproduce, to the log's 0.01 MiB, every buffer llama.cpp's CPU
// backend reserved for Gemma 3's SigLIP at its 896 px (4096 patches), F16
// and Q8_0, and for variants with 6400 patches, 8 heads, a 2304-wide MLP or
// a 768-wide tower (internal/calibration/data/llamacpp_mmproj.json, replayed
// by TestLlamaCPPProjector in internal/api). With 2304 patches or fewer
// (672 px and below; no Gemma 3 checkpoint) a fixed-size tensor, the F16
// copy of the transposed projection matrix (models/siglip.cpp, 11.8 MiB for
// a 5376-wide language model), no longer fits in a freed activation and the
// buffer is up to 32 MiB larger than this (docs/accuracy.md, "The vision
// projector"). 0 when e is nil.
func ProjectorComputeBytes(e *model.VisionEncoder, flashAttention bool) int64 {
	n := int64(e.Patches())
	if n == 0 {
		return 0
	}
	h, ff := int64(e.Hidden), int64(e.Intermediate)
	if flashAttention {
		return max(n*(ff+3*h)*4, 22*n*h)
	}
	return n*n*int64(e.Heads)*4 + 6*n*h*4
}

// VisionBytes is the memory of m's vision tower and projector
// (model.VisionParams) as vLLM and SGLang load it beside the language model
// for a plan at level l: 16 bits a weight whatever the level (4 bytes at
// fp32, the model's own dtype then). Quantized VLM checkpoints leave the
// vision modules out of their quantization (Qwen2.5-VL's AWQ checkpoints
// name "visual" in modules_to_not_convert), and vLLM builds the tower
// without a GPTQ config (_maybe_ignore_quant_config in
// vllm/model_executor/models/qwen2_vl.py of vllm-project/vllm). 0 without
// a tower.
func VisionBytes(m *model.Model, l Level) int64 {
	if m == nil || m.VisionParams <= 0 {
		return 0
	}
	if l == FP32 {
		return 4 * m.VisionParams
	}
	return 2 * m.VisionParams
}

// VisionWholeBytes is the part of VisionBytes each tensor-parallel rank
// holds whole (model.Model.VisionWholeParams: the patch embedding, the
// norms, position tables and plain-parameter projector parts), at the same
// width.
func VisionWholeBytes(m *model.Model, l Level) int64 {
	if m == nil || m.VisionParams <= 0 {
		return 0
	}
	whole := min(m.VisionWholeParams, m.VisionParams)
	if l == FP32 {
		return 4 * whole
	}
	return 2 * whole
}
