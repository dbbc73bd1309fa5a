package modelio

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/errs"
	"github.com/ai-hwaccel/ai-hwaccel/internal/model"
)

func TestFromTextResolvesLikeTheObjectForms(t *testing.T) {
	byText, err := FromText("Llama-3.1-8B")
	require.NoError(t, err)
	byName, err := Resolve(model.Spec{Name: "Llama-3.1-8B"})
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
