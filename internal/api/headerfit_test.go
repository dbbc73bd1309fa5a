package api

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	json "github.com/goccy/go-json"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The fit example of include/ai_hwaccel.h is the answer of the dgx-h100
// fixture (eight H100 80GB), field for field as far as it shows one: it
// showed Llama-3.1-70B at bf16 on 2 devices with a 131072-token context,
// where the fixture's answer holds 7328 tokens there, and DeepSeek-V3
// refused, which fits the fixture at int4.
func TestHeaderFitExampleIsTheDGXH100Answer(t *testing.T) {
	h, err := os.ReadFile(filepath.Join("..", "..", "include", "ai_hwaccel.h"))
	require.NoError(t, err)
	doc := string(h)
	at := strings.Index(doc, "HWACCEL_API char *hwaccel_fit_json(")
	require.Positive(t, at)
	start := strings.LastIndex(doc[:at], "@return :")
	end := strings.LastIndex(doc[:at], "(schema/fit.schema.json)")
	require.True(t, start > 0 && end > start, "the fit example between @return and (schema/fit.schema.json)")
	example := strings.ReplaceAll(doc[start:end], " *", " ")
	require.Contains(t, example, "dgx-h100", "the example says which machine answered it")

	out := Fit(context.Background(), []byte(`{"detect":`+fixtureDetect(t, "dgx-h100")+`}`), NoEnv)
	var ans struct {
		Models []map[string]json.RawMessage `json:"models"`
	}
	require.NoError(t, json.Unmarshal(out, &ans), "%s", out)
	rows := map[string]map[string]json.RawMessage{}
	for _, r := range ans.Models {
		var name string
		require.NoError(t, json.Unmarshal(r["model"], &name))
		rows[name] = r
	}

	objects := regexp.MustCompile(`\{"model":"([^"]+)",([^{}]*)\}`).FindAllStringSubmatch(example, -1)
	require.Len(t, objects, 2, example)
	pair := regexp.MustCompile(`"(\w+)":("[^"]*"|-?[0-9][0-9.e+]*|true|false|null)`)
	for _, o := range objects {
		row, ok := rows[o[1]]
		require.True(t, ok, "the dgx-h100 answer has a row for %s", o[1])
		pairs := pair.FindAllStringSubmatch(o[2], -1)
		require.NotEmpty(t, pairs, o[0])
		for _, p := range pairs {
			got, ok := row[p[1]]
			require.True(t, ok, "%s: the answer has %s: %s", o[1], p[1], out)
			var want, have any
			require.NoError(t, json.Unmarshal([]byte(p[2]), &want))
			require.NoError(t, json.Unmarshal(got, &have))
			assert.Equal(t, want, have, "%s.%s", o[1], p[1])
		}
	}
}
