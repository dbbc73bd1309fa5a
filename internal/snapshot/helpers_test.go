package snapshot

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// machineDir is the fixture machine name under testdata/machines.
func machineDir(name string) string {
	return filepath.Join("..", "..", "testdata", "machines", name)
}

// fixtureSource is the live Source of a fixture machine's root.
func fixtureSource(t testing.TB, name string) Source {
	t.Helper()
	src, err := DirSource(os.DirFS(filepath.Join(machineDir(name), "root")))
	require.NoError(t, err)
	return src
}

// recordTree reads the whole tree through rec as a detection that read
// everything would: every directory listed, every file read, every link read.
// Sibling directories are walked concurrently, as backends run.
func recordTree(t testing.TB, rec *Recorder) {
	t.Helper()
	var wg sync.WaitGroup
	var walk func(dir string)
	walk = func(dir string) {
		defer wg.Done()
		es, err := rec.ReadDir(dir)
		if err != nil {
			t.Errorf("ReadDir %s: %v", dir, err)
			return
		}
		for _, e := range es {
			p := path.Join(dir, e.Name())
			switch {
			case e.IsDir():
				wg.Add(1)
				go walk(p)
			case e.Type()&fs.ModeSymlink != 0:
				_, err = rec.ReadLink(p)
			case e.Type().IsRegular():
				_, err = rec.ReadFile(p)
			default:
				_, err = rec.Lstat(p)
			}
			if err != nil {
				t.Errorf("%s: %v", p, err)
			}
		}
	}
	wg.Add(1)
	walk(".")
	wg.Wait()
}

// fixtureArgvs returns the command lines a fixture tool script answers: the
// patterns of its `case "$*" in` branches, split on spaces, plus one it does
// not know (its default branch).
func fixtureArgvs(t testing.TB, machine, tool string) [][]string {
	t.Helper()
	f, err := os.Open(filepath.Join(machineDir(machine), "bin", tool))
	require.NoError(t, err)
	defer f.Close()
	var out [][]string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		l := sc.Text()
		if strings.HasPrefix(l, `"`) && strings.HasSuffix(l, `")`) {
			out = append(out, append([]string{tool}, strings.Fields(l[1:len(l)-2])...))
		}
	}
	require.NoError(t, sc.Err())
	require.NotEmpty(t, out, "no case branches in %s", tool)
	return append(out, []string{tool, "--no-such-option"})
}

// runFixtureTool runs a fixture tool script as the live runner would.
func runFixtureTool(t testing.TB, machine string, argv []string) ToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(machineDir(machine), "bin", argv[0]), argv[1:]...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	res := ToolResult{Stdout: stdout.Bytes(), Stderr: stderr.Bytes()}
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		res.ExitStatus = ee.ExitCode()
	case err != nil:
		t.Fatalf("%v: %v", argv, err)
	}
	return res
}

// recordTools runs every answered command line of the machine's tools.
func recordTools(t testing.TB, rec *Recorder, machine string, tools ...string) map[string]ToolResult {
	t.Helper()
	runs := map[string]ToolResult{}
	for _, tool := range tools {
		for _, argv := range fixtureArgvs(t, machine, tool) {
			res := runFixtureTool(t, machine, argv)
			rec.RecordTool(argv, res)
			runs[strings.Join(argv, "\x00")] = res
		}
	}
	return runs
}

// writeAndRead writes rec and reads the archive back.
func writeAndRead(t testing.TB, rec *Recorder) (*Snapshot, []byte) {
	t.Helper()
	var buf bytes.Buffer
	_, err := rec.WriteTo(&buf)
	require.NoError(t, err)
	s, err := Read(bytes.NewReader(buf.Bytes()), DefaultLimits)
	require.NoError(t, err)
	return s, buf.Bytes()
}

var created = time.Date(2026, 11, 25, 6, 0, 0, 0, time.UTC)

// gunzip returns the decompressed tar stream of an archive.
func gunzip(t testing.TB, raw []byte) []byte {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(raw))
	require.NoError(t, err)
	b, err := io.ReadAll(zr)
	require.NoError(t, err)
	return b
}

// fixtureMachines lists the fixture machines that have a root/ tree.
func fixtureMachines(t testing.TB) []string {
	t.Helper()
	es, err := os.ReadDir(filepath.Join("..", "..", "testdata", "machines"))
	require.NoError(t, err)
	var out []string
	for _, e := range es {
		if _, err := os.Stat(filepath.Join(machineDir(e.Name()), "root")); err == nil {
			out = append(out, e.Name())
		}
	}
	return out
}
