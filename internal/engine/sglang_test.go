package engine

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// SGLang captures prefill CUDA graphs for every token count of
// _generate_prefill_cuda_graph_batch_sizes up to the chunk: 8 steps of 4
// to 32, 14 of 16 to 256, 8 of 32 to 512, 8 of 64 to 1024, then steps of
// 256 to 4096 and of 512 beyond.
func TestSGLangPrefillGraphs(t *testing.T) {
	for tokens, want := range map[int]int{2048: 42, 4096: 50, 8192: 58, 16384: 74, 32: 8, 3: 0} {
		assert.Equal(t, want, sglangPrefillGraphs(tokens), "up to %d tokens", tokens)
	}
}

// SGLang's default --mem-fraction-static, worked by hand from
// _handle_gpu_memory_settings and reserve_for_graph_mb
// (python/sglang/srt/server_args.py at sgl-project/sglang 001067ff): the
// reserve in MiB is 512 + 1.5 x chunk + tp x pp x 128 + 2 x decode graph
// batch + the prefill graphs (8 per size on CUDA, 1536 for MLA, none on
// ROCm), at least 10240 above 60 GiB.
func TestSGLangDefaultFraction(t *testing.T) {
	const mib = int64(1) << 20
	cases := []struct {
		name string
		l    Layout
		want float64
	}{
		// 24576 - (512 + 3072 + 128 + 48 + 336) = 20480
		{"RTX 4090, TP 1", Layout{TotalBytes: 24576 * mib, Kind: registry.KindCUDA}, 0.833},
		// 15360 - (512 + 3072 + 128 + 16 + 336) = 11296
		{"T4, TP 1", Layout{TotalBytes: 15360 * mib, Kind: registry.KindCUDA}, 0.735},
		// 81559 - (512 + 12288 + 128 + 512 + 464) = 67655
		{"H100, TP 1", Layout{TotalBytes: 81559 * mib, Kind: registry.KindCUDA, TP: 1, PP: 1}, 0.830},
		// 81559 - (512 + 12288 + 256 + 512 + 464) = 67527
		{"H100, TP 2", Layout{TotalBytes: 81559 * mib, Kind: registry.KindCUDA, TP: 2, PP: 1}, 0.828},
		// 143771 - (512 + 12288 + 1024 + 1024 + 464) = 128459
		{"H200, TP 8", Layout{TotalBytes: 143771 * mib, Kind: registry.KindCUDA, TP: 8, PP: 1}, 0.893},
		// 143771 - (512 + 12288 + 1024 + 1024 + 1536) = 127387
		{"H200, TP 8, MLA", Layout{TotalBytes: 143771 * mib, Kind: registry.KindCUDA, TP: 8, PP: 1, Latent: true}, 0.886},
		// 196592 - (512 + 24576 + 128 + 1024) = 170352: no prefill graphs on ROCm
		{"MI300X, TP 1", Layout{TotalBytes: 206141652992, Kind: registry.KindROCm, TP: 1, PP: 1}, 0.867},
		// 81559 - (512 + 12288 + 512 + 512 + 464) = 67271
		{"H100, TP 2 x PP 2", Layout{TotalBytes: 81559 * mib, Kind: registry.KindCUDA, TP: 2, PP: 2}, 0.825},
		{"memory unknown", Layout{Kind: registry.KindCUDA}, 0.88},
	}
	for _, c := range cases {
		assert.Equal(t, c.want, sglangFractionAt(c.l), c.name)
	}
	assert.Equal(t, sglangFractionAt(Layout{TotalBytes: 81559 * mib, Kind: registry.KindCUDA}), sglangFraction(81559*mib),
		"FractionOf is the value on one CUDA GPU")
}
