package machine

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"unicode/utf8"

	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// MaxFileBytes caps every sysfs/procfs read: real attribute files are a page
// at most, and a hostile tree must not make us read gigabytes.
const MaxFileBytes = 64 << 10

// Machine is the view of one machine that every backend reads through.
type Machine struct {
	// FS is rooted at the sysroot: paths are "sys/...", "proc/...", "dev/...".
	fs        fs.FS
	runner    Runner
	noExec    bool
	lookupEnv func(string) (string, bool)
	// root is the sysroot when FS is os.DirFS(root): files are then read
	// with direct system calls (readRegular), not through os.File.
	root string

	// The PCI tree is scanned once per detection (pciScanOnce) and shared by
	// every backend, which run concurrently.
	pciScanOnce sync.Once
	pci         pciScan

	// memo holds what earlier detections of this sysroot read that cannot
	// have changed (memo.go); nil for an injected FS.
	memo *sysrootMemo
}

// Config says what a Machine views.
type Config struct {
	// Sysroot is the directory holding the machine's sys/, proc/ and dev/.
	Sysroot string
	// FS, when set, replaces the sysroot (tests): nothing is remembered
	// across detections for it.
	FS fs.FS
	// Runner runs the machine's tools; NoExec runs none.
	Runner Runner
	NoExec bool
	// LookupEnv reads the visibility variables (Env); nil reads none.
	LookupEnv func(string) (string, bool)
}

// New builds the view cfg describes. It fails only when the sysroot is not
// a directory.
func New(cfg Config) (*Machine, error) {
	m := &Machine{fs: cfg.FS, runner: cfg.Runner, noExec: cfg.NoExec, lookupEnv: cfg.LookupEnv}
	if m.lookupEnv == nil {
		m.lookupEnv = func(string) (string, bool) { return "", false }
	}
	if cfg.FS != nil {
		return m, nil
	}
	st, err := os.Stat(cfg.Sysroot)
	if err != nil {
		return nil, fmt.Errorf("sysroot %q: %w", cfg.Sysroot, err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("sysroot %q is not a directory", cfg.Sysroot)
	}
	m.fs, m.root, m.memo = os.DirFS(cfg.Sysroot), cfg.Sysroot, memoFor(cfg.Sysroot, st)
	return m, nil
}

// NoExec reports whether the machine's tools may not run.
func (m *Machine) NoExec() bool { return m.noExec }

// Run runs a tool through the machine's runner and returns the raw result,
// for backends that read a failed run's output (Tool turns every failure
// into a warning). Callers check NoExec first.
func (m *Machine) Run(ctx context.Context, tool string, args ...string) Result {
	return m.runner.Run(ctx, tool, args...)
}

// Env returns a visibility variable (CUDA_VISIBLE_DEVICES, ...) as the host
// sees it now, or as the env option overrides it.
func (m *Machine) Env(name string) (string, bool) { return m.lookupEnv(name) }

// ReadFile reads a whole file of the machine, at most MaxFileBytes. A longer
// file is an error: sysfs attributes are never that long.
// Only regular files are read: opening a FIFO would block forever and a
// device node (a link to /dev/zero) is never an attribute.
func (m *Machine) ReadFile(name string) ([]byte, error) {
	var out []byte
	err := m.WithFile(name, MaxFileBytes, func(b []byte) { out = bytes.Clone(b) })
	if out == nil && err == nil {
		out = []byte{}
	}
	return out, err
}

// withFile reads the regular file name, at most limit bytes, and hands its
// content to use. The slice is only valid during the call (it may be a
// pooled buffer): use copies what it keeps.
func (m *Machine) WithFile(name string, limit int, use func([]byte)) error {
	return m.read(name, limit, false, use)
}

// ReadHead returns at most n bytes from the start of a regular file ("" on
// error): the first block of a file that may be longer than any cap, such
// as /proc/cpuinfo of a big machine.
func (m *Machine) ReadHead(name string, n int) string {
	var s string
	if m.read(name, n, true, func(b []byte) { s = string(b) }) != nil {
		return ""
	}
	return s
}

// read is withFile that, with head, hands over the first limit bytes of a
// longer file instead of failing.
func (m *Machine) read(name string, limit int, head bool, use func([]byte)) error {
	if m.root != "" {
		return readRegularHead(m.root, name, limit, head, use)
	}
	st, err := fs.Stat(m.fs, name)
	if err != nil {
		return err
	}
	if !st.Mode().IsRegular() {
		return fmt.Errorf("%s: not a regular file (%v)", name, st.Mode().Type())
	}
	f, err := m.fs.Open(name)
	if err != nil {
		return err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, int64(limit)+1))
	if err != nil {
		return err
	}
	if head && len(b) > limit {
		b = b[:limit]
	}
	if len(b) > limit {
		return fmt.Errorf("%s: longer than %d bytes", name, limit)
	}
	use(b)
	return nil
}

// readBufs holds read buffers of MaxFileBytes+1: a detection reads hundreds
// of small sysfs files and each needs one only while it is read.
var readBufs = sync.Pool{New: func() any { b := make([]byte, MaxFileBytes+1); return &b }}

// readRegular reads root/name as os.DirFS(root) would open it (same path
// validation, symbolic links followed), with four or five system calls and
// no os.File: stat, open, fstat, read until end of file, close. os.File
// would add fcntl calls for its poller on every open.
//
// The file is checked to be regular twice: by stat before opening, so a
// device node is never opened (opening one can have effects: a watchdog
// starts, a tape rewinds), and by fstat of the open descriptor, so a FIFO
// swapped in between is refused too; O_NONBLOCK makes that open return at
// once instead of waiting for a writer.
func readRegular(root, name string, limit int, use func([]byte)) error {
	return readRegularHead(root, name, limit, false, use)
}

// readRegularHead is readRegular that, with head, hands over the first limit
// bytes of a longer file instead of failing.
func readRegularHead(root, name string, limit int, head bool, use func([]byte)) error {
	if !fs.ValidPath(name) {
		return &fs.PathError{Op: "open", Path: name, Err: fs.ErrInvalid}
	}
	full := root + "/" + name
	var st syscall.Stat_t
	if err := retryEINTR(func() error { return syscall.Stat(full, &st) }); err != nil {
		return &fs.PathError{Op: "stat", Path: name, Err: err}
	}
	if err := checkRegular(name, &st); err != nil {
		return err
	}
	var fd int
	err := retryEINTR(func() (err error) {
		fd, err = syscall.Open(full, syscall.O_RDONLY|syscall.O_CLOEXEC|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
		return err
	})
	if err != nil {
		return &fs.PathError{Op: "open", Path: name, Err: err}
	}
	defer syscall.Close(fd)
	if err := syscall.Fstat(fd, &st); err != nil {
		return &fs.PathError{Op: "stat", Path: name, Err: err}
	}
	if err := checkRegular(name, &st); err != nil {
		return err
	}
	pooled := readBufs.Get().(*[]byte)
	defer readBufs.Put(pooled)
	b := (*pooled)[:0]
	if need := int(min(st.Size, int64(limit))) + 1; need > cap(b) {
		b = make([]byte, 0, need) // a large file that says its size (procfs says 0)
	}
	for len(b) <= limit {
		if len(b) == cap(b) {
			b = slices.Grow(b, min(cap(b), limit+1-len(b)))
		}
		var n int
		err := retryEINTR(func() (err error) {
			n, err = syscall.Read(fd, b[len(b):min(cap(b), limit+1)])
			return err
		})
		if err != nil {
			return &fs.PathError{Op: "read", Path: name, Err: err}
		}
		if n <= 0 {
			break
		}
		b = b[:len(b)+n]
	}
	if cap(b) > cap(*pooled) && cap(b) <= maxPooledRead {
		*pooled = b[:cap(b)] // keep the larger buffer for the next large file (cpuinfo)
	}
	if head && len(b) > limit {
		b = b[:limit]
	}
	if len(b) > limit {
		return fmt.Errorf("%s: longer than %d bytes", name, limit)
	}
	use(b)
	return nil
}

// maxPooledRead bounds the read buffers kept for reuse: /proc/cpuinfo of a
// few hundred CPUs fits; a larger buffer is left to the garbage collector.
const maxPooledRead = 1 << 20

// checkRegular refuses anything but a regular file, naming its type as
// fs.FileMode does ("p---------" for a FIFO).
func checkRegular(name string, st *syscall.Stat_t) error {
	var t fs.FileMode
	switch uint32(st.Mode) & syscall.S_IFMT {
	case syscall.S_IFREG:
		return nil
	case syscall.S_IFDIR:
		t = fs.ModeDir
	case syscall.S_IFIFO:
		t = fs.ModeNamedPipe
	case syscall.S_IFCHR:
		t = fs.ModeDevice | fs.ModeCharDevice
	case syscall.S_IFBLK:
		t = fs.ModeDevice
	case syscall.S_IFSOCK:
		t = fs.ModeSocket
	case syscall.S_IFLNK:
		t = fs.ModeSymlink
	default:
		t = fs.ModeIrregular
	}
	return fmt.Errorf("%s: not a regular file (%v)", name, t)
}

// retryEINTR repeats a system call interrupted by a signal, as package os does.
func retryEINTR(call func() error) error {
	for {
		if err := call(); err != syscall.EINTR {
			return err
		}
	}
}

// ReadString reads a file and returns its text trimmed of surrounding space,
// with invalid UTF-8 and control characters removed.
func (m *Machine) ReadString(name string) (string, error) {
	var s string
	err := m.WithFile(name, MaxFileBytes, func(b []byte) { s = CleanText(string(b)) })
	return s, err
}

// ReadInt reads a file holding one integer (decimal, or hex with 0x).
// The raw text is parsed, not ReadString's cleaned text, which would join
// "4\n2" into 42.
func (m *Machine) ReadInt(name string) (int64, error) {
	var v int64
	var perr error
	err := m.WithFile(name, MaxFileBytes, func(b []byte) { v, perr = ParseInt(string(b)) })
	if err != nil {
		return 0, err
	}
	return v, perr
}

// Exists reports whether name exists on the machine (a dangling link does not).
func (m *Machine) Exists(name string) bool {
	if m.root != "" {
		var st syscall.Stat_t
		return fs.ValidPath(name) && retryEINTR(func() error { return syscall.Stat(m.root+"/"+name, &st) }) == nil
	}
	_, err := fs.Stat(m.fs, name)
	return err == nil
}

// ReadDir lists a directory; a missing directory is an empty list.
func (m *Machine) ReadDir(name string) []fs.DirEntry {
	es, err := fs.ReadDir(m.fs, name)
	if err != nil {
		return nil
	}
	return es
}

// ReadLink returns the target of a symbolic link, or "" when name is not one.
func (m *Machine) ReadLink(name string) string {
	if rl, ok := m.fs.(fs.ReadLinkFS); ok {
		t, err := rl.ReadLink(name)
		if err == nil {
			return t
		}
	}
	return ""
}

// LinkBase returns the last element of a link's target: the driver name of
// ".../device/driver -> ../../bus/pci/drivers/nvidia".
func (m *Machine) LinkBase(name string) string {
	t := m.ReadLink(name)
	if t == "" {
		return ""
	}
	return path.Base(t)
}

// ParseInt parses a decimal or 0x-prefixed hexadecimal integer.
func ParseInt(s string) (int64, error) {
	s = strings.TrimSpace(s)
	if strings.HasPrefix(s, "0x") || strings.HasPrefix(s, "0X") {
		v, err := strconv.ParseUint(s[2:], 16, 63)
		return int64(v), err
	}
	return strconv.ParseInt(s, 10, 64)
}

// CleanText trims s and drops invalid UTF-8, control characters and whole
// terminal escape sequences (ECMA-48 CSI "ESC [ ... final", OSC "ESC ] ...
// BEL|ST", two-byte escapes, C1 controls), so a hostile name cannot break a
// table or a terminal, nor leave "[31m" behind.
func CleanText(s string) string {
	s = strings.TrimSpace(s)
	if utf8.ValidString(s) && !strings.ContainsFunc(s, IsControl) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == 0x1b:
			i += escapeLen(s[i:])
			continue
		case r == 0x9b: // C1 CSI: the same sequence as "ESC ["
			i += size + csiBodyLen(s[i+size:])
			continue
		case r == utf8.RuneError && size <= 1, IsControl(r):
		default:
			b.WriteRune(r)
		}
		i += size
	}
	return strings.TrimSpace(b.String())
}

// escapeLen returns the length of the escape sequence at the start of s
// (s[0] is ESC); an unterminated sequence runs to the end of s.
func escapeLen(s string) int {
	if len(s) < 2 {
		return len(s)
	}
	switch s[1] {
	case '[':
		return 2 + csiBodyLen(s[2:])
	case ']', 'P', '_', '^': // OSC, DCS, APC, PM: strings ended by BEL or ST
		for j := 2; j < len(s); j++ {
			if s[j] == 0x07 {
				return j + 1
			}
			if s[j] == 0x1b && j+1 < len(s) && s[j+1] == '\\' {
				return j + 2
			}
		}
		return len(s)
	}
	return 2 // ESC and one byte: "ESC c", "ESC 7", ...
}

// csiBodyLen returns the length of a CSI sequence's parameters,
// intermediates and final byte (0x20-0x3f then one byte 0x40-0x7e).
func csiBodyLen(s string) int {
	for j := 0; j < len(s); j++ {
		if s[j] >= 0x40 && s[j] <= 0x7e {
			return j + 1
		}
		if s[j] < 0x20 || s[j] > 0x3f {
			return j // malformed: drop what was read, keep the rest
		}
	}
	return len(s)
}

// isControl reports C0 controls but tab, DEL and C1 controls (U+0080-U+009F).
func IsControl(r rune) bool { return r < 0x20 && r != '\t' || r >= 0x7f && r <= 0x9f }

// Tool runs a vendor tool through the machine's runner and turns every
// failure into a typed warning. ok is false when there is no usable output;
// a missing tool gives ok false and no warning (absence is not a problem).
// With NoExec nothing runs.
func (m *Machine) Tool(ctx context.Context, backend, tool string, args ...string) (out []byte, w *registry.Warning, ok bool) {
	if m.noExec {
		return nil, nil, false
	}
	res := m.runner.Run(ctx, tool, args...)
	if res.Err == nil {
		return res.Stdout, nil, true
	}
	if errors.Is(res.Err, ErrToolMissing) {
		return nil, nil, false
	}
	return nil, ToolWarning(backend, tool, args, res), false
}

// HasTool reports whether tool resolves on the machine's PATH (and exec is allowed).
func (m *Machine) HasTool(tool string) bool {
	if m.noExec {
		return false
	}
	if l, ok := m.runner.(interface{ Has(string) bool }); ok {
		return l.Has(tool)
	}
	return true
}

// ToolWarning converts a failed run into the warning the registry reports.
func ToolWarning(backend, tool string, args []string, res Result) *registry.Warning {
	w := &registry.Warning{Backend: backend, Tool: tool}
	cmd := strings.TrimSpace(tool + " " + strings.Join(args, " "))
	switch {
	case errors.Is(res.Err, ErrTimeout):
		w.Code = registry.WarnToolTimeout
		w.Message = fmt.Sprintf("%s: %v", cmd, res.Err)
	case errors.Is(res.Err, ErrTooLarge):
		w.Code = registry.WarnOutputTooLarge
		w.Message = fmt.Sprintf("%s: %v", cmd, res.Err)
	default:
		w.Code = registry.WarnToolFailed
		msg := fmt.Sprintf("%s: %v", cmd, res.Err)
		if res.ExitCode > 0 { // -1: killed by a signal, which has no exit code
			code := res.ExitCode
			w.ExitCode = &code
		}
		if line := FirstLine(res.Stderr); line != "" {
			msg += ": " + line
		} else if line := FirstLine(res.Stdout); line != "" {
			msg += ": " + line
		}
		w.Message = msg
	}
	return w
}

func FirstLine(b []byte) string {
	s := strings.TrimSpace(string(b))
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	s = CleanText(s)
	if len(s) > 200 {
		s = s[:200] + "..."
	}
	return strings.TrimSpace(s)
}
