package catalogq

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/model"
)

// A fit row is marked (no_command) from the load of its plan's engine;
// a plan lists no load only where the model has no checkpoint at all
// (engine.vllm.Load, engine.sglang.Load), which a catalog model never is:
// an entry that lists none has its Hugging Face id as its checkpoint
// (model.defaultCheckpoint). So no fit row escapes the mark that way;
// this pins the premise for every entry and every model Models lists.
func TestEveryCatalogModelHasACheckpoint(t *testing.T) {
	ms := Models("", "")
	require.NotEmpty(t, ms)
	for _, c := range ms {
		m := model.Lookup(c.Name)
		require.NotNil(t, m, c.Name)
		assert.NotEmpty(t, m.Checkpoints, "%s: a fit row of it would list no load and carry no no_command", c.Name)
		assert.NotEmpty(t, c.Checkpoints, c.Name)
	}
}
