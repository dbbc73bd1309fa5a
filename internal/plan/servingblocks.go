package plan

import (
	"strconv"
	"strings"

	"github.com/ai-hwaccel/ai-hwaccel/internal/calibration"
	"github.com/ai-hwaccel/ai-hwaccel/internal/model"
	"github.com/ai-hwaccel/ai-hwaccel/internal/specs"
)

// ServingBlocks counts what the layers of one stage hold, for a serving
// engine's fixed decode costs (calibration.ServingDecode): Parts is the
// sublayers (a token mixer — attention, latent attention, a Mamba or
// linear-attention state — or a feed-forward block, each with its norm,
// residual add and, under tensor parallelism, one all-reduce after its
// row-parallel output projection), MoE the feed-forward blocks that route
// to experts, MLA the latent-attention mixers and Indexer the DeepSeek
// Sparse Attention indexers. A transformer layer is two parts; a hybrid
// block of one mixer (Nemotron-H's Mamba2, MoE and attention blocks,
// hybrid_override_pattern) is one.
type ServingBlocks struct {
	Parts, MoE, MLA, Indexer int
}

// CountServingBlocks is the ServingBlocks of layers [start, end) of m. The
// indexers are the model's IndexerLayers in proportion to the stage's
// layers (the catalog keeps their count, not which layers run them).
func CountServingBlocks(m *model.Model, start, end int) ServingBlocks {
	var b ServingBlocks
	for i := max(start, 0); i < end; i++ {
		l := m.LayerAt(i)
		if l.Kind != model.FeedForward {
			b.Parts++
		}
		if l.FFN != model.FFNNone {
			b.Parts++
			if m.IsMoE() && l.FFN == model.FFNModel && i >= m.DenseLayers {
				b.MoE++
			}
		}
		if l.Kind == model.LatentAttention {
			b.MLA++
		}
	}
	if m.IndexerLayers > 0 && m.Layers > 0 && end > start {
		b.Indexer = (m.IndexerLayers*(end-max(start, 0)) + m.Layers/2) / m.Layers
	}
	return b
}

// LaterServingGeneration reports whether a GPU of compute capability or
// gfx target arch (its record's when not detected) and record s is of the
// Hopper, Blackwell or CDNA3 generations or later (NVIDIA compute
// capability 9.0 and up: https://developer.nvidia.com/cuda-gpus; AMD
// gfx942/gfx950: ROCm's gpu-arch-specs), where vLLM's per-part decode time
// is fitted apart from Ampere's and Ada's (calibration.ServingDecode).
// Without an arch, the record's HBM3 or HBM3e memory says so: those parts
// (H200, MI300X, B200) carry it, no Ampere or Ada part does.
func LaterServingGeneration(arch string, s *specs.Spec) bool {
	if arch == "" && s != nil {
		arch = s.Arch
	}
	if strings.HasPrefix(arch, "gfx9") {
		return arch >= "gfx940"
	}
	if major, _, ok := strings.Cut(arch, "."); ok {
		n, err := strconv.Atoi(major)
		return err == nil && n >= 9
	}
	return arch == "" && s != nil && (s.Memory == specs.MemoryHBM3 || s.Memory == specs.MemoryHBM3e)
}

// servingPartSeconds is the per-part time s charges on d: PartSecondsLater
// on a GPU of a later generation (LaterServingGeneration), else
// PartSeconds.
func servingPartSeconds(s calibration.ServingDecode, d *device) float64 {
	if LaterServingGeneration(d.Dev.ComputeCapability, d.Spec) {
		return s.PartSecondsLater
	}
	return s.PartSeconds
}
