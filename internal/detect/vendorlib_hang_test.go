//go:build linux && cgo

package detect

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// detectPastHungLibrary runs Detect twice with opts, whose in-process
// vendor library hangs: the first detection costs its 300 ms deadline, no
// more, and warns; the second (5 s) skips the library at once, its last
// warning saying the call never returned. It returns the second registry.
func detectPastHungLibrary(t *testing.T, opts Options) *registry.Registry {
	t.Helper()
	opts.Timeout = 300 * time.Millisecond
	start := time.Now()
	reg, err := Detect(context.Background(), opts)
	require.NoError(t, err)
	assert.Less(t, time.Since(start), opts.Timeout+backendGrace+time.Second)
	assert.NotEmpty(t, reg.Warnings)

	opts.Timeout = 5 * time.Second
	start = time.Now()
	reg, err = Detect(context.Background(), opts)
	require.NoError(t, err)
	require.NotEmpty(t, reg.Warnings)
	assert.Contains(t, reg.Warnings[len(reg.Warnings)-1].Message, "never returned")
	assert.Less(t, time.Since(start), 2*time.Second)
	return reg
}
