// Package detecttest holds the test helpers that detection packages share:
// fixture machines under testdata/machines, scratch trees and tool scripts.
// It imports no detection package, so every one of them may use it.
package detecttest

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// MachineDir returns the directory of a fixture machine under testdata/machines.
func MachineDir(t testing.TB, name string) string {
	t.Helper()
	dir := filepath.Join(repoRoot(t), "testdata", "machines", name)
	_, err := os.Stat(dir)
	require.NoError(t, err, "fixture machine %s", name)
	return dir
}

// CopyFixtureRoot copies a fixture's root/ (links kept as links) to a
// temporary directory a test may change.
func CopyFixtureRoot(t *testing.T, name string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "root")
	CopyTree(t, filepath.Join(MachineDir(t, name), "root"), dst)
	return dst
}

// CopyTree copies the tree src to dst: directories, regular files with
// their permission bits (a fixture's bin/ scripts stay executable), and
// symbolic links as links. Paths in skip (relative to src, slash-separated)
// are left out: the same machine seen from a container that lacks them.
func CopyTree(t testing.TB, src, dst string, skip ...string) {
	t.Helper()
	leave := map[string]bool{}
	for _, s := range skip {
		leave[filepath.FromSlash(s)] = true
	}
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil || leave[rel] {
			return err
		}
		out := filepath.Join(dst, rel)
		switch {
		case d.Type()&os.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(target, out)
		case d.IsDir():
			return os.MkdirAll(out, 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		return os.WriteFile(out, b, info.Mode().Perm())
	})
	require.NoError(t, err)
}

// WriteTool writes an executable shell script named name into dir.
func WriteTool(t testing.TB, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	require.NoError(t, os.WriteFile(p, []byte("#!/bin/sh\n"+body+"\n"), 0o755))
	return p
}

// ProcessesMentioning lists live processes (not this one) whose command line
// or environment contains s. Every process a tool starts inherits the tool's
// PATH, which names the tool's directory, so this finds grandchildren such as
// a plain "sleep 1000" too.
func ProcessesMentioning(s string) []string {
	var out []string
	ents, _ := os.ReadDir("/proc")
	self := os.Getpid()
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self || !ProcessAlive(pid) {
			continue
		}
		cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		environ, _ := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
		if bytes.Contains(cmdline, []byte(s)) || bytes.Contains(environ, []byte(s)) {
			out = append(out, fmt.Sprintf("%d %s", pid, bytes.ReplaceAll(cmdline, []byte{0}, []byte{' '})))
		}
	}
	return out
}

// RequireNoProcessMentioning waits up to a second for ProcessesMentioning(s)
// to be empty.
func RequireNoProcessMentioning(t testing.TB, s string) {
	t.Helper()
	deadline := time.Now().Add(time.Second)
	left := ProcessesMentioning(s)
	for len(left) > 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
		left = ProcessesMentioning(s)
	}
	assert.Empty(t, left, "processes left behind")
}

// repoRoot is the module's root: the nearest directory above the test's
// working directory (its package) that holds go.mod.
func repoRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	require.NoError(t, err)
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		up := filepath.Dir(dir)
		require.NotEqual(t, dir, up, "no go.mod above the test's directory")
		dir = up
	}
}

// WriteTree writes a scratch sysroot: files maps a path to its content,
// links a path to a symlink target. It returns the root.
func WriteTree(t testing.TB, files map[string]string, links map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for p, content := range files {
		full := filepath.Join(root, p)
		require.NoError(t, os.MkdirAll(filepath.Dir(full), 0o755))
		require.NoError(t, os.WriteFile(full, []byte(content), 0o644))
	}
	for p, target := range links {
		full := filepath.Join(root, p)
		require.NoError(t, os.MkdirAll(filepath.Dir(full), 0o755))
		require.NoError(t, os.Symlink(target, full))
	}
	return root
}

// ProcessAlive reports whether pid exists and is not a zombie (a zombie has
// no code, memory or open pipes left; its parent reaps it when it can).
func ProcessAlive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// "pid (comm) S ...": the state follows the last ')'.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 || i+2 >= len(s) {
		return false
	}
	return s[i+2] != 'Z'
}
