// Package snapshot captures what one detection read of a machine into a single
// archive and replays it: the files, directories and symbolic links of the
// machine trees (/sys, /proc, /dev, ...) that were read, listed or stat'ed,
// the vendor tool runs (argv, stdout, stderr, exit status, timed out) and the
// environment variables consulted.
//
// The archive is a gzip-compressed tar (archive/tar, compress/gzip: standard
// library, and every user can unpack it with `tar xzf` to see what is shared):
//
//	manifest.json               Manifest: format, library version, tools, env
//	root/<path>                 the machine tree: regular files, directories,
//	                            symbolic links (relative, inside the tree) and
//	                            device nodes (type only)
//	tools/<key>/stdout, stderr  the output of the tool run whose argv hashes to key
//
// Recorder writes it (recorder.go, write.go); Open and Read read it back under
// Limits (reader.go) into a Snapshot, the replay view (replay.go).
package snapshot

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"time"

	json "github.com/goccy/go-json"
)

// FormatVersion is the archive format this package writes. Format 2 lists
// the entries kept as existing only in the manifest (Manifest.Stubs); format
// 1 marked them with a vendor PAX record, which GNU tar reports as "Ignoring
// unknown extended header keyword" for every such entry when it lists the
// archive. Both are read (minFormatVersion).
const FormatVersion = 2

// minFormatVersion is the oldest archive format this package reads.
const minFormatVersion = 1

// Member names of the archive layout.
const (
	manifestName = "manifest.json"
	rootPrefix   = "root/"
	toolsPrefix  = "tools/"
	stdoutName   = "stdout"
	stderrName   = "stderr"
	// legacyStubRecord is how format 1 marked a tree entry kept as existing
	// only: a PAX record on the entry's header. Format 2 lists those entries
	// in Manifest.Stubs and writes no PAX record.
	legacyStubRecord = "AIHWACCEL.stub"
)

// Manifest describes a snapshot: what wrote it and what it holds besides the
// machine tree.
type Manifest struct {
	Format         int       `json:"format"`
	LibraryVersion string    `json:"library_version"`
	Created        time.Time `json:"created"`
	// Options are the detection options the capture ran with, as the caller
	// encoded them.
	Options json.RawMessage `json:"options,omitempty"`
	// KeptIDs is true when serial numbers and UUIDs were left in.
	KeptIDs bool        `json:"kept_ids"`
	Tools   []ToolEntry `json:"tools"`
	// ToolsFound are the tools detection looked up on PATH and found, by
	// name, sorted: a backend that asks whether a tool exists before it
	// decides what to run (or to say) gets the same answer on replay, even
	// when the tool itself never ran.
	ToolsFound []string   `json:"tools_found,omitempty"`
	Env        []EnvEntry `json:"env"`
	// Errors are reads of the tree that failed at capture for another reason
	// than "does not exist" (which is recorded by absence).
	Errors []ReadError `json:"errors"`
	// Withheld counts reads outside the recorded trees: they were answered
	// live at capture but nothing of them is in the archive.
	Withheld int `json:"withheld"`
	// Stubs are the tree entries (paths under root/, sorted) whose existence
	// and type were recorded but not their content or listing: a file only
	// stat'ed, a directory only traversed. Format 2 and later.
	Stubs []string `json:"stubs,omitempty"`
}

// ToolEntry is one recorded tool run; its output is under tools/<Key>/.
type ToolEntry struct {
	Argv       []string `json:"argv"`
	Key        string   `json:"key"`
	ExitStatus int      `json:"exit_status"`
	TimedOut   bool     `json:"timed_out"`
	// Error is the caller's name for a failure that is neither an exit
	// status nor a timeout (output too large, incomplete), "" otherwise.
	Error string `json:"error,omitempty"`
}

// EnvEntry is one environment variable consulted: its value, or unset.
type EnvEntry struct {
	Name  string `json:"name"`
	Value string `json:"value"`
	Set   bool   `json:"set"`
}

// ReadError is a read that failed at capture. Kind is ErrorPermission or
// ErrorOther; the error text is not kept (it can hold host paths).
type ReadError struct {
	Path string `json:"path"`
	Kind string `json:"kind"`
}

// Kinds of ReadError.
const (
	ErrorPermission = "permission"
	ErrorOther      = "other"
)

// ToolResult is the outcome of one tool run.
type ToolResult struct {
	Stdout     []byte
	Stderr     []byte
	ExitStatus int
	TimedOut   bool
	Error      string
}

// ToolKey names the directory of a tool run's output: the first 16 bytes of
// the SHA-256 of the argv elements, each followed by a NUL byte, in hex. The
// argv itself is in the manifest, so the key only has to be unique and
// stable.
func ToolKey(argv []string) string {
	h := sha256.New()
	for _, a := range argv {
		h.Write([]byte(a))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil)[:16])
}

// toolMember is the archive name of one output stream of the run key.
func toolMember(key, stream string) string {
	return toolsPrefix + key + "/" + stream
}

// isToolKey reports whether s has the shape ToolKey produces.
func isToolKey(s string) bool {
	if len(s) != 32 {
		return false
	}
	return strings.Trim(s, "0123456789abcdef") == ""
}
