package main

import (
	"fmt"
	"strings"

	"github.com/ai-hwaccel/ai-hwaccel/internal/plan"
)

// appleTodayRow is one row of data/apple_today.json: a llama-bench run of a
// llama.cpp Metal build newer than the fit set's (May 2024) on an Apple
// GPU.
type appleTodayRow struct {
	Hardware string   `json:"hardware"`
	GPUCores int      `json:"gpu_cores"`
	Model    string   `json:"model"`
	Quant    string   `json:"quant"`
	Build    string   `json:"build"`
	Date     string   `json:"date"`
	PP       float64  `json:"pp_tokens_per_s"`
	TG       float64  `json:"tg_tokens_per_s"`
	Verbatim []string `json:"verbatim"`
	Source   string   `json:"source"`
}

// name is how errors name row r.
func (r appleTodayRow) name() string { return r.Hardware + " / " + r.Model + " / " + r.Quant }

// readAppleToday reads the rows of data/apple_today.json, each with an
// https source, the lines it was copied from and a speed.
func readAppleToday(dataDir string) ([]appleTodayRow, error) {
	rows, err := readRows[appleTodayRow](dataDir, "apple_today.json")
	if err != nil {
		return nil, err
	}
	for _, r := range rows {
		if !strings.HasPrefix(r.Source, "https://") || len(r.Verbatim) == 0 || r.PP <= 0 && r.TG <= 0 {
			return nil, fmt.Errorf("apple_today.json: %s: needs an https source, its verbatim lines and a speed", r.name())
		}
	}
	return rows, nil
}

// loadAppleTodayDecode replays the decode (tg128, from an empty cache: the
// average context is 64 tokens) of every row of data/apple_today.json with
// a tg128 figure, on its chip's record. Every row is held out: none fits a
// constant (the file's _comment says why).
func loadAppleTodayDecode(dataDir string) ([]speedCase, error) {
	rows, err := readAppleToday(dataDir)
	if err != nil {
		return nil, err
	}
	var cases []speedCase
	for _, r := range rows {
		if r.TG <= 0 {
			continue
		}
		rp, err := appleTodayReplay(r, 0)
		if err != nil {
			return nil, err
		}
		cases = append(cases, speedCase{
			row:    speedRow{Hardware: r.Hardware, DeviceCount: 1, Model: r.Model, Quant: r.Quant, Gen: 128, TG: r.TG, Source: r.Source},
			replay: rp, class: rp.MemoryClass(), family: rp.WeightFamily(),
			use: useHeldOut, label: r.Build,
		})
	}
	return cases, nil
}

// appleTodayReplay is row r's run on its chip's record, with a prompt of
// prompt tokens (0: decode only) and decode at the 64-token average
// context of tg128 from an empty cache.
func appleTodayReplay(r appleTodayRow, prompt int) (*plan.Replay, error) {
	s, m, l, err := resolveRowOn("apple_today.json", r.name(), r.Hardware, r.Model, r.Quant)
	if err != nil {
		return nil, err
	}
	return plan.NewReplay(speedRowsEngine, m, l, s, 1, prompt, 64), nil
}
