package model

import (
	"math"

	"github.com/ai-hwaccel/ai-hwaccel/internal/calibration"
	"github.com/ai-hwaccel/ai-hwaccel/internal/errs"
)

// ShapeParams computes the total and active parameter counts of a decoder-only
// transformer from its shape. The formula (documented in docs/accuracy.md,
// "Weights") counts every weight matrix and norm vector, no biases:
//
//	embeddings   V·h, output head V·h unless tied
//	attention    h·(H·d) + 2·h·(K·d) + (H·d)·h            (q, k, v, o; GQA aware)
//	  MLA        [h·q + q + q·H·(dn+dr)] or h·H·(dn+dr)      (q path, q = q_lora_rank)
//	             + h·(r+dr) + r + r·H·(dn+dv) + H·dv·h       (kv latent r = kv_lora_rank)
//	FFN          3·h·I (gated SwiGLU/GeGLU; 2·h·I for falcon/gpt2)
//	  MoE layer  E·3·h·Ie + S·3·h·Ie + h·E                   (experts, shared, router)
//	norms        2·h per layer + h final
//
// Active parameters (MoE) replace the E routed experts by the k chosen per
// token and leave out an untied input embedding table.
func ShapeParams(m *Model) (total, active int64, err error) {
	if m.Layers <= 0 || m.Hidden <= 0 {
		return 0, 0, errs.New(errs.InvalidArgument, "model: config needs num_hidden_layers and hidden_size to compute the parameter count")
	}
	h := float64(m.Hidden)
	L := float64(m.Layers)
	attn := attentionParams(m)
	ffnDense := float64(ffnProjections(m)) * h * float64(intermediateOrDefault(m))

	moeLayers := 0.0
	var expertParams, sharedParams, router float64
	if m.IsMoE() {
		moeLayers = L - float64(m.DenseLayers)
		if moeLayers < 0 {
			moeLayers = 0
		}
		ie := float64(m.MoEIntermediate)
		if ie == 0 {
			ie = float64(intermediateOrDefault(m))
		}
		expertParams = float64(ffnProjections(m)) * h * ie
		sharedParams = float64(m.SharedExperts) * expertParams
		router = h * float64(m.Experts)
	}
	denseLayers := L - moeLayers
	norms := 2*h*L + h
	embed := float64(m.Vocab) * h
	head := embed
	if m.TieEmbeddings {
		head = 0
	}
	common := L*attn + denseLayers*ffnDense + moeLayers*(sharedParams+router) + norms + embed + head
	t := common + moeLayers*float64(m.Experts)*expertParams
	// Active (MoE): the weights a token's forward pass reads. The input
	// embedding is a row lookup, not a matrix read, so an untied table is
	// left out; this is the convention of the DeepSeek-V3 weight notes
	// ("36.6B activated, including 0.9B output head") and of the gpt-oss
	// model card (arXiv 2508.10925 Table 1), see docs/accuracy.md.
	a := common + moeLayers*float64(m.ExpertsPerToken)*expertParams
	if !m.TieEmbeddings {
		a -= embed
	}
	if !m.IsMoE() {
		a = t
	}
	if t > MaxParams || math.IsNaN(t) {
		return 0, 0, errs.New(errs.InvalidArgument, "model: config shape implies %.4g parameters, above the 1e14 limit", t)
	}
	return int64(math.Round(t)), int64(math.Round(a)), nil
}

func attentionParams(m *Model) float64 {
	h := float64(m.Hidden)
	H := float64(m.Heads)
	if m.KVLoRARank > 0 && m.Heads > 0 {
		dn, dr, dv := float64(m.QKNopeHeadDim), float64(m.QKRopeHeadDim), float64(m.VHeadDim)
		r := float64(m.KVLoRARank)
		var q float64
		if m.QLoRARank > 0 {
			ql := float64(m.QLoRARank)
			q = h*ql + ql + ql*H*(dn+dr)
		} else {
			q = h * H * (dn + dr)
		}
		return q + h*(r+dr) + r + r*H*(dn+dv) + H*dv*h
	}
	if m.Heads == 0 {
		return 4 * h * h // heads unknown: square q, k, v, o
	}
	d := float64(m.EffectiveHeadDim())
	K := float64(m.EffectiveKVHeads())
	return h*H*d + 2*h*K*d + H*d*h
}

// ffnProjections is the number of h×I matrices per FFN: 3 for gated units
// (gate, up, down: Llama, Mistral, Qwen, Gemma, DeepSeek, Phi-3), 2 for the
// plain GELU MLP of Falcon and GPT-2 (Arch.PlainMLP).
func ffnProjections(m *Model) int {
	if m.Arch().PlainMLP {
		return 2
	}
	return 3
}

// intermediateOrDefault is the FFN width, 4·h when the config omits it (the
// GPT-2 convention, n_inner = null).
func intermediateOrDefault(m *Model) int {
	if m.Intermediate > 0 {
		return m.Intermediate
	}
	return 4 * m.Hidden
}

// EstimateShape fills an unknown shape from the parameter count with the
// relation fitted over the dense catalog entries
// (calibration.ShapeLayersLogIntercept and ShapeLayersExponent: layers =
// exp(a) · P^b; ShapeKVHeads, their most common key/value head count), with
// hidden solved from P ≈ 12·L·h² (attention 4h² + FFN ≈ 8h² per layer) and
// head_dim 128, and flags the model as estimated. It is used only when a
// request gives a bare count; the KV-cache size then carries the error of
// this fit (see docs/accuracy.md, "KV cache").
func EstimateShape(m *Model) {
	if m.Params <= 0 || m.Layers > 0 {
		return
	}
	p := float64(m.Params)
	layers := math.Round(math.Exp(calibration.ShapeLayersLogIntercept) * math.Pow(p, calibration.ShapeLayersExponent))
	if layers < 1 {
		layers = 1
	}
	hidden := math.Sqrt(p / (12 * layers))
	hidden = math.Max(128, math.Round(hidden/128)*128)
	m.Layers = int(layers)
	m.Hidden = int(hidden)
	m.HeadDim = 128
	m.Heads = m.Hidden / 128
	m.KVHeads = min(calibration.ShapeKVHeads, m.Heads)
	m.ShapeEstimated = true
	m.Notes = append(m.Notes, "shape estimated from the parameter count (layers, hidden size, heads): give model.name, model.config or model.path for an exact KV-cache size")
}
