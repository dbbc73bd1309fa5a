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
