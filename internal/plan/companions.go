package plan

import (
	"github.com/ai-hwaccel/ai-hwaccel/internal/quant"
)

// companions is the memory of what the request loads beside its model, for
// a plan at level l of ctx tokens x batch sequences: gpu on the plan's
// first device, host in host memory.
//
//   - draft_model (speculative decoding): its weights, at its file's own
//     type when given as a GGUF file, else at the plan's level (as llama.cpp
//     runs it), and its KV cache for the same context and sequences at 16
//     bits, llama.cpp's default draft cache type (-ctkd/-ctvd f16;
//     common/arg.cpp of ggml-org/llama.cpp). llama-server gives the draft
//     the main context (--ctx-size-draft 0) and offloads its layers with
//     -ngld; they are counted on the first device, the one llama.cpp's main
//     device is (its compute buffer, some hundred MiB, is not counted).
//   - mmproj (a multimodal projector): its file's bytes and the image
//     encoder's compute buffer (quant.ProjectorComputeBytes, when the
//     file's header or else the model's vision_config gives a tower
//     llama.cpp runs at a fixed image size: Projector.Encoder,
//     model.VisionEncoder), on the first GPU (llama.cpp's mtmd loads the
//     projector and reserves its compute buffer on the GPU unless
//     --no-mmproj-offload), in host memory when "offload" is false.
func (r *planning) companions(l quant.Level, ctx, batch int) (gpu, host int64) {
	if d := r.Draft; d != nil && d.Model != nil {
		gpu += quant.WeightsBytes(d.Model, draftLevel(d.Model.FileQuant, l))
		gpu += quant.KVCacheBytes(d.Model, ctx, batch, quant.KVOptions{})
	}
	if p := r.Projector; p != nil {
		enc := p.Encoder
		if enc == nil {
			enc = r.Model.VisionEncoder
		}
		b := p.Bytes + quant.ProjectorComputeBytes(enc, !r.NoFlashAttention)
		if p.OnHost {
			host += b
		} else {
			gpu += b
		}
	}
	return gpu, host
}

// draftLevel is the level a draft model is stored at: its file's type, else
// the plan's (int8/int4 as the GGUF types they mean for llama.cpp).
func draftLevel(fileQuant string, l quant.Level) quant.Level {
	if fileQuant != "" {
		if fl, err := quant.Parse(fileQuant); err == nil {
			return fl
		}
	}
	return l.LlamaCPPLevel()
}
