package plan

import (
	"testing"

	json "github.com/goccy/go-json"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A Fit is encoded as the schema's fits (boolean, null when unknown) and
// read back as it was: the CLI decodes the answer it prints, and an
// unknown read as false would print "does not fit" where it cannot tell.
func TestFitEncodesAsTheSchemasFits(t *testing.T) {
	for f, want := range map[Fit]string{FitYes: "true", FitNo: "false", FitUnknown: "null"} {
		b, err := json.Marshal(LevelRow{Quant: "bf16", Fits: f})
		require.NoError(t, err, f)
		var row map[string]any
		require.NoError(t, json.Unmarshal(b, &row), "%s", b)
		got, ok := row["fits"]
		require.True(t, ok, "%s has no fits: %s", f, b)
		gotJSON, err := json.Marshal(got)
		require.NoError(t, err)
		assert.Equal(t, want, string(gotJSON), f)

		var back LevelRow
		require.NoError(t, json.Unmarshal(b, &back), "%s", b)
		assert.Equal(t, f, back.Fits, "%s", b)
	}
}

// Nothing but true, false and null is a fits; a Fit out of range is an
// error, not a silent false.
func TestFitRefusesOtherValues(t *testing.T) {
	_, err := json.Marshal(ShardingAnswer{Fits: Fit(7)})
	assert.Error(t, err)
	for _, b := range []string{`{"fits":1}`, `{"fits":"yes"}`, `{"fits":"null"}`} {
		var a ShardingAnswer
		assert.Error(t, json.Unmarshal([]byte(b), &a), b)
	}
}

// fitOf is the answer's fits from its plan: only a refusal for no device
// with known memory is unknown; every other refusal is a no.
func TestFitOfPlan(t *testing.T) {
	assert.Equal(t, FitYes, fitOf(true, ""))
	assert.Equal(t, FitUnknown, fitOf(false, RefusalNoDevice))
	for _, code := range RefusalCodes {
		if code != RefusalNoDevice {
			assert.Equal(t, FitNo, fitOf(false, code), code)
		}
	}
	assert.Equal(t, FitNo, fitOf(false, ""), "a refusal without its code is insufficient_memory (refusalOf)")
}
