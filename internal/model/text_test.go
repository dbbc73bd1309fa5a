package model

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/errs"
)

func TestSpecOfTextReadsSizesPathsAndNames(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "m.gguf")
	require.NoError(t, os.WriteFile(file, []byte("x"), 0o600))
	for in, check := range map[string]func(Spec){
		"70b":    func(s Spec) { require.NotNil(t, s.Params); assert.Equal(t, 70e9, *s.Params) },
		"7.5B":   func(s Spec) { require.NotNil(t, s.Params); assert.Equal(t, 7.5e9, *s.Params) },
		" 500m ": func(s Spec) { require.NotNil(t, s.Params); assert.Equal(t, 500e6, *s.Params) },
		"1.2t":   func(s Spec) { require.NotNil(t, s.Params); assert.Equal(t, 1.2e12, *s.Params) },
		file:     func(s Spec) { assert.Equal(t, file, s.Path) },
		// A Hugging Face id has a slash but names no file: a name.
		"meta-llama/Llama-3.1-8B": func(s Spec) { assert.Equal(t, "meta-llama/Llama-3.1-8B", s.Name) },
		"Llama-3.1-8B":            func(s Spec) { assert.Equal(t, "Llama-3.1-8B", s.Name) },
	} {
		s, err := SpecOfText(in)
		require.NoError(t, err, in)
		check(s)
	}
	for in, code := range map[string]string{"": errs.InvalidArgument, "70": errs.InvalidArgument, "1000000t": errs.InvalidArgument} {
		_, err := SpecOfText(in)
		assert.Equal(t, code, errs.CodeOf(err), in)
	}
}

func TestFromTextResolvesLikeTheObjectForms(t *testing.T) {
	byText, err := FromText("Llama-3.1-8B")
	require.NoError(t, err)
	byName, err := Resolve(Spec{Name: "Llama-3.1-8B"})
	require.NoError(t, err)
	assert.Equal(t, byName, byText)

	hf, err := FromText("meta-llama/Llama-3.1-8B")
	require.NoError(t, err)
	assert.Equal(t, byName.Name, hf.Name)

	size, err := FromText("70b")
	require.NoError(t, err)
	assert.Equal(t, int64(70e9), size.Params)

	_, err = FromText("no-such-model-xyz")
	assert.Equal(t, errs.UnknownModel, errs.CodeOf(err))
	_, err = FromText("/nonexistent/dir/x.gguf")
	assert.Equal(t, errs.ModelFile, errs.CodeOf(err))
}

// TestFromTextFallsBackToAFileOfThatName: a name the catalog does not know
// is the file of that name in the working directory when there is one.
func TestFromTextFallsBackToAFileOfThatName(t *testing.T) {
	t.Chdir(t.TempDir())
	require.NoError(t, os.Mkdir("mymodel", 0o755))
	require.NoError(t, os.WriteFile(filepath.Join("mymodel", "config.json"),
		[]byte(`{"hidden_size":4096,"num_hidden_layers":32,"num_attention_heads":32,"intermediate_size":11008,"vocab_size":32000}`), 0o600))
	m, err := FromText("mymodel")
	require.NoError(t, err)
	assert.Equal(t, 32, m.Layers)
}
