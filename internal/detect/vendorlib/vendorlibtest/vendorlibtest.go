// Package vendorlibtest holds what the tests of the vendor library readers
// (internal/detect/nvidia/nvml, internal/detect/amd/amdsmi) share: building
// their fake C library, and the checks of the paths every reader has (a
// missing or foreign library, a hung call).
package vendorlibtest

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// BuildFake compiles the fake library source src, with header as the
// fake_data.h beside it and the extra -D flags of a variant, into a fresh
// directory as soname, and returns its path. The test is skipped when no C
// compiler is at hand.
func BuildFake(t testing.TB, src, header, soname string, extra ...string) string {
	t.Helper()
	cc, err := exec.LookPath("cc")
	if err != nil {
		t.Skip("no C compiler (cc) to build the fake " + soname)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "fake_data.h"), []byte(header), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, soname)
	args := append([]string{"-shared", "-fPIC", "-O1", "-I", dir, "-o", out}, extra...)
	args = append(args, src)
	if b, err := exec.Command(cc, args...).CombinedOutput(); err != nil {
		t.Fatalf("cc %s: %v\n%s", filepath.Base(src), err, b)
	}
	return out
}

// Context ends after d, or when the test does.
func Context(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// AssertOpenMissingOrForeign checks that open of no library at the path
// (a file soname in an empty directory) is a dlopen error, and that open
// of a library lacking the reader's entry points (libc) is unsupported:
// errors, not crashes.
func AssertOpenMissingOrForeign(t *testing.T, open func(ctx context.Context, path string) error, soname string, unsupported error) {
	t.Helper()
	err := open(Context(t, 5*time.Second), filepath.Join(t.TempDir(), soname))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "dlopen")
	err = open(Context(t, 5*time.Second), "libc.so.6")
	assert.ErrorIs(t, err, unsupported)
}

// AssertHungBounded checks that call, which hangs, costs its 200 ms
// deadline and less than within, failing with hung, and that a later call
// then fails with hung at once.
func AssertHungBounded(t *testing.T, call func(ctx context.Context) error, hung error, within time.Duration) {
	t.Helper()
	start := time.Now()
	assert.ErrorIs(t, call(Context(t, 200*time.Millisecond)), hung)
	assert.Less(t, time.Since(start), within)
	start = time.Now()
	assert.ErrorIs(t, call(Context(t, 5*time.Second)), hung)
	assert.Less(t, time.Since(start), 100*time.Millisecond, "a hung library fails at once")
}
