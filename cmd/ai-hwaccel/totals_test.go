package main

import (
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/cli"
)

// printedFigures maps each memory quantity a plan's text names to every
// value printed for it: "plan total" (the Memory line, and a levels column
// headed TOTAL), "<quant> on one device" (a levels row under ON ONE DEVICE,
// the explanation's "<quant> fits (strategy ...; N GiB as on one device)" and, for
// the chosen level, "N GiB does not fit on one device", "the model needs N
// GiB" and the Memory line of a plan on one device).
func printedFigures(t *testing.T, text string) map[string]map[string]bool {
	t.Helper()
	got := map[string]map[string]bool{}
	add := func(what, value string) {
		if got[what] == nil {
			got[what] = map[string]bool{}
		}
		got[what][value] = true
	}
	memory := regexp.MustCompile(`(?m)^Memory \(([a-z0-9_]+)(, [0-9]+ devices)?\): ([0-9.]+ GiB) = `).FindStringSubmatch(text)
	require.NotNil(t, memory, "a Memory line in\n%s", text)
	chosen := memory[1]
	add("plan total", memory[3])
	if memory[2] == "" {
		// A plan on one device: its total is its level's need on one device.
		add(chosen+" on one device", memory[3])
	}
	for _, m := range regexp.MustCompile(`(?m)^  - none: the model needs ([0-9.]+ GiB) and fits on `).FindAllStringSubmatch(text, -1) {
		add(chosen+" on one device", m[1])
	}

	_, table, ok := strings.Cut(text, "\nLevels:\n")
	require.True(t, ok, "a levels table in\n%s", text)
	table, _, _ = strings.Cut(table, "\nExplanation:")
	lines := strings.Split(table, "\n")
	header := regexp.MustCompile(`^  QUANT  (.+?)  +FITS`).FindStringSubmatch(lines[0])
	require.NotNil(t, header, "the levels header %q", lines[0])
	row := regexp.MustCompile(`^  ([a-z0-9]+) +([0-9.]+ GiB) `)
	for _, l := range lines[1:] {
		m := row.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		switch header[1] {
		case "TOTAL":
			add(m[1]+" total", m[2])
			if m[1] == chosen {
				add("plan total", m[2])
			}
		case "ON ONE DEVICE":
			add(m[1]+" on one device", m[2])
		default:
			t.Fatalf("levels column %q names no quantity this test knows", header[1])
		}
	}
	for _, m := range regexp.MustCompile(`(?m)^  - ([a-z0-9]+) fits (?:on one device )?\(strategy [a-z_]+; ([0-9.]+ GiB)(?: as on one device)?\)$`).FindAllStringSubmatch(text, -1) {
		add(m[1]+" on one device", m[2])
	}
	for _, m := range regexp.MustCompile(`(?m)^  - [a-z_]+: ([0-9.]+ GiB) does not fit on one device`).FindAllStringSubmatch(text, -1) {
		add(chosen+" on one device", m[1])
	}
	return got
}

// A plan's text never prints one quantity twice with different values
// (issue 24: the Memory line and the levels table said 135.0 and 133.8 GiB
// under the same name "total"): the plan's total is the Memory line, summed
// over every device the plan uses, and a levels row is the level's need as
// on one device, headed so. Each printed figure is the JSON answer's.
func TestPlanPrintsEachQuantityOnce(t *testing.T) {
	for _, args := range [][]string{
		{"--model", "70b"},                      // tensor parallel 2: the two figures differ
		{"--model", "70b", "--replicas", "2"},   // data parallel: one replica's row
		{"--model", "8b"},                       // one device
		{"--model", "405b", "--context", "32k"}, // most of the machine
		// llama.cpp keeps the token embedding in host memory: the row
		// counts what the device holds, as the Memory line does.
		{"--model", "Llama-3.1-8B", "--quant", "q4_k_m", "--context", "128k", "--engine", "llama.cpp"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			r := runCLI(t, withFixture(t, "dgx-h100", append([]string{"plan"}, args...)...)...)
			require.Equal(t, 0, r.code, r.stderr)
			for what, values := range printedFigures(t, r.stdout) {
				assert.Len(t, values, 1, "%s printed as %v in\n%s", what, values, r.stdout)
			}

			answer, _ := runJSON(t, withFixture(t, "dgx-h100", append([]string{"plan", "--json"}, args...)...)...)
			figures := printedFigures(t, r.stdout)
			total := int64(answer["memory"].(map[string]any)["total_bytes"].(float64))
			assert.Equal(t, map[string]bool{cli.GiB(total): true}, figures["plan total"], "the Memory line is memory.total_bytes")
			for _, l := range answer["levels"].([]any) {
				row := l.(map[string]any)
				q := row["quant"].(string)
				want := cli.GiB(int64(row["total_bytes"].(float64)))
				assert.Equal(t, map[string]bool{want: true}, figures[q+" on one device"], "the %s row is levels[].total_bytes", q)
			}
		})
	}
}
