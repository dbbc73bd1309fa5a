package api

import (
	"context"
	"strings"
	"testing"

	json "github.com/goccy/go-json"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/catalogq"
	"github.com/ai-hwaccel/ai-hwaccel/internal/errs"
	"github.com/ai-hwaccel/ai-hwaccel/internal/model"
	"github.com/ai-hwaccel/ai-hwaccel/internal/plan"
)

func TestModelsListsAndFiltersTheCatalog(t *testing.T) {
	var all, llama, q4 catalogq.ModelsAnswer
	for _, in := range []string{"", "null", "{}"} {
		require.NoError(t, json.Unmarshal(Models(context.Background(), []byte(in), NoEnv), &all), in)
		assert.Len(t, all.Models, len(model.Catalog()), in)
	}
	require.NoError(t, json.Unmarshal(Models(context.Background(), nil, NoEnv), &all))
	assert.Len(t, all.Models, len(model.Catalog()))

	require.NoError(t, json.Unmarshal(Models(context.Background(), []byte(`{"filter":"LLAMA-3.1"}`), NoEnv), &llama))
	require.NotEmpty(t, llama.Models)
	for _, m := range llama.Models {
		assert.Contains(t, strings.ToLower(m.Name+m.HFID), "llama-3.1")
		assert.NotEmpty(t, m.Source)
	}
	require.NoError(t, json.Unmarshal(Models(context.Background(), []byte(`{"quant":"Q4_K_M"}`), NoEnv), &q4))
	// Every model with a published Q4_K_M GGUF, and only those.
	var q4Names []string
	for _, m := range q4.Models {
		q4Names = append(q4Names, m.Name)
		var has bool
		for _, ck := range m.Checkpoints {
			has = has || ck.Quant == "q4_k_m"
		}
		assert.True(t, has, m.Name)
	}
	assert.Subset(t, q4Names, []string{"Llama-3.3-70B-Instruct", "Qwen3-8B", "Qwen3-32B"})

	assert.JSONEq(t, `{"models":[]}`, string(Models(context.Background(), []byte(`{"filter":"no-such-family"}`), NoEnv)))
	for in, code := range map[string]string{
		`{"quant":"q9_z"}`: errs.InvalidArgument, `{"filtr":"x"}`: errs.InvalidArgument, `{`: errs.InvalidJSON, `[]`: errs.InvalidArgument,
	} {
		assert.Equal(t, code, errorCode(t, Models(context.Background(), []byte(in), NoEnv)), in)
	}
}

// TestFitPlansEachModelAsPlanShardingDoes: a row says what
// hwaccel_plan_sharding answers for that model on the same registry.
func TestFitPlansEachModelAsPlanShardingDoes(t *testing.T) {
	reg := `{"schema_version":1,"devices":[{"id":"cpu:0","kind":"cpu","index":0,"available":true,"memory_bytes":68719476736},` +
		`{"id":"cuda:0","kind":"cuda_gpu","index":0,"available":true,"memory_bytes":25769803776,"memory_bandwidth_gb_s":1008,"compute_capability":"8.9"}],` +
		`"system_io":{"interconnects":[],"numa_nodes":[]},"warnings":[]}`
	var ans catalogq.FitAnswer
	out := Fit(context.Background(), []byte(`{"registry":`+reg+`,"filter":"llama"}`), NoEnv)
	require.NoError(t, json.Unmarshal(out, &ans), string(out))
	require.NotEmpty(t, ans.Models)
	fits := 0
	for i, row := range ans.Models {
		if i > 0 {
			assert.True(t, ans.Models[i-1].Fits.Yes() || !row.Fits.Yes(), "fitting models first")
		}
		var p plan.ShardingAnswer
		require.NoError(t, json.Unmarshal(PlanSharding(context.Background(),
			[]byte(`{"model":{"name":"`+row.Model+`"},"registry":`+reg+`}`), NoEnv), &p), row.Model)
		assert.Equal(t, p.Fits, row.Fits, row.Model)
		if row.Fits.Yes() {
			fits++
			assert.Equal(t, p.Quant, row.Quant, row.Model)
			assert.Equal(t, p.Strategy, row.Strategy, row.Model)
			assert.Positive(t, row.DecodeTokensPerS, row.Model)
		} else {
			assert.Equal(t, p.Refusal.Code, row.Refusal, row.Model)
		}
	}
	assert.Positive(t, fits)

	for in, code := range map[string]string{
		`{"quant":"q9_z"}`: errs.InvalidArgument, `{"context_length":0}`: errs.InvalidArgument,
		`{"contxt_length":5}`: errs.InvalidArgument, `{"registry":[]}`: errs.InvalidArgument,
		`{"detect":{"sysroot":"/nonexistent-sysroot"}}`: errs.DetectionFailed,
	} {
		assert.Equal(t, code, errorCode(t, Fit(context.Background(), []byte(in), NoEnv)), in)
	}
}

// TestFitRowIsUnknownWhereThePlanIs: on a registry whose only device has no
// known memory, hwaccel_plan_sharding answers "fits": null (unknown, not no:
// include/ai_hwaccel.h), and a fit row of the same model on the same
// registry, planned as hwaccel_plan_sharding plans it, says the same; it
// said false, so a host reading fit took "cannot tell" for "does not fit".
func TestFitRowIsUnknownWhereThePlanIs(t *testing.T) {
	reg := `{"devices":[{"kind":"cuda_gpu","index":0,"available":true,"name":"X"}]}`
	type fits struct {
		Fits    *bool           `json:"fits"`
		Refusal json.RawMessage `json:"refusal"`
	}
	var p fits
	out := PlanSharding(context.Background(), []byte(`{"model":"Llama-3.1-8B","placement":"fewest","registry":`+reg+`}`), NoEnv)
	require.NoError(t, json.Unmarshal(out, &p), "%s", out)
	require.Nil(t, p.Fits, "the plan's fits is unknown: %s", out)
	var a struct {
		Models []struct {
			Model   string `json:"model"`
			Fits    *bool  `json:"fits"`
			Refusal string `json:"refusal"`
		} `json:"models"`
	}
	out = Fit(context.Background(), []byte(`{"filter":"Llama-3.1-8B","registry":`+reg+`}`), NoEnv)
	require.NoError(t, json.Unmarshal(out, &a), "%s", out)
	require.NotEmpty(t, a.Models, "%s", out)
	for _, r := range a.Models {
		assert.Nil(t, r.Fits, "%s: %s", r.Model, out)
		assert.Equal(t, plan.RefusalNoDevice, r.Refusal, r.Model)
	}
	assert.Contains(t, string(out), `"fits":null`)
}
