package plan

import (
	"fmt"
	"math"

	"github.com/ai-hwaccel/ai-hwaccel/internal/calibration"
	"github.com/ai-hwaccel/ai-hwaccel/internal/engine"
)

// How a serving engine runs a prompt, which servingPromptSeconds models:
//
//   - vLLM's V1 engine always chunks prompts (_set_default_args_v1 and
//     EngineArgs.get_batch_defaults in vllm/engine/arg_utils.py,
//     vllm-project/vllm at 99d7eb5d): one engine step schedules at most
//     --max-num-batched-tokens tokens, 8192 by default for `vllm serve` on
//     a GPU of 70 GiB or more other than an A100, else 2048
//     (engine.VLLMServeChunkTokens), so a prompt runs as forward passes of
//     up to that many tokens (vllm/v1/core/sched/scheduler.py at b4622cf9
//     caps each request's new tokens at the step's token budget). SGLang
//     does the same with its chunked_prefill_size (2048 to 16384 by GPU
//     memory, engine.SGLangChunkedPrefillSize).
//   - Those passes run without CUDA graphs: vLLM captures its piecewise
//     graphs for batches up to max_cudagraph_capture_size, by default
//     min(2 × max_num_seqs, 512) tokens (_set_cudagraph_sizes in
//     vllm/config/vllm.py at 09f030ea), and a prompt chunk of thousands of
//     tokens runs eagerly; at that size its kernels, not their launches,
//     set the time, so no fixed time per layer is charged (llama.cpp's
//     PrefillLayerLatency is a time of llama.cpp's passes).
//   - FP8 weights run FP8 GEMMs at the FP8 peak
//     (vllm/model_executor/layers/quantization/fp8.py at 1436674b:
//     cutlass/torch scaled_mm), and AWQ and GPTQ int4 weights run Marlin's
//     mixed-precision kernels (apply_awq_marlin_linear, awq_marlin.py at
//     2ab31a81) on 16-bit tensor cores, unpacking the weights in the tile:
//     no dequantized copy of the weights is written or read.

// servingPromptInputs are the plain numbers of one stage's prompt under a
// serving engine.
type servingPromptInputs struct {
	MatmulParams     float64 // weights a prompt token multiplies on the stage, all its devices together (MoE: the active ones)
	Attention        float64 // attention FLOPs of a prompt token on the stage (promptAttentionFLOPs)
	WeightBytes      float64 // weights a device of the stage reads per pass (MoE: all experts, a chunk of thousands of tokens routes to every one)
	Prompt           int     // prompt tokens
	Chunk            int     // the engine's most tokens per forward pass
	PeakTFLOPS       float64 // dense peak of the compute precision, slowest device
	TP               int
	MFU              float64 // fraction of PeakTFLOPS the GEMMs reach (calibration.Throughput.ServingPromptMFU)
	WeightGBs        float64 // rate a device streams its weights at
	AllReduces       int     // all-reduces per pass (ServingBlocks.Parts)
	AllReduceSeconds float64 // the serving engine's fixed time per all-reduce
	Hidden           float64 // the model's hidden size: an all-reduce carries 16-bit activations of this width per token
	LinkGBs          float64 // tensor-parallel link per direction
	// A MoE stage under the ninth rule of data/serving_prefill.json
	// (routedPass): the routed experts' share of MatmulParams and of
	// WeightBytes, the experts and how many a token routes to, and the
	// fraction of PeakTFLOPS their grouped GEMMs reach
	// (calibration.Throughput.ServingMoEPromptMFU; 0: no routed part).
	RoutedMatmulShare float64
	RoutedByteShare   float64
	Experts           int
	ExpertsPerToken   int
	MoEMFU            float64
}

// routed reports whether in's passes have a routed-expert part.
func (in servingPromptInputs) routed() bool {
	return in.MoEMFU > 0 && in.RoutedMatmulShare > 0 && in.Experts > 0 && in.ExpertsPerToken > 0
}

// touchedExperts is the expected share of E experts that T tokens, each
// routed to k of them, touch: 1 - (1 - k/E)^T, taking each token's choices
// as uniform and independent of the others' (an assumption: real routers
// are neither, and correlated routing touches fewer).
func touchedExperts(tokens float64, experts, perToken int) float64 {
	if experts <= 0 || perToken <= 0 || tokens <= 0 {
		return 0
	}
	if perToken >= experts {
		return 1
	}
	return 1 - math.Pow(1-float64(perToken)/float64(experts), tokens)
}

// passSeconds is one prompt pass of tokens tokens, its all-reduces aside:
// the longer of its matmuls at rate and a read of the stage's weights
// (stream seconds); for a MoE stage under the ninth rule, that for its
// dense part (its weights less the routed experts) plus, summed, the
// longer of the routed experts' matmuls at MoEMFU of the peak and a read
// of the experts the pass touches (touchedExperts). vLLM's fused_moe
// kernel sorts the pass's token-expert pairs by expert and pads each
// expert's rows to BLOCK_SIZE_M, its tiles chosen by the tokens against
// the experts (moe_align_block_size, get_default_config in
// vllm/model_executor/layers/fused_moe/fused_moe.py at ROCm/vllm
// f8c9a385): an expert's GEMM has about T·k/E rows, not a dense GEMM's T.
func (in servingPromptInputs) passSeconds(tokens, rate, stream float64) float64 {
	if !in.routed() {
		return math.Max(2*in.MatmulParams*tokens/rate, stream)
	}
	share, bytes := min(in.RoutedMatmulShare, 1), min(max(in.RoutedByteShare, 0), 1)
	dense := math.Max(2*in.MatmulParams*(1-share)*tokens/rate, stream*(1-bytes))
	moeRate := rate / in.MFU * in.MoEMFU
	expert := math.Max(2*in.MatmulParams*share*tokens/moeRate, stream*bytes*touchedExperts(tokens, in.Experts, in.ExpertsPerToken))
	return dense + expert
}

// servingPromptSeconds is the time per prompt token of a stage under a
// serving engine: the prompt in passes of up to Chunk tokens, each as long
// as its matmuls at MFU of the peak or a read of the stage's weights,
// whichever is longer, plus its all-reduces of the chunk's activations
// under tensor parallelism; and the prompt's attention FLOPs at the same
// rate as the matmuls. The request's fixed time (servingRequestSeconds) is
// added once per plan. MFU is calibration.Throughput.ServingPromptMFU,
// fitted with the request time on the SGLang fit rows of
// data/serving_prefill.json: the form, two constants, was set before the
// fit. A MoE stage's pass takes the ninth rule's form (passSeconds) only
// under a nonzero ServingMoEPromptMFU; the shipped constants leave it 0,
// the rule not adopted (docs/accuracy.md, "Serving prefill";
// TestServingMoEPromptRuleOutcome in internal/calibration/fit).
func servingPromptSeconds(in servingPromptInputs) float64 {
	if in.Prompt <= 0 || in.PeakTFLOPS <= 0 || in.MFU <= 0 || in.WeightGBs <= 0 {
		return math.Inf(1)
	}
	rate := in.PeakTFLOPS * 1e12 * float64(max(in.TP, 1)) * in.MFU
	chunk := in.Chunk
	if chunk <= 0 {
		chunk = in.Prompt
	}
	stream := in.WeightBytes / (in.WeightGBs * 1e9)
	var total float64
	for done := 0; done < in.Prompt; done += chunk {
		tokens := float64(min(chunk, in.Prompt-done))
		total += in.passSeconds(tokens, rate, stream)
		if in.TP > 1 {
			total += float64(in.AllReduces) * (in.AllReduceSeconds + ringAllReduceSeconds(in.TP, 2*in.Hidden*tokens, in.LinkGBs))
		}
	}
	total += in.Attention * float64(in.Prompt) / rate
	return total / float64(in.Prompt)
}

// servingRequestSeconds is the fixed time of one request spread over its
// prompt's tokens: the engine's requestSeconds (promptRequestSeconds) per
// request, charged once per plan (not per pipeline stage).
func servingRequestSeconds(requestSeconds float64, prompt int) float64 {
	if prompt <= 0 {
		return 0
	}
	return requestSeconds / float64(prompt)
}

// promptChunker is the serving engine en's prompt chunking, nil for an
// engine that runs a prompt whole. A serving plan always has an engine
// (servingDecode), the serving replays of the calibration theirs
// (NewServingReplay).
func promptChunker(en engine.Engine) engine.PromptChunker {
	c, _ := en.(engine.PromptChunker)
	return c
}

// promptRequestSeconds is the serving engine en's fixed time per request
// (engine.PromptRequestTimer: vLLM's and SGLang's each fitted on their own
// rows); none for an engine without one, as promptChunker gives no chunk.
func (e efficiency) promptRequestSeconds(en engine.Engine) float64 {
	t, ok := en.(engine.PromptRequestTimer)
	if !ok {
		return 0
	}
	return t.PromptRequestSeconds(calibration.Throughput(e))
}

// servingChunkTokens is the most prompt tokens one forward pass of the
// serving engine en runs on the devices devs (the smallest of theirs): its
// default chunk for the GPU's memory and name.
func servingChunkTokens(en engine.Engine, devs []*device) int {
	chunker := promptChunker(en)
	if chunker == nil {
		return 0
	}
	chunk := 0
	for _, d := range devs {
		mem := d.Dev.MemoryBytes
		if mem <= 0 && d.Spec != nil {
			mem = d.Spec.MemoryBytes
		}
		name := d.Dev.Name
		if name == "" && d.Spec != nil {
			name = d.Spec.Name
		}
		c := chunker.PromptChunk(mem, name)
		if chunk == 0 || c < chunk {
			chunk = c
		}
	}
	return chunk
}

// servingPrefillNote is the prefill assumption of a serving plan on engine
// en, in its words: its prompt chunk and the setting of it
// (engine.PromptChunker), its time per request (engine.PromptRequestTimer).
// An engine without a chunk runs the prompt in one pass
// (servingPromptSeconds), one without a request time pays none.
func servingPrefillNote(en engine.Engine, chunk int, mfu float64, precision string, allReduceSeconds, requestSeconds float64) string {
	name := "the engine"
	if en != nil {
		name = en.Title()
	}
	passes, of := "in one pass, as long as", "the prompt's"
	if c := promptChunker(en); c != nil && chunk > 0 {
		passes = fmt.Sprintf("in passes of up to %d tokens (its default %s for this GPU), each as long as", chunk, c.PromptChunkSetting())
		of = "the chunk's"
	}
	request, source := "", ""
	if _, ok := en.(engine.PromptRequestTimer); ok {
		request = fmt.Sprintf(", and %.0f ms per request", requestSeconds*1e3)
		source = ", the request time on " + name + "'s own rows"
	}
	return fmt.Sprintf("prefill: %s runs the prompt %s its matmuls at %.0f%% of the dense %s peak or one read of the weights, whichever is longer, plus attention at the same rate and %.0f us per all-reduce of %s activations under tensor parallelism%s (the efficiency fitted on %s%s, internal/calibration/data/serving_prefill.json); FP8 and int4 (Marlin) weights are not dequantized to a copy",
		name, passes, mfu*100, precision, allReduceSeconds*1e6, of, request, calibration.ServingPromptRows, source)
}

// servingPrefillNoteOf is servingPrefillNote for the first stage of pl.
func (e efficiency) servingPrefillNoteOf(pl *planned, req *planning, serving calibration.ServingDecode) string {
	devs := pl.Stages[0].Devices
	path := e.requestPrefillPath(devs, pl, req)
	en := planEngine(pl, req)
	return servingPrefillNote(en, servingChunkTokens(en, devs), e.ServingPromptMFU, path.Precision, serving.AllReduceSeconds, e.promptRequestSeconds(en))
}
