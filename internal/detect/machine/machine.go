package machine

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"iter"
	"os"
	"path"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
	"github.com/ai-hwaccel/ai-hwaccel/internal/snapshot"
)

// MaxFileBytes caps every sysfs/procfs read: real attribute files are a page
// at most, and a hostile tree must not make us read gigabytes.
const MaxFileBytes = 64 << 10

// Machine is the view of one machine that every backend reads through.
type Machine struct {
	// src holds the machine's files; paths are "sys/...", "proc/...", "dev/...".
	src       source
	runner    Runner
	noExec    bool
	nvml      string
	amdsmi    string
	lookupEnv func(string) (string, bool)
	// root is the sysroot directory, "" for an injected fs.FS.
	root string

	// The PCI tree is scanned once per detection (pciScanOnce) and shared by
	// every backend, which run concurrently.
	pciScanOnce sync.Once
	pci         pciScan

	// notes are warnings the view raised itself (a tool that left a process
	// running, ...), attributed to the backend that caused them; Detect
	// merges them (Notes).
	notesMu sync.Mutex
	notes   []registry.Warning
	denied  map[string]bool // paths already reported by noteDenied

	// memo holds what earlier detections of this sysroot read that cannot
	// have changed (memo.go); nil for an injected FS.
	memo *sysrootMemo

	// seen holds what this detection already read (seen.go): backends
	// running side by side ask for the same DMI, cgroup and directory
	// listings, and one detection is one reading of the machine.
	seen seenReads

	// inline is on while backends run on the detection's caller (inline.go).
	inline inlineState

	// cpuOnce reads the host's cpuinfo once for the backends that use it.
	cpuOnce sync.Once
	cpuInfo CPUInfo
	cpuErr  error
}

// HostCPU returns what load gives, calling it once per detection: the CPU
// and environment backends share one reading of /proc/cpuinfo.
func (m *Machine) HostCPU(load func() (CPUInfo, error)) (CPUInfo, error) {
	m.cpuOnce.Do(func() { m.cpuInfo, m.cpuErr = load() })
	return m.cpuInfo, m.cpuErr
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
	// NVML is the NVML library the cuda backend may load in-process ("":
	// none; detect.Options.NVMLLibrary).
	NVML string
	// AMDSMI is the AMD SMI library the rocm backend may load in-process
	// ("": none; detect.Options.AMDSMILibrary).
	AMDSMI string
	// Source, when set, replaces Sysroot and FS: a capture's
	// snapshot.Recorder over SysrootSource (snapshot.go). Nothing is
	// remembered across detections for it, so every read reaches it.
	Source snapshot.Source
}

// NVMLLibrary is the NVML library detection may load in-process, "" for
// none (Config.NVML).
// An inline run asking for a library is run again on a worker.
func (m *Machine) NVMLLibrary() string { return m.library(m.nvml) }

// AMDSMILibrary is the AMD SMI library detection may load in-process, ""
// for none (Config.AMDSMI).
// An inline run asking for a library is run again on a worker.
func (m *Machine) AMDSMILibrary() string { return m.library(m.amdsmi) }

// library is a library's path as a backend may load it: "" in an inline
// run, which is marked escaped instead (inline.go).
func (m *Machine) library(path string) string {
	if path != "" && m.refuseInline(false) {
		return ""
	}
	return path
}

// New builds the view cfg describes. It fails only when the sysroot is not
// a directory.
func New(cfg Config) (*Machine, error) {
	m := &Machine{runner: cfg.Runner, noExec: cfg.NoExec, nvml: cfg.NVML, amdsmi: cfg.AMDSMI, lookupEnv: cfg.LookupEnv}
	if m.lookupEnv == nil {
		m.lookupEnv = func(string) (string, bool) { return "", false }
	}
	switch {
	case cfg.Source != nil:
		m.src = viaSource{cfg.Source}
		return m, nil
	case cfg.FS != nil:
		m.src = fsSource{cfg.FS}
		return m, nil
	}
	st, err := statSysroot(cfg.Sysroot)
	if err != nil {
		return nil, err
	}
	m.memo = memoFor(cfg.Sysroot, st)
	src := dirSource{path: cfg.Sysroot}
	var held *heldDirs
	if m.memo != nil {
		// The sysroot's descriptors are kept across its detections
		// (held_linux.go): the memo's root stamp and st are the witness.
		held = &m.memo.held
		src.dir = held.rootFor(cfg.Sysroot, st)
	} else {
		src.dir = openBeneathDir(cfg.Sysroot)
	}
	if src.dir != nil {
		src.kernel, src.lazy = newKernelMounts(src.dir, held), &lazyRoot{path: cfg.Sysroot}
	} else if src.root, err = openSysroot(cfg.Sysroot); err != nil {
		return nil, err
	}
	m.src, m.root = src, cfg.Sysroot
	return m, nil
}

// statSysroot checks that dir is a directory.
func statSysroot(dir string) (fs.FileInfo, error) {
	st, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("sysroot %q: %w", dir, err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("sysroot %q is not a directory", dir)
	}
	return st, nil
}

// openSysroot opens the directory dir as an os.Root, where openat2 is
// unusable. The root stays open for the view's life: a Machine lives for
// one detection, and the garbage collector closes the descriptor after it.
func openSysroot(dir string) (*os.Root, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("sysroot %q: %w", dir, err)
	}
	return root, nil
}

// NoExec reports whether the machine's tools may not run.
func (m *Machine) NoExec() bool { return m.noExec }

// Run runs a tool through the machine's runner and returns the raw result,
// for backends that read a failed run's output (Tool turns every failure
// into a warning). Callers check NoExec first.
func (m *Machine) Run(ctx context.Context, tool string, args ...string) Result {
	if m.inline.on.Load() && m.refuseInline(m.inlineTool(tool)) {
		return Result{Err: fmt.Errorf("%s: %w", tool, ErrNeedsWorker)}
	}
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

// WithFile reads the regular file name, at most limit bytes, and hands its
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
	if m.inline.on.Load() {
		if err := m.inlineRead(name); err != nil {
			return err
		}
	}
	data, err := m.seen.file(fileKey{name, limit, head}, func() ([]byte, error) {
		return m.readOnce(name, limit, head)
	})
	if err == nil {
		use(data)
	}
	return err
}

// readOnce is read's first reading of a file in a detection: from the
// kernel constants remembered across detections (memo.go), else from the
// source.
func (m *Machine) readOnce(name string, limit int, head bool) ([]byte, error) {
	constant := m.memo != nil && isKernelConstant(name) && onKernelSysfs(m.src)
	if constant {
		if data, err, ok := m.constantRemembered(name, limit, head); ok {
			return data, err
		}
	}
	var kept []byte
	err := m.src.readFile(name, limit, head, func(b []byte) { kept = bytes.Clone(b) })
	m.noteDenied(name, err)
	if constant && stableReadErr(err) {
		m.rememberConstant(name, limit, head, kept, err)
	}
	return kept, err
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
	_, err := m.stat(name)
	return err == nil
}

// stat is the source's stat (links followed), once per path and detection.
func (m *Machine) stat(name string) (fs.FileInfo, error) {
	return m.seen.stat(name, func() (fs.FileInfo, error) {
		fi, err := m.src.stat(name)
		m.noteDenied(name, err)
		return fi, err
	})
}

// ReadDir lists a directory; a missing directory is an empty list.
func (m *Machine) ReadDir(name string) []fs.DirEntry {
	es, err := m.seen.dir(name, func() ([]fs.DirEntry, error) { return m.readDirOnce(name) })
	if err != nil {
		return nil
	}
	return es
}

// DirEntries yields the entries of a directory, as ReadDir lists them (a
// missing directory yields none), without copying the listing: for a caller
// that only looks at each entry. A listing of /dev is some 2 KB, and three
// backends read it in every detection (docs/performance.md, "Eighth pass").
func (m *Machine) DirEntries(name string) iter.Seq[fs.DirEntry] {
	return func(yield func(fs.DirEntry) bool) {
		for _, e := range m.sharedListing(name) {
			if !yield(e) {
				return
			}
		}
	}
}

// sharedListing is ReadDir's listing itself, not a copy: the caller only
// reads it.
func (m *Machine) sharedListing(name string) []fs.DirEntry {
	es, err := m.seen.sharedDir(name, func() ([]fs.DirEntry, error) { return m.readDirOnce(name) })
	if err != nil {
		return nil
	}
	return es
}

// readDirOnce is ReadDir's first listing of a directory in a detection:
// remembered across detections for a directory of the running kernel's
// /dev while its stat stays the same (memo.go, listingStamp), else from
// the source.
func (m *Machine) readDirOnce(name string) ([]fs.DirEntry, error) {
	stamp, stamped := m.listingStamp(name)
	if stamped {
		if es, ok := m.listingRemembered(name, stamp); ok {
			return es, nil
		}
	}
	es, err := m.src.readDir(name)
	m.noteDenied(name, err)
	if stamped && err == nil && settledStamp(stamp, now()) && listingOnMemoryFS(m.src, name) {
		m.rememberListing(name, stamp, es)
	}
	return es, err
}

// ReadLink returns the target of a symbolic link, or "" when name is not one.
func (m *Machine) ReadLink(name string) string {
	t, err := m.seen.link(name, func() (string, error) {
		t, err := m.src.readLink(name)
		m.noteDenied(name, err)
		return t, err
	})
	if err != nil {
		return ""
	}
	return t
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

// IsControl reports C0 controls but tab, DEL and C1 controls (U+0080-U+009F).
func IsControl(r rune) bool { return r < 0x20 && r != '\t' || r >= 0x7f && r <= 0x9f }

// Tool runs a vendor tool through the machine's runner and turns every
// failure into a typed warning. ok is false when there is no usable output;
// a missing tool gives ok false and no warning (absence is not a problem).
// With NoExec nothing runs.
func (m *Machine) Tool(ctx context.Context, backend, tool string, args ...string) (out []byte, w *registry.Warning, ok bool) {
	if m.noExec || m.inline.on.Load() && m.refuseInline(m.inlineTool(tool)) || m.LacksTool(tool) {
		return nil, nil, false
	}
	res := m.runner.Run(ctx, tool, args...)
	if res.LeftRunning > 0 {
		m.note(registry.Warning{Backend: backend, Tool: tool, Code: registry.WarnToolLeftProcess,
			Message: fmt.Sprintf("%s left %d process(es) running outside its process group (daemonized); killed",
				strings.TrimSpace(tool+" "+strings.Join(args, " ")), res.LeftRunning)})
	}
	if res.StdoutHeld {
		m.note(registry.Warning{Backend: backend, Tool: tool, Code: registry.WarnToolLeftProcess,
			Message: fmt.Sprintf("%s exited, but a process outside its process group kept its stdout open; "+
				"the output printed before the tool exited was used", strings.TrimSpace(tool+" "+strings.Join(args, " ")))})
	}
	if res.StatusLost && res.Err == nil {
		// The output is used, but the answer must not pass a failure's
		// output off as a success: say that the status is unknown.
		m.note(registry.Warning{Backend: backend, Tool: tool, Code: registry.WarnToolStatusLost,
			Message: fmt.Sprintf("%s: exit status lost (the host reaped the tool: SIGCHLD ignored or waitpid(-1)); "+
				"its output was used and may be a failure's: %s", strings.TrimSpace(tool+" "+strings.Join(args, " ")), FirstLine(res.Stdout))})
	}
	if res.Err == nil {
		return res.Stdout, nil, true
	}
	if errors.Is(res.Err, ErrToolMissing) {
		return nil, nil, false
	}
	return nil, ToolWarning(backend, tool, args, res), false
}

// note records a warning the view raised on behalf of a backend.
func (m *Machine) note(w registry.Warning) {
	m.notesMu.Lock()
	m.notes = append(m.notes, w)
	m.notesMu.Unlock()
}

// BackendView is the backend name of warnings about the machine view's own
// reads: sysfs and procfs are read through one view shared by every backend
// (the PCI tree is scanned once for all of them), so a refused read is not
// one backend's.
const BackendView = "machine"

// noteDenied records a read the machine refused (permission denied), once
// per path: an unreadable sysfs made GPUs vanish with no word (issue 14
// item 14), where a missing file means the hardware is not there.
func (m *Machine) noteDenied(name string, err error) {
	if err == nil || !errors.Is(err, fs.ErrPermission) {
		return
	}
	m.notesMu.Lock()
	defer m.notesMu.Unlock()
	if m.denied[name] {
		return
	}
	if m.denied == nil {
		m.denied = map[string]bool{}
	}
	m.denied[name] = true
	m.notes = append(m.notes, registry.Warning{Backend: BackendView, Code: registry.WarnSysfsRead, Path: "/" + name,
		Message: fmt.Sprintf("/%s: permission denied: what it describes is missing from the answer", CleanText(name))})
}

// Notes returns the warnings the view raised itself during the detection.
func (m *Machine) Notes() []registry.Warning {
	m.notesMu.Lock()
	defer m.notesMu.Unlock()
	return append([]registry.Warning(nil), m.notes...)
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

// LacksTool reports whether the runner knows, without running anything or
// recording a lookup in a capture, that tool is not there: a run would fail
// as missing. Tool then answers that at once, without the per-detection
// bookkeeping of a shared run (onceRunner: a key, a call and its channel,
// some 0.6 KB each time on a machine without tools; docs/performance.md,
// "Tenth pass"). A runner that cannot tell (a test's) lacks nothing.
func (m *Machine) LacksTool(tool string) bool {
	l, ok := m.runner.(interface{ Lacks(string) bool })
	return ok && l.Lacks(tool)
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

// FirstLine returns the first line of b for a message: trimmed, cleaned of
// control characters (CleanText) and cut at 200 bytes.
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

// IsMissing reports whether a read failed because the file is absent (as
// opposed to unreadable, irregular or too long): backends stay silent about
// what a machine simply does not have.
func IsMissing(err error) bool { return errors.Is(err, fs.ErrNotExist) }
