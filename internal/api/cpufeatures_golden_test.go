package api

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	json "github.com/goccy/go-json"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// TestGoldenCPUFeaturesAreTheCapturedFlags reads each fixture's
// /proc/cpuinfo by hand (the first "flags" or "Features" line, the
// vocabulary's part of it) and finds exactly those features on the CPU
// device of its golden registry: no flag of a capture is lost or added on
// the way to the answer, and a capture without the line has none.
func TestGoldenCPUFeaturesAreTheCapturedFlags(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	require.NoError(t, err)
	machines, err := os.ReadDir(filepath.Join(root, "testdata", "machines"))
	require.NoError(t, err)
	checked := 0
	for _, m := range machines {
		cpuinfo, err := os.ReadFile(filepath.Join(root, "testdata", "machines", m.Name(), "root", "proc", "cpuinfo"))
		if err != nil || goldenSkip[m.Name()] {
			continue
		}
		t.Run(m.Name(), func(t *testing.T) {
			var want []string
			for _, line := range strings.Split(string(cpuinfo), "\n") {
				key, val, ok := strings.Cut(line, ":")
				if k := strings.TrimSpace(key); ok && (k == "flags" || k == "Features") {
					for _, f := range strings.Fields(val) {
						if registry.CPUFeature(f).Valid() {
							want = append(want, f)
						}
					}
					break
				}
			}
			golden, err := os.ReadFile(filepath.Join(root, "testdata", "golden", m.Name()+".json"))
			require.NoError(t, err)
			var answers struct {
				Detect struct {
					Devices []struct {
						Kind        string   `json:"kind"`
						CPUFeatures []string `json:"cpu_features"`
					} `json:"devices"`
				} `json:"detect"`
			}
			require.NoError(t, json.Unmarshal(golden, &answers))
			var got []string
			cpus := 0
			for _, d := range answers.Detect.Devices {
				if d.Kind == string(registry.KindCPU) {
					got = d.CPUFeatures
					cpus++
				}
			}
			require.Equal(t, 1, cpus)
			assert.ElementsMatch(t, want, got)
		})
		checked++
	}
	assert.GreaterOrEqual(t, checked, 9, "fixtures with a /proc/cpuinfo")
}
