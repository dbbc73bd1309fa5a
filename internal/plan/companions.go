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
//   - mmproj (a multimodal projector): its file's bytes, on the first GPU
//     (llama.cpp's mtmd loads the projector on the GPU unless
//     --no-mmproj-offload), in host memory when "offload" is false; the
//     image encoder's compute buffer is not counted.
func (r *planning) companions(l quant.Level, ctx, batch int) (gpu, host int64) {
	if d := r.Draft; d != nil && d.Model != nil {
		gpu += quant.WeightsBytes(d.Model, draftLevel(d.Model.FileQuant, l))
		gpu += quant.KVCacheBytes(d.Model, ctx, batch, quant.KVOptions{})
	}
	if p := r.Projector; p != nil {
		if p.OnHost {
			host += p.Bytes
		} else {
			gpu += p.Bytes
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
