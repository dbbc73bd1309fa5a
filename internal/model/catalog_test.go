package model

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/errs"
)

func TestCatalogLoads(t *testing.T) {
	c := Catalog()
	require.NotEmpty(t, c)
	for _, e := range c {
		m := Lookup(e.Name)
		require.NotNil(t, m, e.Name)
		assert.Positive(t, m.Params, e.Name)
		assert.NotEmpty(t, e.Source, e.Name)
	}
}

func TestResolveByName(t *testing.T) {
	for _, tc := range []struct {
		name   string
		want   string
		layers int
	}{
		{"llama-2-7b", "Llama-2-7B", 32},
		{"LLAMA 2 7B", "Llama-2-7B", 32},
		{"meta-llama/Llama-2-7b-hf", "Llama-2-7B", 32},
		{"Meta-Llama-3-70B-Instruct", "Meta-Llama-3-70B", 80},
	} {
		m, err := Resolve(Spec{Name: tc.name})
		require.NoError(t, err, tc.name)
		assert.Equal(t, tc.want, m.Name)
		assert.Equal(t, tc.layers, m.Layers)
	}
}

func TestResolveErrors(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	for _, tc := range []struct {
		spec Spec
		code string
	}{
		{Spec{}, errs.InvalidArgument},
		{Spec{Params: f(7e9), Name: "x"}, errs.InvalidArgument},
		{Spec{Params: f(-1)}, errs.InvalidArgument},
		{Spec{Params: f(2e14)}, errs.InvalidArgument},
		{Spec{ParamsB: f(0)}, errs.InvalidArgument},
		{Spec{Name: "llama-9-900b"}, errs.UnknownModel},
		{Spec{Path: "/nonexistent/x.gguf"}, errs.ModelFile},
	} {
		_, err := Resolve(tc.spec)
		require.Error(t, err)
		assert.Equal(t, tc.code, errs.CodeOf(err), "%+v: %v", tc.spec, err)
	}
}
