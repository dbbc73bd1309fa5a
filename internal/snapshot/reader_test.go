package snapshot

import (
	"archive/tar"
	"bytes"
	"compress/flate"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	json "github.com/goccy/go-json"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/errs"
)

// member is one entry of a hand-made archive.
type member struct {
	h    tar.Header
	data []byte
}

func reg(name, data string) member {
	return member{h: tar.Header{Typeflag: tar.TypeReg, Name: name, Size: int64(len(data)), Mode: 0o644}, data: []byte(data)}
}

func dir(name string) member {
	return member{h: tar.Header{Typeflag: tar.TypeDir, Name: name, Mode: 0o755}}
}

func symlink(name, target string) member {
	return member{h: tar.Header{Typeflag: tar.TypeSymlink, Name: name, Linkname: target, Mode: 0o777}}
}

// legacyStub marks m as kept as existing only, the way format 1 did: a PAX
// record on its header.
func legacyStub(m member) member {
	m.h.PAXRecords = map[string]string{legacyStubRecord: "1"}
	return m
}

// manifestMember is a valid manifest listing tools.
func manifestMember(t testing.TB, tools ...ToolEntry) member {
	b, err := json.Marshal(Manifest{Format: FormatVersion, Tools: tools})
	require.NoError(t, err)
	return reg(manifestName, string(b))
}

// craft builds a gzip-compressed tar of members, written as given (no
// checks but those of archive/tar).
func craft(t testing.TB, ms ...member) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for _, m := range ms {
		h := m.h
		require.NoError(t, tw.WriteHeader(&h), h.Name)
		_, err := tw.Write(m.data)
		require.NoError(t, err)
	}
	require.NoError(t, tw.Close())
	require.NoError(t, zw.Close())
	return buf.Bytes()
}

// requireRefused checks that raw is refused with invalid_argument and an
// *ArchiveError whose reason contains want.
func requireRefused(t *testing.T, raw []byte, lim Limits, want string) {
	t.Helper()
	s, err := Read(bytes.NewReader(raw), lim)
	require.Error(t, err)
	require.Nil(t, s)
	assert.Equal(t, errs.InvalidArgument, errs.CodeOf(err), err.Error())
	var ae *ArchiveError
	require.True(t, errors.As(err, &ae), "%T %v", err, err)
	assert.Contains(t, ae.Error(), want)
}

func TestReadAcceptsAHandMadeArchive(t *testing.T) {
	argv := []string{"nvidia-smi", "-L"}
	raw := craft(t,
		manifestMember(t, ToolEntry{Argv: argv, Key: ToolKey(argv), ExitStatus: 0}),
		dir("root/"), dir("root/sys/"), reg("root/sys/a", "x"), symlink("root/sys/l", "a"),
		reg("tools/"+ToolKey(argv)+"/stdout", "GPU 0"),
	)
	s, err := Read(bytes.NewReader(raw), DefaultLimits)
	require.NoError(t, err)
	b, err := s.ReadFile("sys/l")
	require.NoError(t, err)
	assert.Equal(t, "x", string(b))
	r, ok := s.Tool(argv...)
	require.True(t, ok)
	assert.Equal(t, "GPU 0", string(r.Stdout))
	assert.Empty(t, r.Stderr)
}

func TestReadRefusesCraftedArchives(t *testing.T) {
	argv := []string{"nvidia-smi"}
	key := ToolKey(argv)
	man := manifestMember(t)
	cases := []struct {
		name string
		ms   []member
		want string
	}{
		{"dot-dot name", []member{man, reg("root/sys/../../etc/passwd", "root:x:0:0")}, "clean relative path"},
		{"dot-dot first", []member{man, reg("root/../x", "")}, "clean relative path"},
		{"absolute name", []member{man, reg("/etc/passwd", "")}, "not part of the snapshot layout"},
		{"empty element", []member{man, reg("root/sys//a", "")}, "clean relative path"},
		{"absolute link", []member{man, symlink("root/sys/x", "/etc/passwd")}, "leaves the tree"},
		{"escaping link", []member{man, symlink("root/sys/x", "../../etc/passwd")}, "leaves the tree"},
		{"escaping link deep", []member{man, symlink("root/sys/a/b/x", "../../../../../home")}, "leaves the tree"},
		{"hard link", []member{man, reg("root/sys/a", "x"), {h: tar.Header{Typeflag: tar.TypeLink, Name: "root/sys/b", Linkname: "root/sys/a"}}}, "not allowed"},
		{"duplicate file", []member{man, reg("root/sys/a", "x"), reg("root/sys/a", "y")}, "duplicate name"},
		{"duplicate dir and file", []member{man, dir("root/sys/"), reg("root/sys", "y")}, "duplicate name"},
		{"duplicate manifest", []member{man, man}, "duplicate name"},
		{"file under a link", []member{man, symlink("root/sys/l", "."), reg("root/sys/l/x", "")}, "not a directory"},
		{"file under a file", []member{man, reg("root/sys/f", ""), reg("root/sys/f/x", "")}, "not a directory"},
		{"stray member", []member{man, reg("evil.sh", "rm -rf /")}, "not part of the snapshot layout"},
		{"no manifest", []member{reg("root/sys/a", "")}, "no manifest.json"},
		{"newer format", []member{reg(manifestName, `{"format":3}`)}, "format 3"},
		{"stub not in the tree", []member{reg(manifestName, `{"format":2,"stubs":["sys/x"]}`)}, "not an entry of root/"},
		{"stub twice", []member{reg(manifestName, `{"format":2,"stubs":["sys/a","sys/a"]}`), reg("root/sys/a", "")}, "listed twice"},
		{"stub link", []member{reg(manifestName, `{"format":2,"stubs":["sys/l"]}`), reg("root/sys/a", ""), symlink("root/sys/l", "a")}, "symbolic link"},
		{"stubs in format 1", []member{reg(manifestName, `{"format":1,"stubs":["sys/a"]}`), reg("root/sys/a", "")}, "format 2 introduced"},
		{"legacy stub in format 2", []member{man, legacyStub(reg("root/sys/a", ""))}, "only format 1 uses"},
		{"manifest not json", []member{reg(manifestName, `{`)}, "not a manifest"},
		{"unlisted tool output", []member{man, reg("tools/"+key+"/stdout", "x")}, "does not list"},
		{"tool key mismatch", []member{manifestMember(t, ToolEntry{Argv: argv, Key: ToolKey([]string{"rm"})})}, "not the hash"},
		{"bad tool key", []member{man, reg("tools/../stdout", "x")}, "not a tool key"},
		{"tool extra file", []member{manifestMember(t, ToolEntry{Argv: argv, Key: key}), reg("tools/"+key+"/exec.sh", "x")}, "only the regular files"},
		{"unknown record", []member{man, {h: tar.Header{Typeflag: tar.TypeReg, Name: "root/sys/a", PAXRecords: map[string]string{"AIHWACCEL.exec": "1"}}}}, "unknown record"},
		{"manifest is a link", []member{symlink(manifestName, "root/sys/a")}, "the manifest is a"},
		{"bad env name", []member{reg(manifestName, `{"format":1,"env":[{"name":"A=B","value":"","set":true}]}`)}, "environment variable"},
		{"deep name", []member{man, reg("root/"+strings.Repeat("d/", maxDepth)+"f", "")}, "deeper than 64"},
		{"long link", []member{man, symlink("root/sys/l", strings.Repeat("a", maxPathBytes+1))}, "longer than 1024 bytes"},
		{"bad error path", []member{reg(manifestName, `{"format":1,"errors":[{"path":"../x","kind":"permission"}]}`)}, "read error"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			requireRefused(t, craft(t, c.ms...), DefaultLimits, c.want)
		})
	}
}

// TestReadsFormat1Stubs: archives written before format 2 (stubs marked by a
// PAX record on their header) still replay, stubs as stubs.
func TestReadsFormat1Stubs(t *testing.T) {
	raw := craft(t, reg(manifestName, `{"format":1}`), legacyStub(reg("root/sys/a", "")), reg("root/sys/b", "x"))
	s, err := Read(bytes.NewReader(raw), DefaultLimits)
	require.NoError(t, err)
	_, err = s.ReadFile("sys/a")
	require.ErrorIs(t, err, ErrNotRecorded, "a stub has no content to read")
	b, err := s.ReadFile("sys/b")
	require.NoError(t, err)
	assert.Equal(t, "x", string(b))
}

func TestReadRefusesTooManyMembers(t *testing.T) {
	lim := DefaultLimits
	lim.MaxMembers = 3
	requireRefused(t, craft(t, manifestMember(t), reg("root/a", ""), reg("root/b", ""), reg("root/c", "")), lim, "more than 3 members")
}

// Directories implied by names count against MaxMembers: a few deep names
// cannot make a crowd of nodes.
func TestReadCountsImpliedDirectories(t *testing.T) {
	lim := DefaultLimits
	lim.MaxMembers = 20
	deep := "root/" + strings.Repeat("d/", 30) + "f"
	requireRefused(t, craft(t, manifestMember(t), reg(deep, "")), lim, "more than 20 entries")
}

func TestReadRefusesGarbage(t *testing.T) {
	requireRefused(t, []byte("not an archive"), DefaultLimits, "not a gzip stream")
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	_, _ = zw.Write(bytes.Repeat([]byte("garbage!"), 200))
	require.NoError(t, zw.Close())
	requireRefused(t, buf.Bytes(), DefaultLimits, "unreadable tar stream")
}

// zeroArchive builds a gzip tar whose members hold only zeros, without ever
// holding or compressing the zeros: one compressed MiB of zeros is repeated
// (deflate blocks ended by a sync flush are byte-aligned and self-contained,
// RFC 1951 §3.2.3, so they concatenate), and the gzip trailer's CRC-32 and
// length are computed over the stream (RFC 1952 §2.3.1). A 1 GiB member
// costs about 1 MB of archive and a fraction of a second.
func zeroArchive(t testing.TB, first []member, zeroMembers map[string]int64, order []string) []byte {
	t.Helper()
	const chunk = 1 << 20
	zeroChunk := deflateSegment(t, make([]byte, chunk))
	var out bytes.Buffer
	out.Write([]byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff}) // gzip header, no name, no time
	crc := crc32.NewIEEE()
	var size int64
	plain := func(b []byte) {
		out.Write(deflateSegment(t, b))
		crc.Write(b)
		size += int64(len(b))
	}
	zeros := make([]byte, chunk)
	zeroRun := func(n int64) {
		for ; n >= chunk; n -= chunk {
			out.Write(zeroChunk)
			crc.Write(zeros)
			size += chunk
		}
		if n > 0 {
			plain(make([]byte, n))
		}
	}
	for _, m := range first {
		plain(tarBytes(t, m))
	}
	for _, name := range order {
		n := zeroMembers[name]
		plain(tarHeader(t, &tar.Header{Typeflag: tar.TypeReg, Name: name, Size: n, Mode: 0o644}))
		zeroRun(n + (tarBlock-n%tarBlock)%tarBlock)
	}
	zeroRun(2 * tarBlock) // end of archive
	fw, err := flate.NewWriter(&out, flate.BestCompression)
	require.NoError(t, err)
	require.NoError(t, fw.Close()) // the final (empty) block
	require.NoError(t, binary.Write(&out, binary.LittleEndian, crc.Sum32()))
	require.NoError(t, binary.Write(&out, binary.LittleEndian, uint32(size)))
	return out.Bytes()
}

// deflateSegment compresses b into deflate blocks ended by a sync flush.
func deflateSegment(t testing.TB, b []byte) []byte {
	var buf bytes.Buffer
	fw, err := flate.NewWriter(&buf, flate.BestCompression)
	require.NoError(t, err)
	_, err = fw.Write(b)
	require.NoError(t, err)
	require.NoError(t, fw.Flush())
	return buf.Bytes()
}

// tarHeader returns the header blocks archive/tar writes for h.
func tarHeader(t testing.TB, h *tar.Header) []byte {
	var buf bytes.Buffer
	require.NoError(t, tar.NewWriter(&buf).WriteHeader(h))
	return buf.Bytes()
}

// tarBytes returns a whole member: header, data, padding.
func tarBytes(t testing.TB, m member) []byte {
	b := tarHeader(t, &m.h)
	b = append(b, m.data...)
	return append(b, make([]byte, (tarBlock-len(m.data)%tarBlock)%tarBlock)...)
}

// The zero-stream builder makes archives gzip and tar read back whole: the
// test of refusals below relies on it.
func TestZeroArchiveIsValid(t *testing.T) {
	raw := zeroArchive(t, []member{manifestMember(t)}, map[string]int64{"root/sys/zeros": 3<<20 + 5}, []string{"root/sys/zeros"})
	s, err := Read(bytes.NewReader(raw), DefaultLimits)
	require.NoError(t, err)
	b, err := s.ReadFile("sys/zeros")
	require.NoError(t, err)
	assert.Len(t, b, 3<<20+5)
	assert.Equal(t, make([]byte, len(b)), b)
}

// A 1 GiB member is refused from its header, before any of it is read:
// quickly and without allocating it.
func TestReadRefusesAGigabyteMember(t *testing.T) {
	raw := zeroArchive(t, []member{manifestMember(t)}, map[string]int64{"root/sys/huge": 1 << 30}, []string{"root/sys/huge"})
	t.Logf("archive holding a 1 GiB member: %d bytes", len(raw))
	assert.Less(t, len(raw), 2<<20)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	start := time.Now()
	requireRefused(t, raw, DefaultLimits, "over the 8388608 bytes a member may hold")
	runtime.ReadMemStats(&after)
	assert.Less(t, time.Since(start), 5*time.Second)
	assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(4<<20), "bytes allocated while refusing")
}

// A decompression bomb of members each under the member cap is refused once
// the members add up to more than the total cap.
func TestReadRefusesADecompressionBomb(t *testing.T) {
	sizes := map[string]int64{}
	var order []string
	for i := range 16 {
		name := "root/sys/bomb" + string(rune('a'+i))
		sizes[name] = DefaultLimits.MaxMemberBytes
		order = append(order, name)
	}
	raw := zeroArchive(t, []member{manifestMember(t)}, sizes, order)
	t.Logf("bomb: %d bytes expanding to %d MiB", len(raw), 16*DefaultLimits.MaxMemberBytes>>20)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	requireRefused(t, raw, DefaultLimits, "members total more than")
	runtime.ReadMemStats(&after)
	assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(2*DefaultLimits.MaxTotalBytes), "bytes allocated while refusing")
}

// The compressed-size cap holds for a reader that is not a file.
func TestReadRefusesAnArchiveOverTheCompressedCap(t *testing.T) {
	raw := zeroArchive(t, []member{manifestMember(t)}, map[string]int64{"root/sys/z": 4 << 20}, []string{"root/sys/z"})
	lim := DefaultLimits
	lim.MaxArchiveBytes = int64(len(raw) / 2)
	requireRefused(t, raw, lim, "")
}

// Open reads what WriteFile wrote (mode 0600), and refuses what is not an
// archive file with invalid_argument.
func TestOpenAndWriteFile(t *testing.T) {
	rec := NewRecorder(fixtureSource(t, "cpu-only"), Options{Created: created})
	_, err := rec.ReadFile("proc/meminfo")
	require.NoError(t, err)
	name := filepath.Join(t.TempDir(), "machine.tar.gz")
	require.NoError(t, rec.WriteFile(name))
	st, err := os.Stat(name)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), st.Mode().Perm())
	s, err := Open(name)
	require.NoError(t, err)
	b, err := s.ReadFile("proc/meminfo")
	require.NoError(t, err)
	assert.Contains(t, string(b), "MemTotal:")

	for _, bad := range []string{filepath.Join(t.TempDir(), "missing"), t.TempDir()} {
		_, err := Open(bad)
		require.Error(t, err)
		assert.Equal(t, errs.InvalidArgument, errs.CodeOf(err), bad)
	}
}

// retyped returns the member m written as a regular file whose header's type
// is then set to typ, checksum recomputed (POSIX ustar: the checksum is the
// sum of the header bytes with its own field read as spaces): archive/tar
// will not write a device or pipe with content, nor GNU sparse headers, but a
// crafted archive can hold them.
func retyped(t testing.TB, m member, typ byte) []byte {
	h := m.h
	h.Typeflag = tar.TypeReg
	h.Format = tar.FormatUSTAR
	b := tarBytes(t, member{h: h, data: m.data})
	b[156] = typ
	copy(b[148:156], "        ")
	sum := 0
	for _, c := range b[:tarBlock] {
		sum += int(c)
	}
	copy(b[148:156], fmt.Sprintf("%06o\x00 ", sum))
	return b
}

// gzipTar compresses raw tar member bytes and adds the end of archive.
func gzipTar(t testing.TB, parts ...[]byte) []byte {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	for _, p := range parts {
		_, err := zw.Write(p)
		require.NoError(t, err)
	}
	_, err := zw.Write(make([]byte, 2*tarBlock))
	require.NoError(t, err)
	require.NoError(t, zw.Close())
	return buf.Bytes()
}

func TestReadRefusesRetypedMembers(t *testing.T) {
	man := tarBytes(t, manifestMember(t))
	for _, c := range []struct {
		name string
		typ  byte
		data string
		want string
	}{
		{"fifo with content", tar.TypeFifo, "data", "a named pipe with content"},
		{"device with content", tar.TypeChar, "data", "a device node with content"},
		{"directory with content", tar.TypeDir, "data", "a directory with content"},
		{"gnu sparse", tar.TypeGNUSparse, "data", ""},
		{"contiguous file", tar.TypeCont, "data", "type '7' with content"},
		{"contiguous file, empty", tar.TypeCont, "", "type '7' is not allowed"},
		{"unknown type", 'Z', "", "type 'Z' is not allowed"},
	} {
		t.Run(c.name, func(t *testing.T) {
			raw := gzipTar(t, man, retyped(t, reg("root/dev/x", c.data), c.typ))
			requireRefused(t, raw, DefaultLimits, c.want)
		})
	}
	// the same member as a regular file is accepted: the refusals above are
	// the type's
	_, err := Read(bytes.NewReader(gzipTar(t, man, retyped(t, reg("root/dev/x", "data"), tar.TypeReg))), DefaultLimits)
	require.NoError(t, err)
}
