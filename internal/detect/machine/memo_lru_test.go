package machine

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// viewOf builds the view of root, as every detection of root does first.
func viewOf(t *testing.T, root string) *Machine {
	t.Helper()
	m, err := New(Config{Sysroot: root, NoExec: true})
	require.NoError(t, err)
	return m
}

func TestMemoBoundedLeastRecentlyUsed(t *testing.T) {
	ForgetAllMemos()
	t.Cleanup(ForgetAllMemos)
	roots := make([]string, MaxMemoSysroots+1)
	for i := range roots {
		roots[i] = t.TempDir()
		viewOf(t, roots[i])
		if i == 1 {
			viewOf(t, roots[0]) // roots[0] used again: roots[1] is now the older
		}
	}
	memos.Lock()
	defer memos.Unlock()
	assert.Len(t, memos.bySysroot, MaxMemoSysroots)
	assert.NotContains(t, memos.bySysroot, roots[1], "the least recently used is dropped")
	assert.Contains(t, memos.bySysroot, roots[0], "used again after roots[1]")
	assert.Contains(t, memos.bySysroot, roots[len(roots)-1])
}
