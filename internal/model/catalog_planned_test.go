package model

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPlannedWeightsExcludeVisionAndMTP: a catalog model whose published
// count holds its vision tower or MTP modules (params_include "vision",
// "mtp") plans the language model's weights alone, the count derived from
// its config, since the tower and the MTP modules are planned apart
// (Model.VisionParams, Model.MTPParams, the projector). A published total
// taken as the model's parameters would spread them over the language
// model's layers (issue 25).
func TestPlannedWeightsExcludeVisionAndMTP(t *testing.T) {
	checked := 0
	for _, e := range Catalog() {
		if !includesVisionOrMTP(e.ParamsInclude) {
			continue
		}
		text, err := FromConfig(e.Config)
		require.NoError(t, err, e.Name)
		planned := Lookup(e.Name)
		require.NotNil(t, planned, e.Name)
		if _, frozen := plannedWithTowerInShapeFit[e.Name]; frozen {
			assert.Greater(t, planned.Params, text.Params, "%s: listed in plannedWithTowerInShapeFit, but plans the text model's count: drop it from the list", e.Name)
			continue
		}
		assert.Equal(t, text.Params, planned.Params, "%s: planned parameters are not the text model's (params_b %g)", e.Name, e.ParamsB)
		checked++
	}
	assert.NotZero(t, checked)
}

// plannedWithTowerInShapeFit are the models that still plan their published
// total, tower included: each is in the frozen shape fit of
// internal/calibration/fit (shapeFitModels, which reads the planned
// parameters), so planning the text model's count would move
// ShapeLayersLogIntercept and ShapeLayersExponent (medgemma-27b-it: a from
// -2.454318 to -2.454734, b from 0.268177 to 0.268198). Left to a decision
// on refitting (issue 25).
var plannedWithTowerInShapeFit = map[string]bool{
	"medgemma-27b-it": true,
}

func includesVisionOrMTP(include string) bool {
	for _, part := range strings.Split(include, "+") {
		if part == "vision" || part == "mtp" {
			return true
		}
	}
	return false
}
