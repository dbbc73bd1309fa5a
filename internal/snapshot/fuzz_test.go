package snapshot

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"path"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/errs"
)

// fuzzLimits are smaller than DefaultLimits so that each input is cheap;
// the code paths are the same.
var fuzzLimits = Limits{MaxArchiveBytes: 1 << 20, MaxTotalBytes: 4 << 20, MaxMemberBytes: 1 << 20, MaxMembers: 2000}

// fuzzSeeds are archives to start from: a real recording (part of a
// fixture tree through its links, its tool runs, an environment) and
// hand-made ones, valid and not. Seeds stay small: the fuzzer minimizes
// every new input, and minimizing a whole tree takes minutes.
func fuzzSeeds(t testing.TB) [][]byte {
	rec := NewRecorder(fixtureSource(t, "nvidia-mig"), Options{Created: created})
	_, err := rec.ReadDir("sys/bus/pci/devices")
	require.NoError(t, err)
	for _, name := range []string{"sys/bus/pci/devices/0000:00:09.0/vendor", "sys/bus/pci/devices/0000:00:09.0/class"} {
		_, err := rec.ReadFile(name)
		require.NoError(t, err)
	}
	rec.RecordTool([]string{"nvidia-smi", "-L"}, runFixtureTool(t, "nvidia-mig", []string{"nvidia-smi", "-L"}))
	rec.RecordEnv("CUDA_VISIBLE_DEVICES", "0", true)
	var buf bytes.Buffer
	_, err = rec.WriteTo(&buf)
	require.NoError(t, err)
	argv := []string{"nvidia-smi", "-L"}
	man := manifestMember(t, ToolEntry{Argv: argv, Key: ToolKey(argv)})
	return [][]byte{
		buf.Bytes(),
		craft(t, man, dir("root/sys/"), reg("root/sys/a", "x"), symlink("root/sys/l", "a"), symlink("root/sys/loop", "loop"),
			symlink("root/sys/up", "../proc"), reg("tools/"+ToolKey(argv)+"/stdout", "GPU 0")),
		craft(t, man, symlink("root/sys/x", "../../etc")),
		craft(t, man, reg("root/sys/a", "x"), reg("root/sys/a", "y")),
	}
}

func FuzzRead(f *testing.F) {
	for _, s := range fuzzSeeds(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := Read(bytes.NewReader(b), fuzzLimits)
		checkFuzzResult(t, s, err)
	})
}

// FuzzReadTar fuzzes the tar layer directly: mutations of a gzip stream
// mostly break its checksum, not the archive's structure.
func FuzzReadTar(f *testing.F) {
	for _, s := range fuzzSeeds(f) {
		f.Add(gunzip(f, s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := readTar(bytes.NewReader(b), fuzzLimits)
		checkFuzzResult(t, s, err)
	})
}

// checkFuzzResult: a refusal is invalid_argument; an accepted archive
// answers every question about every entry without panic or hang.
func checkFuzzResult(t *testing.T, s *Snapshot, err error) {
	if err != nil {
		if errs.CodeOf(err) != errs.InvalidArgument {
			t.Fatalf("refused with code %s: %v", errs.CodeOf(err), err)
		}
		return
	}
	visit(t, s, ".", 0)
	for _, tool := range s.Manifest().Tools {
		if _, ok := s.Tool(tool.Argv...); !ok {
			t.Fatalf("listed run %q not found", tool.Argv)
		}
	}
}

// visit asks every question of every entry under dir, not following links
// into directories (the walk itself must end).
func visit(t *testing.T, s *Snapshot, dir string, depth int) {
	if depth > maxDepth+1 {
		t.Fatalf("deeper than the names allow: %s", dir)
	}
	es, err := s.ReadDir(dir)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("ReadDir %s: %v", dir, err)
		}
		return
	}
	for _, e := range es {
		p := path.Join(dir, e.Name())
		if _, err := s.Lstat(p); err != nil {
			t.Fatalf("Lstat %s listed in %s: %v", p, dir, err)
		}
		_, _ = s.Stat(p)
		_, _ = s.ReadFile(p)
		_, _ = s.ReadLink(p)
		if f, err := s.Open(p); err == nil {
			_, _ = io.Copy(io.Discard, f)
			_ = f.Close()
		}
		if e.IsDir() {
			visit(t, s, p, depth+1)
		}
	}
}
