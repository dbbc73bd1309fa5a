// The level choice of a CPU-only llama.cpp plan weighs decode speed as
// well as fit (docs/inference-servers.md, "On a CPU, `auto` weighs decode
// speed as well as fit").

package plan

import (
	"fmt"
	"slices"

	"github.com/ai-hwaccel/ai-hwaccel/internal/engine"
	"github.com/ai-hwaccel/ai-hwaccel/internal/quant"
	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// cpuSpeedFraction is the share of the fastest fitting level's decode
// speed a higher-quality level must keep to be chosen on a CPU. A CPU
// decodes several times slower than a GPU and, memory-bound, in proportion
// to the bytes per weight: bf16 at about a third of q4_k_m's speed. On
// Llama-3-8B q4_k_m's mean KL divergence to FP16 is 0.028 and q8_0's
// 0.0014 (llama.cpp's perplexity scoreboard, internal/engine/llamacpp.go):
// small losses for 2-3x the speed, while a level within a quarter of the
// fastest costs little speed for its quality. 3/4 is that line: a choice
// of this package, not a fitted figure.
const cpuSpeedFraction = 0.75

// chooseBySpeed picks the plan of a fitting level. fits are the best plans
// of the levels that fit, best quality first, levels the levels tried in
// that order. Where fits[0] is a CPU-only llama.cpp plan under quant auto,
// it returns the highest-quality fitting level, down to q4_k_m, whose
// empty-cache decode is at least cpuSpeedFraction of the fastest such
// level's, and a line saying so; elsewhere fits[0] and "".
func chooseBySpeed(req *planning, levels []quant.Level, fits []*planned) (*planned, string) {
	first := fits[0]
	if len(levels) < 2 || !cpuLlamaCPP(first, req) {
		return first, ""
	}
	cands := speedCandidates(levels, fits)
	if len(cands) < 2 {
		return first, ""
	}
	speeds := make([]float64, len(cands))
	fastest := 0
	for i, pl := range cands {
		if !cpuLlamaCPP(pl, req) {
			return first, ""
		}
		speeds[i] = emptyCacheDecode(pl, req)
		if speeds[i] <= 0 {
			return first, "speed not weighed: no decode speed is known for " + unknownBandwidth(pl) + ", so auto keeps the highest-quality level that fits"
		}
		if speeds[i] > speeds[fastest] {
			fastest = i
		}
	}
	pick := firstNearFastest(speeds, fastest)
	rule := fmt.Sprintf("on a CPU auto takes the highest-quality level, down to %s, whose decode is at least %.0f%% of the fastest fitting level's (empty cache, the speed model's figures)",
		quant.INT4.LlamaCPPLevel(), cpuSpeedFraction*100)
	if pick == 0 {
		if fastest == 0 {
			return first, fmt.Sprintf("speed: %s is also the fastest fitting level on this CPU (%.1f tokens/s); %s", first.Level, speeds[0], rule)
		}
		return first, fmt.Sprintf("speed: %s kept: %.0f%% of the decode speed of %s, the fastest fitting level, on this CPU (%.1f against %.1f tokens/s); %s",
			first.Level, 100*speeds[0]/speeds[fastest], cands[fastest].Level, speeds[0], speeds[fastest], rule)
	}
	return cands[pick], fmt.Sprintf("speed: %s: %.1fx the decode speed of %s on this CPU (%.1f against %.1f tokens/s), so auto takes it over %s, which fits; %s",
		cands[pick].Level, speeds[pick]/speeds[0], first.Level, speeds[pick], speeds[0], first.Level, rule)
}

// cpuLlamaCPP reports whether pl is a plan of llama.cpp (the engine whose
// CPU backend the per-core rates are fitted on, engine.SpeedKernels) on
// one CPU device of host RAM: not offloaded, not replicated.
func cpuLlamaCPP(pl *planned, req *planning) bool {
	if pl.Pool == nil || pl.Pool.Kind != registry.KindCPU || pl.Offloaded || pl.DP > 1 || len(pl.Stages) != 1 || len(pl.Stages[0].Devices) != 1 {
		return false
	}
	e := planEngine(pl, req)
	return engine.SpeedModelOf(e) == engine.SpeedKernels
}

// speedCandidates are the fitting plans the speed rule weighs: those of
// levels no worse than q4_k_m (int4 for llama.cpp); the ladder's lower
// rungs lose much more quality (mean KL divergence 0.08 and up on
// Llama-3-8B) and are planned only when nothing better fits.
func speedCandidates(levels []quant.Level, fits []*planned) []*planned {
	floor := len(levels) - 1
	for i, l := range levels {
		if l == quant.INT4 || l == quant.INT4.LlamaCPPLevel() {
			floor = i
			break
		}
	}
	var out []*planned
	for _, pl := range fits {
		if i := slices.Index(levels, pl.Level); i >= 0 && i <= floor {
			out = append(out, pl)
		}
	}
	return out
}

// emptyCacheDecode is a plan's decode tokens/s with an empty KV cache
// (llama-bench's tg128, what the calibration rows measure): the weights'
// share of decode, which the level changes; 0 when it cannot be estimated.
// The plan's own figure reads the cache at full context, which every
// level of a choice reads alike.
func emptyCacheDecode(pl *planned, req *planning) float64 {
	cp := *pl
	cp.Stages = slices.Clone(pl.Stages)
	for i := range cp.Stages {
		cp.Stages[i].Part.KV = 0
	}
	cp.Replicas = nil
	return estimateNoted(&cp, req, 0, fitted, false).DecodeTokensPerS
}

// offloadBySpeed is chooseBySpeed's rule for cpu_offload plans under quant
// auto: the part of the model in host RAM is read at host (or PCIe)
// bandwidth every token, as on a CPU, so the highest level that fits
// offloaded can decode several times slower than a smaller one that keeps
// more on the GPU (Qwen3-30B-A3B on an 8 GiB GPU: bf16 with 51 GiB of
// experts in host RAM at about a quarter of q4_k_m's speed, by the plans'
// own figures). fits are the offload plans of the levels that fit, best
// quality first. It returns the highest-quality one, down to q4_k_m (int4),
// whose empty-cache decode is at least cpuSpeedFraction of the fastest
// such plan's, with a line saying so; ok is false, with a line saying why
// where one is due, when the plans' speeds are not all known or fewer than
// two levels are weighed (planOffloadLevels' layer rule decides then).
func offloadBySpeed(req *planning, levels []quant.Level, fits []*planned) (*planned, string, bool) {
	if len(levels) < 2 {
		return nil, "", false
	}
	cands := speedCandidates(levels, fits)
	if len(cands) < 2 {
		return nil, "", false
	}
	speeds := make([]float64, len(cands))
	fastest := 0
	for i, pl := range cands {
		speeds[i] = emptyCacheDecode(pl, req)
		if speeds[i] <= 0 {
			return nil, "speed not weighed: no decode speed is estimated for the cpu_offload plans (the throughput says why), so auto keeps the highest-quality level that keeps at least half of the layers on the accelerators (a MoE model: the first level whose experts split between them and host RAM)", false
		}
		if speeds[i] > speeds[fastest] {
			fastest = i
		}
	}
	pick := firstNearFastest(speeds, fastest)
	rule := fmt.Sprintf("with cpu_offload auto takes the highest-quality level, down to %s (%s in GGUF), whose decode is at least %.0f%% of the fastest fitting level's (empty cache, the speed model's figures), as on a CPU: what stays in host RAM is read at host or PCIe bandwidth every token",
		quant.INT4, quant.INT4.LlamaCPPLevel(), cpuSpeedFraction*100)
	if pick == 0 {
		if fastest == 0 {
			return cands[0], fmt.Sprintf("speed: %s is also the fastest level with cpu_offload (%.1f tokens/s); %s", cands[0].Level, speeds[0], rule), true
		}
		return cands[0], fmt.Sprintf("speed: %s kept: %.0f%% of the decode speed of %s, the fastest level with cpu_offload (%.1f against %.1f tokens/s); %s",
			cands[0].Level, 100*speeds[0]/speeds[fastest], cands[fastest].Level, speeds[0], speeds[fastest], rule), true
	}
	return cands[pick], fmt.Sprintf("speed: %s: %.1fx the decode speed of %s with cpu_offload (%.1f against %.1f tokens/s), so auto takes it over %s, which fits offloaded; %s",
		cands[pick].Level, speeds[pick]/speeds[0], cands[0].Level, speeds[pick], speeds[0], cands[0].Level, rule), true
}

// firstNearFastest is the index of the first (highest-quality) speed at
// least cpuSpeedFraction of speeds[fastest]: the level chooseBySpeed and
// offloadBySpeed take.
func firstNearFastest(speeds []float64, fastest int) int {
	for i, v := range speeds {
		if v >= cpuSpeedFraction*speeds[fastest] {
			return i
		}
	}
	return 0
}
