package main

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/model"
)

// TestGeneratedUpToDate fails when `go generate ./internal/model` would
// change catalog_gen.go: catalog.json was edited and not compiled again.
func TestGeneratedUpToDate(t *testing.T) {
	doc, err := os.ReadFile("../catalog.json")
	require.NoError(t, err)
	src, err := generate(doc)
	require.NoError(t, err)
	committed, err := os.ReadFile("../catalog_gen.go")
	require.NoError(t, err)
	assert.Equal(t, string(src), string(committed), "catalog_gen.go is stale: run go generate ./internal/model")
}

// TestCompiledCatalogIsTheJSON checks that the compiled-in catalog the model
// package serves is catalog.json decoded the way the package decoded it
// before (goccy/go-json, config numbers as float64): the same entries,
// fields and dynamic types, in the same order.
func TestCompiledCatalogIsTheJSON(t *testing.T) {
	doc, err := os.ReadFile("../catalog.json")
	require.NoError(t, err)
	decoded, err := decode(doc)
	require.NoError(t, err)
	require.NotEmpty(t, decoded)
	assert.Equal(t, decoded, model.Catalog())
}

// TestFloatLiteralStaysFloat checks the one spelling that matters: a whole
// number in a config must stay a float64 in Go, not become an untyped int.
func TestFloatLiteralStaysFloat(t *testing.T) {
	assert.Equal(t, "4096.0", floatLiteral(4096))
	assert.Equal(t, "-1.0", floatLiteral(-1))
	assert.Equal(t, "1e-06", floatLiteral(1e-6))
	assert.Equal(t, "1e+06", floatLiteral(1e6))
	assert.Equal(t, "0.5", floatLiteral(0.5))
}
