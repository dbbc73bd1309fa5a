package main

import (
	"fmt"
	"strings"

	"github.com/ai-hwaccel/ai-hwaccel/internal/plan"
)

// todayFloatRow is one row of data/decode_today_microbatch.json: a batch-1
// decode rate on a GDDR NVIDIA GPU with today's llama.cpp CUDA build,
// measured as llama-bench's pp512 at a micro-batch of one token: 16-bit
// weights (held out) and a Q4_0 row that checks the method (use
// useMethodCheck).
type todayFloatRow struct {
	SourceDevice      string  `json:"source_device"`
	Hardware          string  `json:"hardware"`
	ComputeCapability string  `json:"compute_capability"`
	Model             string  `json:"model"`
	Quant             string  `json:"quant"`
	Build             string  `json:"build"`
	TokensPerS        float64 `json:"tokens_per_s"`
	Use               string  `json:"use"`
	Verbatim          string  `json:"verbatim"`
	Source            string  `json:"source"`
}

// todayFloatContext is the average context of a pp512 run one token per
// step from an empty cache (0 to 511 tokens).
const todayFloatContext = 256

// useMethodCheck marks a row of data/decode_today_microbatch.json that
// checks how the rows are replayed (a type whose constants of today's
// build are fitted on tg128 rows), not the constants.
const useMethodCheck = "method_check"

// loadTodayFloat replays every row of data/decode_today_microbatch.json: its
// catalog model at its level on one GPU of its record, at the compute
// capability the row names, decoding at todayFloatContext tokens without
// reading the output head (plan.Replay.WithoutOutputHead).
func loadTodayFloat(dataDir string) ([]speedCase, error) {
	rows, err := readRows[todayFloatRow](dataDir, "decode_today_microbatch.json")
	if err != nil {
		return nil, err
	}
	var cases []speedCase
	for _, r := range rows {
		name := r.SourceDevice + " / " + r.Model + " / " + r.Quant
		if !strings.HasPrefix(r.Source, "https://") || r.Verbatim == "" || r.TokensPerS <= 0 {
			return nil, fmt.Errorf("decode_today_microbatch.json: %s: needs an https source, its verbatim line and a speed", name)
		}
		if r.Use != useHeldOut && r.Use != useMethodCheck {
			return nil, fmt.Errorf("decode_today_microbatch.json: %s: use %q is neither held_out nor method_check", name, r.Use)
		}
		s, m, l, err := resolveRowOn("decode_today_microbatch.json", name, r.Hardware, r.Model, r.Quant)
		if err != nil {
			return nil, err
		}
		rp := plan.NewReplay(speedRowsEngine, m, l, s, 1, 0, todayFloatContext).WithComputeCapability(r.ComputeCapability).WithoutOutputHead()
		cases = append(cases, speedCase{
			row:    speedRow{Hardware: r.Hardware, DeviceCount: 1, Model: r.Model, Quant: r.Quant, TG: r.TokensPerS, Source: r.Source},
			replay: rp, class: rp.MemoryClass(), family: rp.WeightFamily(),
			arch: decodeArchOf(r.ComputeCapability), use: r.Use, label: r.Build,
		})
	}
	return cases, nil
}
