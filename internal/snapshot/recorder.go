package snapshot

import (
	"errors"
	"io/fs"
	"path"
	"strings"
	"sync"
	"time"

	json "github.com/goccy/go-json"
)

// Source is the live machine a Recorder reads through. Names are valid
// io/fs paths relative to the sysroot ("sys/class/drm"). ReadFile and Stat
// follow symbolic links; ReadDir lists a directory (following links to it);
// ReadLink and Lstat do not follow the last component. The live source is
// responsible for reading safely (regular files only, size caps).
type Source interface {
	ReadFile(name string) ([]byte, error)
	ReadDir(name string) ([]fs.DirEntry, error)
	ReadLink(name string) (string, error)
	Lstat(name string) (fs.FileInfo, error)
	Stat(name string) (fs.FileInfo, error)
}

// Options are what a capture records besides the machine.
type Options struct {
	// LibraryVersion is the version of the library that captured.
	LibraryVersion string
	// Created is the capture time written in the manifest; the only part of
	// the archive that is not a function of the machine.
	Created time.Time
	// DetectOptions are the detection options of the capture, encoded to
	// JSON as they are. Leave host paths (sysroot, PATH) out of them.
	DetectOptions any
	// KeepIDs keeps serial numbers and UUIDs. MAC and IP addresses are
	// scrubbed whatever it says.
	KeepIDs bool
}

// Recorder is a Source that answers from a live Source and records what it
// answered, at the physical location of each entry: a file read through
// sys/class/drm/card0/device/vendor is recorded as the links card0 and
// device plus the file they lead to, so replay sees links as links. Only
// the trees of policy.go are recorded; other reads are answered but
// withheld. Safe for concurrent use.
type Recorder struct {
	live Source
	opts Options

	mu       sync.Mutex
	nodes    map[string]*node
	kinds    map[string]linkInfo // Lstat of live paths, for resolve
	errors   map[string]string
	tools    map[string]*toolRun
	env      map[string]EnvEntry
	found    map[string]bool
	withheld int
}

// node is one recorded entry of the tree.
type node struct {
	mode   fs.FileMode // type bits only
	data   []byte      // regular file content
	target string      // symbolic link target
	// full is set when the content (file) or the listing (directory) was
	// recorded, not only the entry's existence and type.
	full bool
}

type linkInfo struct {
	mode   fs.FileMode
	target string
	err    error
}

type toolRun struct {
	argv []string
	res  ToolResult
}

// NewRecorder returns a Recorder reading through live.
func NewRecorder(live Source, opts Options) *Recorder {
	return &Recorder{live: live, opts: opts, nodes: map[string]*node{}, kinds: map[string]linkInfo{},
		errors: map[string]string{}, tools: map[string]*toolRun{}, env: map[string]EnvEntry{}, found: map[string]bool{}}
}

// ReadFile reads name from the live machine and records the file.
func (r *Recorder) ReadFile(name string) ([]byte, error) {
	b, err := r.live.ReadFile(name)
	p, ok := r.place(name, true)
	if !ok {
		return b, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if err != nil {
		r.noteError(p, err)
		return b, err
	}
	if _, content := mayRecord(p); !content {
		r.addStub(p, 0)
		return b, err
	}
	n := r.addStub(p, 0)
	n.data, n.full = append([]byte(nil), b...), true
	return b, err
}

// ReadDir lists name on the live machine and records the directory, each of
// its entries with its type (links with their targets).
func (r *Recorder) ReadDir(name string) ([]fs.DirEntry, error) {
	es, err := r.live.ReadDir(name)
	p, ok := r.place(name, true)
	if !ok {
		return es, err
	}
	if err != nil {
		r.mu.Lock()
		r.noteError(p, err)
		r.mu.Unlock()
		return es, err
	}
	// read the links' targets before taking the lock: the live source may
	// be slow
	targets := make(map[string]string)
	for _, e := range es {
		if e.Type()&fs.ModeSymlink != 0 {
			c := path.Join(p, e.Name())
			if t, err := r.live.ReadLink(c); err == nil {
				targets[c] = t
			}
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.addStub(p, fs.ModeDir).full = true
	for _, e := range es {
		c := path.Join(p, e.Name())
		if ok, _ := mayRecord(c); !ok {
			r.withheld++
			continue
		}
		if t, isLink := targets[c]; isLink {
			r.addLink(c, t)
			continue
		}
		if e.Type()&fs.ModeSymlink == 0 {
			r.addStub(c, e.Type())
		}
	}
	return es, err
}

// ReadLink reads the link name and records it.
func (r *Recorder) ReadLink(name string) (string, error) {
	t, err := r.live.ReadLink(name)
	if p, ok := r.place(name, false); ok && err == nil {
		r.mu.Lock()
		r.addLink(p, t)
		r.mu.Unlock()
	}
	return t, err
}

// Lstat records the type of name without following it.
func (r *Recorder) Lstat(name string) (fs.FileInfo, error) {
	st, err := r.live.Lstat(name)
	r.recordStat(name, false, st, err)
	return st, err
}

// Stat records the type of what name leads to.
func (r *Recorder) Stat(name string) (fs.FileInfo, error) {
	st, err := r.live.Stat(name)
	r.recordStat(name, true, st, err)
	return st, err
}

func (r *Recorder) recordStat(name string, follow bool, st fs.FileInfo, err error) {
	p, ok := r.place(name, follow)
	if !ok {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if err != nil {
		r.noteError(p, err)
		return
	}
	if st.Mode()&fs.ModeSymlink != 0 {
		if t, err := r.live.ReadLink(p); err == nil {
			r.addLink(p, t)
		}
		return
	}
	r.addStub(p, st.Mode().Type())
}

// RecordTool records one tool run. argv[0] is the tool's name as detection
// asked for it ("nvidia-smi"), not the path it resolved to, so replay does
// not depend on PATH. A tool that was not found is not recorded: replay
// treats any run the archive lacks as "tool absent". The first record of an
// argv wins.
func (r *Recorder) RecordTool(argv []string, res ToolResult) {
	if len(argv) == 0 {
		return
	}
	key := ToolKey(argv)
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.tools[key]; ok {
		return
	}
	res.Stdout = append([]byte(nil), res.Stdout...)
	res.Stderr = append([]byte(nil), res.Stderr...)
	r.tools[key] = &toolRun{argv: append([]string(nil), argv...), res: res}
}

// RecordToolFound records that detection looked tool up on PATH and found
// it. Only the name is kept, never the directory it was found in; a name
// holding a slash is not a tool name and is ignored.
func (r *Recorder) RecordToolFound(tool string) {
	if tool == "" || strings.ContainsRune(tool, '/') {
		return
	}
	r.mu.Lock()
	r.found[tool] = true
	r.mu.Unlock()
}

// RecordEnv records one environment variable consulted. PATH is never
// recorded: its entries name the user's directories, and replay needs no
// PATH (tools are answered from the archive).
func (r *Recorder) RecordEnv(name, value string, set bool) {
	if name == "PATH" {
		return
	}
	if !set {
		value = ""
	}
	r.mu.Lock()
	r.env[name] = EnvEntry{Name: name, Value: value, Set: set}
	r.mu.Unlock()
}

// place returns the physical path of name (following the last component
// when follow), recording every link on the way, and whether it may be
// recorded. A path that leaves the tree or the recorded trees is withheld.
func (r *Recorder) place(name string, follow bool) (string, bool) {
	p, err := resolve(name, follow, r.linkOf)
	if err == nil {
		if ok, _ := mayRecord(p); ok {
			return p, true
		}
	}
	r.mu.Lock()
	r.withheld++
	r.mu.Unlock()
	return "", false
}

// linkOf looks p up on the live machine (once per capture) and records it
// when it is a link inside the recorded trees.
func (r *Recorder) linkOf(p string) (string, bool, error) {
	r.mu.Lock()
	li, ok := r.kinds[p]
	r.mu.Unlock()
	if !ok {
		li = linkInfo{}
		st, err := r.live.Lstat(p)
		switch {
		case err != nil:
			li.err = err
		case st.Mode()&fs.ModeSymlink != 0:
			li.mode = fs.ModeSymlink
			li.target, li.err = r.live.ReadLink(p)
		default:
			li.mode = st.Mode().Type()
		}
		r.mu.Lock()
		r.kinds[p] = li
		r.mu.Unlock()
	}
	if li.err != nil || li.mode&fs.ModeSymlink == 0 {
		return "", false, nil // absent or not a link: the read fails or goes on
	}
	if ok, _ := mayRecord(p); !ok {
		return "", false, errEscape
	}
	r.mu.Lock()
	r.addLink(p, li.target)
	r.mu.Unlock()
	return li.target, true, nil
}

// addLink records the link p. An absolute target is taken from the sysroot
// and stored relative; a target that leaves the tree is not recorded (the
// reader would refuse it), nor a link whose target leaves the recorded
// trees. Holds r.mu.
func (r *Recorder) addLink(p, target string) {
	rel, ok := relativeTarget(p, target)
	if !ok {
		r.withheld++
		return
	}
	r.ensureParents(p)
	r.nodes[p] = &node{mode: fs.ModeSymlink, target: rel, full: true}
}

// relativeTarget returns target as a relative link from p, and whether it
// stays inside the tree and leads (lexically) into the recorded trees.
func relativeTarget(p, target string) (string, bool) {
	if path.IsAbs(target) {
		to := path.Clean(target)[1:]
		if to == "" {
			to = "."
		}
		target = relPath(path.Dir(p), to)
	}
	if !linkStaysInside(p, target) {
		return "", false
	}
	ok, _ := mayRecord(path.Join(path.Dir(p), target))
	return target, ok
}

// relPath returns the relative path from directory from to to, both clean
// tree paths.
func relPath(from, to string) string {
	f, t := splitPath(from), splitPath(to)
	i := 0
	for i < len(f) && i < len(t) && f[i] == t[i] {
		i++
	}
	var out []string
	for range f[i:] {
		out = append(out, "..")
	}
	out = append(out, t[i:]...)
	if len(out) == 0 {
		return "."
	}
	return path.Join(out...)
}

// addStub records that p exists with type mode, unless something more is
// known of it already. Holds r.mu.
func (r *Recorder) addStub(p string, mode fs.FileMode) *node {
	if p == "." {
		return &node{mode: fs.ModeDir} // the root is implied, never a member
	}
	if n, ok := r.nodes[p]; ok {
		return n
	}
	r.ensureParents(p)
	n := &node{mode: mode.Type()}
	r.nodes[p] = n
	return n
}

// ensureParents records the directories above p. Holds r.mu.
func (r *Recorder) ensureParents(p string) {
	for d := path.Dir(p); d != "."; d = path.Dir(d) {
		if _, ok := r.nodes[d]; ok {
			return
		}
		r.nodes[d] = &node{mode: fs.ModeDir}
	}
}

// noteError records a failed read: absence is recorded by absence, other
// failures by kind. Holds r.mu.
func (r *Recorder) noteError(p string, err error) {
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case errors.Is(err, fs.ErrPermission):
		r.errors[p] = ErrorPermission
	default:
		r.errors[p] = ErrorOther
	}
}

// detectOptionsJSON encodes Options.DetectOptions for the manifest.
func (o Options) detectOptionsJSON() (json.RawMessage, error) {
	if o.DetectOptions == nil {
		return nil, nil
	}
	return json.Marshal(o.DetectOptions)
}
