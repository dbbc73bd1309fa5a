package api

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	json "github.com/goccy/go-json"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/model"
)

// roomScanEngines are the engines whose concurrency (engine_expect) the
// scan compares with the fit: the CLI headlines it as "(N sequences of
// L)" beside the Room line's "up to M sequences at once"
// (max_batch_size). SGLang's plans are not yet compared: its pool
// (staticPool) and its fit differ by a few sequences on most fixtures,
// a cause not yet found.
var roomScanEngines = []string{"vllm"}

// roomScanOpenFixtures are fixture machines whose plans the scan leaves
// out, with why: their disagreements are not yet explained.
var roomScanOpenFixtures = map[string]string{
	"two-nvidia":                 "a pipeline over two unlike GPUs: the figure is the fewest over the stages, the fit's batch another rule; not yet compared",
	"a100-80gb-pcie-mig-2x3g":    "MIG slices: not yet compared",
	"a100-sxm4-80gb-x4-mig-gpu0": "MIG slices: not yet compared",
	"h200-mig-shared-gi":         "MIG slices: not yet compared",
	"nvidia-mig":                 "MIG slices: not yet compared",
	"mi300x-8-cpx":               "CPX partitions: not yet compared",
	"mi308x-8-cpx":               "CPX partitions: not yet compared",
}

// roomScanExceptions are the plans whose headline and room may differ
// by more than rounding, each with why.
var roomScanExceptions = map[string]string{
	"mi300x-4-sysfs/Falcon-180B/vllm":       "3 pipeline stages: engine_expect takes the fewest tokens over the stages, the fit's batch is bounded otherwise; open (535 against 517)",
	"mi300x-4-sysfs/DeepSeek-V4-Flash/vllm": "2 pipeline stages of a compressed-attention model: open (190 against 186)",
}

// TestHeadlineConcurrencyIsTheRoom plans every catalog model with each
// paged engine on every fixture machine with accelerators and checks that
// the concurrency the engine reports (engine_expect's max_concurrency,
// which the CLI's headline prints rounded down) is the batch the plan's
// fit holds (max_batch_size, the Room line) where both are stated: the
// two are one computation of the engine's layout (issue 25: Gemma-3-27B
// on Gaudi read 9 against 55, granite-4.0-h-small on dgx-h100 225
// against 218).
func TestHeadlineConcurrencyIsTheRoom(t *testing.T) {
	if testing.Short() {
		t.Skip("plans every catalog model on every fixture")
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	require.NoError(t, err)
	machines, err := os.ReadDir(filepath.Join(root, "testdata", "machines"))
	require.NoError(t, err)
	compared := 0
	var disagree []string
	for _, m := range machines {
		if !m.IsDir() || goldenSkip[m.Name()] || roomScanOpenFixtures[m.Name()] != "" {
			continue
		}
		reg := roomScanRegistry(t, root, m.Name())
		if reg == nil {
			continue
		}
		for _, e := range model.Catalog() {
			for _, engine := range roomScanEngines {
				key := fmt.Sprintf("%s/%s/%s", m.Name(), e.Name, engine)
				f, ok := roomScanFigures(t, reg, e.Name, engine)
				if !ok {
					continue
				}
				compared++
				if _, excepted := roomScanExceptions[key]; excepted || f.agree() {
					continue
				}
				headline, room := f.headline, f.room
				disagree = append(disagree, fmt.Sprintf("%s: headline %d, room %d", key, headline, room))
			}
		}
	}
	assert.Empty(t, disagree, "headline concurrency against the Room line:\n%s", strings.Join(disagree, "\n"))
	assert.Greater(t, compared, 500, "plans compared")
	t.Logf("%d plans compared", compared)
}

// roomScanRegistry is fixture machine name's detected registry, nil when
// it has no accelerator (a paged engine's pool is on accelerators only).
func roomScanRegistry(t *testing.T, root, name string) json.RawMessage {
	dir := filepath.Join(root, "testdata", "machines", name)
	opts := fmt.Sprintf(`{"sysroot":%q,"path":%q,"env":{},"cache_ttl_ms":0}`, filepath.Join(dir, "root"), filepath.Join(dir, "bin"))
	reg := Detect(context.Background(), []byte(opts), NoEnv)
	var r struct {
		Devices []struct {
			Kind string `json:"kind"`
		} `json:"devices"`
	}
	require.NoError(t, json.Unmarshal(reg, &r), "%s: %s", name, reg)
	for _, d := range r.Devices {
		if d.Kind != "cpu" {
			return reg
		}
	}
	return nil
}

// roomFigures are a plan's headline concurrency over all its replicas
// (engine_expect's max_concurrency, per replica, rounded down as
// internal/cli's roomWords prints it), its max_batch_size and its
// replicas.
type roomFigures struct {
	headline, room, dp int
}

// agree is whether the two figures are equal within rounding: the fit
// holds a whole sequence fewer per replica where vLLM's concurrency is a
// whole number or its charge rounds up (scaledKV), Qwen3-8B on the H20
// fixture reading 11.00x beside 10.
func (f roomFigures) agree() bool {
	return f.room <= f.headline && f.room >= f.headline-f.dp
}

// roomScanFigures is a plan's roomFigures, false where either figure is
// not stated.
func roomScanFigures(t *testing.T, reg json.RawMessage, name, engine string) (roomFigures, bool) {
	req := fmt.Sprintf(`{"model":{"name":%q},"engine":%q,"registry":%s}`, name, engine, reg)
	var a struct {
		MaxBatchSize int `json:"max_batch_size"`
		DPSize       int `json:"dp_size"`
		EngineExpect map[string]struct {
			MaxConcurrency float64 `json:"max_concurrency"`
		} `json:"engine_expect"`
	}
	out := PlanSharding(context.Background(), []byte(req), NoEnv)
	require.NoError(t, json.Unmarshal(out, &a), "%s %s: %s", name, engine, out)
	x, ok := a.EngineExpect[engine]
	headline := int(x.MaxConcurrency)
	if !ok || headline <= 1 || a.MaxBatchSize <= 0 {
		return roomFigures{}, false
	}
	// The headline is per replica ("KV room about ... per replica"), the
	// Room line of all of them.
	dp := max(a.DPSize, 1)
	return roomFigures{headline: headline * dp, room: a.MaxBatchSize, dp: dp}, true
}
