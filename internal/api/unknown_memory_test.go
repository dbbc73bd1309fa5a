package api

import (
	"context"
	"strings"
	"testing"

	json "github.com/goccy/go-json"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/plan"
)

// On a machine whose devices are available but report no memory size (an
// RX 7900 XT from amdgpu sysfs without mem_info_vram_*, a Graviton3 whose
// capture has no /proc/meminfo) every answer was "no available device with
// known memory", which reads as if the machine had none. It names the
// available devices whose memory is unknown, and why, in plan, suggest and
// train alike.
func TestNoDeviceRefusalNamesDevicesWithUnknownMemory(t *testing.T) {
	for _, c := range []struct {
		machine string
		want    []string
	}{
		{"rx7900xt-amdgpu-sysfs", []string{"available but their memory is unknown: ", "rocm:0 (AMD Navi 31", "no memory size was detected", "cpu:0 (host RAM: /proc/meminfo was not readable)"}},
		{"graviton3-c7g", []string{"available but their memory is unknown: cpu:0 (host RAM: /proc/meminfo was not readable)"}},
	} {
		detect := fixtureDetect(t, c.machine)
		for name, call := range map[string]func(context.Context, []byte, Env) []byte{
			"plan": PlanSharding, "suggest": SuggestQuant, "train": EstimateTraining,
		} {
			var a struct {
				Refusal *struct {
					Code string `json:"code"`
					Text string `json:"text"`
				} `json:"refusal"`
			}
			out := call(context.Background(), []byte(`{"model":{"name":"Qwen2.5-7B"},"training":{"method":"lora"},"detect":`+detect+`}`), NoEnv)
			if name != "train" {
				out = call(context.Background(), []byte(`{"model":{"name":"Qwen2.5-7B"},"detect":`+detect+`}`), NoEnv)
			}
			require.NoError(t, json.Unmarshal(out, &a), "%s", out)
			require.NotNil(t, a.Refusal, "%s %s: %s", c.machine, name, out)
			assert.Equal(t, "no_device", a.Refusal.Code, "%s %s", c.machine, name)
			for _, w := range c.want {
				assert.Contains(t, a.Refusal.Text, w, "%s %s", c.machine, name)
			}
		}
	}
}

// A plan or suggest answer with no device said "does not fit" twice, once
// with an empty "(requested devices: )" when no devices were requested.
// It says it once; the devices, when requested, are named.
func TestNoDeviceExplanationSaysDoesNotFitOnce(t *testing.T) {
	detect := fixtureDetect(t, "graviton3-c7g")
	for name, call := range map[string]func(context.Context, []byte, Env) []byte{"plan": PlanSharding, "suggest": SuggestQuant} {
		var a struct {
			Explanation []string `json:"explanation"`
		}
		out := call(context.Background(), []byte(`{"model":{"name":"Qwen2.5-7B"},"detect":`+detect+`}`), NoEnv)
		require.NoError(t, json.Unmarshal(out, &a), "%s", out)
		n := 0
		for _, l := range a.Explanation {
			if strings.HasPrefix(l, "does not fit:") {
				n++
			}
			assert.NotContains(t, l, "requested devices: )", name)
		}
		assert.Equal(t, 1, n, "%s: %q", name, a.Explanation)
	}
}

// Where no available device's memory is known the answer's fits is null
// (unknown, not no), but every row of its levels said "fits": false with
// the reason "no available device": a no, and untrue of a machine whose
// RX 7900 XT and CPU are available with their memory unknown. The rows say
// fits null, as the answer does, and the refusal's reason.
func TestUnknownFitLevelsSayUnknown(t *testing.T) {
	detect := fixtureDetect(t, "rx7900xt-amdgpu-sysfs")
	for name, call := range map[string]func(context.Context, []byte, Env) []byte{"plan": PlanSharding, "suggest": SuggestQuant} {
		var a struct {
			Fits   *bool `json:"fits"`
			Levels []struct {
				Quant  string `json:"quant"`
				Fits   *bool  `json:"fits"`
				Reason string `json:"reason"`
			} `json:"levels"`
		}
		out := call(context.Background(), []byte(`{"model":{"name":"Qwen2.5-7B"},"detect":`+detect+`}`), NoEnv)
		require.NoError(t, json.Unmarshal(out, &a), "%s", out)
		require.Nil(t, a.Fits, "%s: %s", name, out)
		require.NotEmpty(t, a.Levels, name)
		for _, l := range a.Levels {
			assert.Nil(t, l.Fits, "%s %s: %s", name, l.Quant, out)
			assert.Equal(t, "no available device with known memory", l.Reason, "%s %s", name, l.Quant)
		}
	}
}

// fits null was written over the encoded answer (a byte rewrite of
// "fits":false in internal/api), so the typed answer said false: a no to
// the Go callers of the planner (the fit table, rent) and in its own
// encoding. The typed answer says unknown, on the answer and on every
// levels row, and its own encoding is the export's answer.
func TestUnknownFitIsTheTypedAnswers(t *testing.T) {
	for _, machine := range []string{"rx7900xt-amdgpu-sysfs", "graviton3-c7g"} {
		detect := fixtureDetect(t, machine)
		serve := `{"model":{"name":"Qwen2.5-7B"},"detect":` + detect + `}`
		train := `{"model":{"name":"Qwen2.5-7B"},"training":{"method":"lora"},"detect":` + detect + `}`

		p, err := plan.PlanSharding(typedRequest(t, serve))
		require.NoError(t, err, machine)
		assert.Equal(t, plan.FitUnknown, p.Fits, machine)
		assertLevelsUnknown(t, machine+" plan", p.Levels)
		assertEncodesAsExport(t, p, PlanSharding, serve)

		s, err := plan.SuggestQuant(typedRequest(t, serve))
		require.NoError(t, err, machine)
		assert.Equal(t, plan.FitUnknown, s.Fits, machine)
		assertLevelsUnknown(t, machine+" suggest", s.Levels)
		assertEncodesAsExport(t, s, SuggestQuant, serve)

		tr, err := plan.EstimateTraining(typedRequest(t, train))
		require.NoError(t, err, machine)
		assert.Equal(t, plan.FitUnknown, tr.Fits, machine)
		assertEncodesAsExport(t, tr, EstimateTraining, train)
	}
}

// typedRequest is body as the exports hand it to the planner.
func typedRequest(t *testing.T, body string) *plan.Request {
	t.Helper()
	req, err := planRequest(context.Background(), []byte(body), NoEnv)
	require.NoError(t, err, body)
	return req
}

func assertLevelsUnknown(t *testing.T, what string, levels []plan.LevelRow) {
	t.Helper()
	require.NotEmpty(t, levels, what)
	for _, l := range levels {
		assert.Equal(t, plan.FitUnknown, l.Fits, "%s %s", what, l.Quant)
	}
}

// assertEncodesAsExport: the typed answer v, encoded, is what export
// answers for body.
func assertEncodesAsExport(t *testing.T, v any, export func(context.Context, []byte, Env) []byte, body string) {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	assert.JSONEq(t, string(export(context.Background(), []byte(body), NoEnv)), string(b))
}

// A fit row whose plan estimates no decode speed (a Strix Halo, whose
// memory bandwidth the datasheet table lacks) said validated_on "not
// validated: no decode speed is estimated (the assumptions say why)", and a
// fit row carries no assumptions. It says why itself, from the plan's
// "decode omitted:" assumption.
func TestFitRowSaysWhyNoSpeed(t *testing.T) {
	detect := fixtureDetect(t, "strix-halo-128gb")
	var a struct {
		Models []struct {
			Model       string  `json:"model"`
			Fits        *bool   `json:"fits"`
			TokensPerS  float64 `json:"decode_tokens_per_s"`
			ValidatedOn string  `json:"validated_on"`
		} `json:"models"`
	}
	out := Fit(context.Background(), []byte(`{"filter":"Qwen3-8B","detect":`+detect+`}`), NoEnv)
	require.NoError(t, json.Unmarshal(out, &a), "%s", out)
	require.NotEmpty(t, a.Models, "%s", out)
	for _, m := range a.Models {
		require.NotNil(t, m.Fits, m.Model)
		require.True(t, *m.Fits, m.Model)
		require.Zero(t, m.TokensPerS, m.Model)
		assert.NotContains(t, m.ValidatedOn, "the assumptions say why", m.Model)
		assert.Contains(t, m.ValidatedOn, "memory bandwidth unknown for rocm:0", m.Model)
	}
}
