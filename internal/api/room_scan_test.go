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
// (max_batch_size). For SGLang both are what its pool holds
// (max_total_num_tokens over the context: maxFitting's poolsHold); before,
// the room was the batch the plan's budget held with the workspace
// counted inside SGLang's fraction, Gemma-3-1B on slimbook 2 against 8.
var roomScanEngines = []string{"vllm", "sglang"}

// TestHeadlineConcurrencyIsTheRoom plans every catalog model with vLLM and
// SGLang on every fixture machine with accelerators and checks that the
// concurrency the engine will report (engine_expect's max_concurrency, which the CLI's
// headline prints rounded down) is the batch the plan's fit holds
// (max_batch_size, the Room line), within rounding, where both are
// stated: the two are one computation of vLLM's cache layout
// (vllmCharge.layoutKVScale). Before it, Gemma-3-27B on gaudi2-8 read 9
// against 55 and granite-4.0-h-small on dgx-h100 225 against 218.
//
// Plans of several pipeline stages are compared too: their room is the
// batch the printed split holds (maxFitting keeps the split for the
// batch), each stage charged what it holds (maxLayers: the embedding on
// the first stage only, the head on the last) and a hybrid or
// sliding-window model's stage its own cache layout (stageKV), as
// engine_expect counts it. Before, Llama-3.1-70B on mi300x-8-cpx read 4
// sequences against a room of 1, and DeepSeek-V4-Flash on mi300x-8-cpx 72
// against 111 (the room of another split).
func TestHeadlineConcurrencyIsTheRoom(t *testing.T) {
	if testing.Short() {
		t.Skip("plans every catalog model on every fixture")
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	require.NoError(t, err)
	machines, err := os.ReadDir(filepath.Join(root, "testdata", "machines"))
	require.NoError(t, err)
	compared, pipelines := 0, 0
	var disagree []string
	for _, m := range machines {
		if !m.IsDir() || goldenSkip[m.Name()] {
			continue
		}
		reg := roomScanRegistry(t, root, m.Name())
		if reg == nil {
			continue
		}
		for _, e := range model.Catalog() {
			for _, engine := range roomScanEngines {
				f, ok := roomScanFigures(t, reg, e.Name, engine)
				if !ok {
					continue
				}
				if f.pp > 1 {
					pipelines++
				}
				compared++
				if !f.agree() {
					disagree = append(disagree, fmt.Sprintf("%s/%s/%s: headline %d, room %d", m.Name(), e.Name, engine, f.headline, f.room))
				}
			}
		}
	}
	assert.Empty(t, disagree, "headline concurrency against the Room line:\n%s", strings.Join(disagree, "\n"))
	assert.Greater(t, compared, 1500, "plans compared")
	assert.Greater(t, pipelines, 100, "pipeline plans compared")
	t.Logf("%d plans compared, %d of them of several pipeline stages", compared, pipelines)
}

// roomScanRegistry is fixture machine name's detected registry, nil when
// it has no accelerator (vLLM's plans on a CPU beside one, such as
// thinkpad-p16s-krackan's, are compared too: engine_expect's CPU pool).
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
// internal/cli's roomWords prints it), its max_batch_size, its replicas
// and pipeline stages.
type roomFigures struct {
	headline, room, dp, pp int
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
		PPSize       int `json:"pp_size"`
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
	return roomFigures{headline: headline * dp, room: a.MaxBatchSize, dp: dp, pp: a.PPSize}, true
}
