//go:build linux && cgo

package dl

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A missing library is an error with dlerror's text; a present one
// resolves the names it has and no others.
func TestOpenAndSym(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "libnone.so")
	_, err := Open(missing)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "dlopen "+missing+": ")
	assert.Contains(t, err.Error(), "No such file")

	h, err := Open("libc.so.6")
	require.NoError(t, err)
	assert.NotNil(t, Sym(h, "strlen"))
	assert.Nil(t, Sym(h, "hw_no_such_symbol"))
}
