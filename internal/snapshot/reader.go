package snapshot

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"
	"syscall"

	json "github.com/goccy/go-json"

	"github.com/ai-hwaccel/ai-hwaccel/internal/errs"
	"github.com/ai-hwaccel/ai-hwaccel/internal/strictjson"
)

// Limits bound what reading one archive may cost. Memory is at most about
// MaxTotalBytes plus a few hundred bytes per member; time is linear in the
// bytes read, which MaxArchiveBytes and MaxTotalBytes bound.
type Limits struct {
	// MaxArchiveBytes caps the compressed archive.
	MaxArchiveBytes int64
	// MaxTotalBytes caps the decompressed tar stream (headers included):
	// a decompression bomb stops here, however well it compresses.
	MaxTotalBytes int64
	// MaxMemberBytes caps one member, checked on its header before any
	// of it is read.
	MaxMemberBytes int64
	// MaxMembers caps the number of members.
	MaxMembers int
}

// DefaultLimits are generous for a real capture: detection reads sysfs
// attributes of at most 64 KiB (internal/detect MaxFileBytes), /proc/cpuinfo
// of under 1 MiB and tool stdout of at most 4 MiB (MaxToolOutput), and a
// DGX-class machine is a few thousand entries.
var DefaultLimits = Limits{
	MaxArchiveBytes: 32 << 20,
	MaxTotalBytes:   64 << 20,
	MaxMemberBytes:  8 << 20,
	MaxMembers:      100_000,
}

// ArchiveError says why an archive was refused: Member is the offending
// member's name ("" for the archive as a whole). Open and Read return it
// inside an *errs.Error of code invalid_argument.
type ArchiveError struct {
	Member string
	Reason string
}

// Error returns why the snapshot was refused, and at which member.
func (e *ArchiveError) Error() string {
	if e.Member == "" {
		return "snapshot refused: " + e.Reason
	}
	return fmt.Sprintf("snapshot refused: member %q: %s", e.Member, e.Reason)
}

func refuse(member, format string, args ...any) error {
	ae := &ArchiveError{Member: member, Reason: fmt.Sprintf(format, args...)}
	return errs.Wrap(errs.InvalidArgument, ae, "")
}

// maxPathBytes and maxDepth bound a tree entry's name and link target: each
// entry implies its parent directories, so without them a few long names
// would make millions of nodes. The deepest sysfs paths detection reads
// (a GPU behind a few PCIe switches) are about 20 components and 200 bytes.
const (
	maxPathBytes = 1024
	maxDepth     = 64
)

// Open reads the archive file name under DefaultLimits.
//
// The open does not block and takes no controlling terminal: a blocking
// open of a FIFO waits for a writer, which held the caller's thread for
// good, past any timeout, before the regular-file check below could refuse
// it (open(2): O_NONBLOCK, O_NOCTTY). The check is on the opened
// descriptor, so a name swapped in between is checked as read.
func Open(name string) (*Snapshot, error) {
	f, err := os.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
	if err != nil {
		return nil, errs.Wrap(errs.InvalidArgument, err, "snapshot")
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, errs.Wrap(errs.InvalidArgument, err, "snapshot")
	}
	if !st.Mode().IsRegular() {
		return nil, refuse("", "%s is not a regular file", name)
	}
	if st.Size() > DefaultLimits.MaxArchiveBytes {
		return nil, refuse("", "%d bytes, more than %d", st.Size(), DefaultLimits.MaxArchiveBytes)
	}
	return Read(f, DefaultLimits)
}

// Read reads an archive from r under lim. Anything it cannot vouch for is
// refused with an *ArchiveError (code invalid_argument): a name with "..",
// an absolute name, a link that is absolute or leaves the tree, an entry
// under a file or a link, a member or a total over the limits, duplicate
// names, entry types other than file, directory, symbolic link and device
// node, output of a tool the manifest does not list, a manifest of another
// format.
func Read(r io.Reader, lim Limits) (*Snapshot, error) {
	cr := &capReader{r: r, left: lim.MaxArchiveBytes, what: "compressed archive"}
	zr, err := gzip.NewReader(cr)
	if err != nil {
		return nil, refuse("", "not a gzip stream: %v", err)
	}
	return readTar(zr, lim)
}

// readTar reads the decompressed tar stream of an archive.
func readTar(r io.Reader, lim Limits) (*Snapshot, error) {
	ld := &loader{lim: lim, tr: tar.NewReader(&capReader{r: r, left: lim.MaxTotalBytes, what: "decompressed archive"}),
		s: newSnapshot(), seen: map[string]bool{}, outputs: map[string][]byte{}}
	if err := ld.members(); err != nil {
		return nil, err
	}
	if err := ld.finish(); err != nil {
		return nil, err
	}
	return ld.s, nil
}

// capReader fails once more than left bytes have been read through it.
type capReader struct {
	r    io.Reader
	left int64
	what string
}

var errOverCap = errors.New("over the size limit")

func (c *capReader) Read(b []byte) (int, error) {
	if c.left < 0 {
		return 0, fmt.Errorf("%s %w", c.what, errOverCap)
	}
	if int64(len(b)) > c.left+1 {
		b = b[:c.left+1]
	}
	n, err := c.r.Read(b)
	c.left -= int64(n)
	if c.left < 0 {
		return n, fmt.Errorf("%s %w", c.what, errOverCap)
	}
	return n, err
}

// loader holds the state of one Read.
type loader struct {
	lim      Limits
	tr       *tar.Reader
	s        *Snapshot
	seen     map[string]bool
	count    int
	used     int64
	manifest []byte
	outputs  map[string][]byte // tools/<key>/<stream>
	// legacyStubs counts entries marked with format 1's PAX stub record.
	legacyStubs int
}

// members reads every member, checking each on its own.
func (ld *loader) members() error {
	for {
		h, err := ld.tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return refuse("", "unreadable tar stream: %v", err)
		}
		if ld.count++; ld.count > ld.lim.MaxMembers {
			return refuse("", "more than %d members", ld.lim.MaxMembers)
		}
		if err := ld.member(h); err != nil {
			return err
		}
	}
}

func (ld *loader) member(h *tar.Header) error {
	name := h.Name
	if h.Size < 0 || h.Size > ld.lim.MaxMemberBytes {
		return refuse(name, "size %d, over the %d bytes a member may hold", h.Size, ld.lim.MaxMemberBytes)
	}
	if ld.used += h.Size; ld.used > ld.lim.MaxTotalBytes {
		return refuse(name, "members total more than %d bytes", ld.lim.MaxTotalBytes)
	}
	typ := h.Typeflag
	if typ == tar.TypeRegA {
		typ = tar.TypeReg
	}
	if typ != tar.TypeReg && h.Size != 0 {
		return refuse(name, "a %s with content", typeName(typ))
	}
	if typ == tar.TypeDir {
		name = strings.TrimSuffix(name, "/")
	}
	if ld.seen[name] {
		return refuse(name, "duplicate name")
	}
	ld.seen[name] = true
	switch {
	case name == manifestName:
		if typ != tar.TypeReg {
			return refuse(name, "the manifest is a %s", typeName(typ))
		}
		b, err := ld.content(h)
		ld.manifest = b
		return err
	case name == "root" || name == "tools":
		if typ != tar.TypeDir {
			return refuse(name, "a %s where a directory belongs", typeName(typ))
		}
		return nil
	case strings.HasPrefix(name, rootPrefix):
		return ld.treeEntry(h, typ, strings.TrimPrefix(name, rootPrefix))
	case strings.HasPrefix(name, toolsPrefix):
		return ld.toolOutput(h, typ, strings.TrimPrefix(name, toolsPrefix))
	}
	return refuse(name, "not part of the snapshot layout (manifest.json, root/, tools/)")
}

// content reads the member's data, whose size the caller checked.
func (ld *loader) content(h *tar.Header) ([]byte, error) {
	b := make([]byte, h.Size)
	if _, err := io.ReadFull(ld.tr, b); err != nil {
		return nil, refuse(h.Name, "truncated: %v", err)
	}
	return b, nil
}

// treeEntry checks and keeps one entry of the machine tree.
func (ld *loader) treeEntry(h *tar.Header, typ byte, p string) error {
	if !fs.ValidPath(p) || p == "." || strings.ContainsRune(p, '\\') {
		return refuse(h.Name, "not a clean relative path (no \"..\", \".\", empty or absolute parts)")
	}
	if len(p) > maxPathBytes || strings.Count(p, "/") >= maxDepth || len(h.Linkname) > maxPathBytes {
		return refuse(h.Name, "name or link longer than %d bytes or deeper than %d", maxPathBytes, maxDepth)
	}
	n := &node{full: true}
	for k, v := range h.PAXRecords {
		if strings.HasPrefix(k, "AIHWACCEL.") && (k != legacyStubRecord || v != "1") {
			return refuse(h.Name, "unknown record %s=%q", k, v)
		}
	}
	if h.PAXRecords[legacyStubRecord] == "1" {
		n.full = false
		ld.legacyStubs++
	}
	switch typ {
	case tar.TypeReg:
		n.mode = 0
		b, err := ld.content(h)
		if err != nil {
			return err
		}
		n.data = b
	case tar.TypeDir:
		n.mode = fs.ModeDir
	case tar.TypeSymlink:
		if !linkStaysInside(p, h.Linkname) {
			return refuse(h.Name, "link to %q leaves the tree (absolute, or \"..\" above the root)", h.Linkname)
		}
		n.mode, n.target, n.full = fs.ModeSymlink, h.Linkname, true
	case tar.TypeChar:
		n.mode = fs.ModeDevice | fs.ModeCharDevice
	case tar.TypeBlock:
		n.mode = fs.ModeDevice
	case tar.TypeFifo:
		n.mode = fs.ModeNamedPipe
	default:
		return refuse(h.Name, "entry type %s is not allowed", typeName(typ))
	}
	ld.s.nodes[p] = n
	return nil
}

// toolOutput keeps tools/<key>/stdout or stderr.
func (ld *loader) toolOutput(h *tar.Header, typ byte, rest string) error {
	key, stream, _ := strings.Cut(rest, "/")
	if !isToolKey(key) {
		return refuse(h.Name, "not a tool key")
	}
	if typ == tar.TypeDir && stream == "" {
		return nil
	}
	if typ != tar.TypeReg || (stream != stdoutName && stream != stderrName) {
		return refuse(h.Name, "tools/<key>/ holds only the regular files stdout and stderr")
	}
	b, err := ld.content(h)
	if err != nil {
		return err
	}
	ld.outputs[rest] = b
	return nil
}

// finish checks what only the whole archive tells: the manifest, that every
// tool output belongs to a listed run, that every entry's parents are
// directories.
func (ld *loader) finish() error {
	if ld.manifest == nil {
		return refuse("", "no %s", manifestName)
	}
	m := &ld.s.manifest
	if err := json.NewDecoder(bytes.NewReader(ld.manifest)).Decode(m); err != nil {
		return refuse(manifestName, "not a manifest: %s", strictjson.Describe(err))
	}
	if m.Format < minFormatVersion || m.Format > FormatVersion {
		return refuse(manifestName, "format %d, this library reads formats %d to %d", m.Format, minFormatVersion, FormatVersion)
	}
	if err := ld.stubs(); err != nil {
		return err
	}
	if err := ld.tools(); err != nil {
		return err
	}
	for _, e := range m.Env {
		if e.Name == "" || strings.ContainsAny(e.Name, "=\x00") {
			return refuse(manifestName, "environment variable name %q", e.Name)
		}
		ld.s.env[e.Name] = e
	}
	for _, e := range m.Errors {
		if !fs.ValidPath(e.Path) || (e.Kind != ErrorPermission && e.Kind != ErrorOther) {
			return refuse(manifestName, "read error %q of kind %q", e.Path, e.Kind)
		}
		ld.s.errors[e.Path] = e.Kind
	}
	if err := ld.s.index(); err != nil {
		return err
	}
	if len(ld.s.nodes) > ld.lim.MaxMembers {
		return refuse("", "more than %d entries with the directories the names imply", ld.lim.MaxMembers)
	}
	return nil
}

// stubs marks the entries the manifest lists as kept as existing only
// (format 2); format 1 marked them in their headers instead (treeEntry), and
// an archive may not mix the two.
func (ld *loader) stubs() error {
	m := &ld.s.manifest
	if m.Format < 2 {
		if len(m.Stubs) > 0 {
			return refuse(manifestName, "format %d lists stubs, which format 2 introduced", m.Format)
		}
		return nil
	}
	if ld.legacyStubs > 0 {
		return refuse("", "format %d archive with %d entries marked %s, which only format 1 uses", m.Format, ld.legacyStubs, legacyStubRecord)
	}
	for _, p := range m.Stubs {
		n, ok := ld.s.nodes[p]
		switch {
		case !ok:
			return refuse(manifestName, "stub %q is not an entry of root/", p)
		case n.mode.Type() == fs.ModeSymlink:
			return refuse(manifestName, "stub %q is a symbolic link, which is always kept whole", p)
		case !n.full:
			return refuse(manifestName, "stub %q listed twice", p)
		}
		n.full = false
	}
	return nil
}

func (ld *loader) tools() error {
	for _, t := range ld.s.manifest.Tools {
		if len(t.Argv) == 0 || t.Key != ToolKey(t.Argv) {
			return refuse(manifestName, "tool run %q: key %q is not the hash of its argv", t.Argv, t.Key)
		}
		if _, dup := ld.s.tools[t.Key]; dup {
			return refuse(manifestName, "tool run %q listed twice", t.Argv)
		}
		ld.s.found[t.Argv[0]] = true
		ld.s.tools[t.Key] = ToolResult{
			Stdout: ld.outputs[t.Key+"/"+stdoutName], Stderr: ld.outputs[t.Key+"/"+stderrName],
			ExitStatus: t.ExitStatus, TimedOut: t.TimedOut, Error: t.Error,
		}
	}
	for _, name := range ld.s.manifest.ToolsFound {
		if name == "" || strings.ContainsAny(name, "/\x00") {
			return refuse(manifestName, "tool name %q", name)
		}
		ld.s.found[name] = true
	}
	for rest := range ld.outputs {
		key, _, _ := strings.Cut(rest, "/")
		if _, ok := ld.s.tools[key]; !ok {
			return refuse(toolsPrefix+rest, "output of a tool run the manifest does not list")
		}
	}
	return nil
}

// index adds the directories implied by the entries and lists each
// directory's children. An entry below a file, a link or a device is
// refused: a link as a parent would let a name reach where the link points.
func (s *Snapshot) index() error {
	paths := make([]string, 0, len(s.nodes))
	for p := range s.nodes {
		paths = append(paths, p)
	}
	for _, p := range paths {
		for d := path.Dir(p); d != "."; d = path.Dir(d) {
			n, ok := s.nodes[d]
			if !ok {
				s.nodes[d] = &node{mode: fs.ModeDir}
				continue
			}
			if !n.mode.IsDir() {
				return refuse(rootPrefix+p, "inside %s, which is a %v, not a directory", d, n.mode.Type())
			}
			break // d's own parents are checked from d
		}
	}
	for p := range s.nodes {
		d := path.Dir(p)
		s.children[d] = append(s.children[d], path.Base(p))
	}
	for _, c := range s.children {
		slices.Sort(c)
	}
	return nil
}

func typeName(t byte) string {
	switch t {
	case tar.TypeReg:
		return "regular file"
	case tar.TypeDir:
		return "directory"
	case tar.TypeSymlink:
		return "symbolic link"
	case tar.TypeLink:
		return "hard link"
	case tar.TypeChar, tar.TypeBlock:
		return "device node"
	case tar.TypeFifo:
		return "named pipe"
	}
	return fmt.Sprintf("type %q", t)
}
