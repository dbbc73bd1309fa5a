// Package hub fetches what planning needs of a model repository on the
// Hugging Face Hub (config.json, the safetensors index or header, a GGUF
// header) into a local cache, and turns it into the request's "model"
// object (docs/requests.md). Only the CLI uses it: the library never opens
// a socket, a host passes what it fetched.
//
// The URLs are huggingface_hub's: files at
// {endpoint}/{repo}/resolve/{revision}/{file} (HUGGINGFACE_CO_URL_TEMPLATE)
// and a repository's file list at {endpoint}/api/models/{repo}/revision/{revision},
// with the endpoint from HF_ENDPOINT (default https://huggingface.co);
// https://github.com/huggingface/huggingface_hub/blob/main/src/huggingface_hub/constants.py.
// Errors are told apart as hf_raise_for_status does, by the X-Error-Code
// header (RepoNotFound, RevisionNotFound, EntryNotFound, GatedRepo) and
// X-Error-Message;
// https://github.com/huggingface/huggingface_hub/blob/main/src/huggingface_hub/utils/_http.py.
package hub

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	json "github.com/goccy/go-json"

	"github.com/ai-hwaccel/ai-hwaccel/internal/modelio"
)

// DefaultEndpoint is the Hub's address when HF_ENDPOINT is not set.
const DefaultEndpoint = "https://huggingface.co"

// Files of a repository that planning reads.
const (
	configFile  = "config.json"
	indexFile   = "model.safetensors.index.json"
	singleFile  = "model.safetensors"
	headerSufix = ".header" // cache name of a file's fetched header bytes
)

// Bounds on what is fetched: config.json and the index are small (the
// largest indexes, of 100k-tensor MoE models, are a few MB); a safetensors
// header is at most 100 MB (safetensors' MAX_HEADER_SIZE); a GGUF header
// is read in growing ranges up to maxGGUFHeader (internal/model's bound on
// a request's GGUF header bytes).
const (
	maxJSONFile       = 64 << 20
	maxSafetensorsHdr = 100_000_000
	firstGGUFRange    = 4 << 20
	maxGGUFHeader     = 64 << 20
)

// Client fetches from one endpoint into one cache.
type Client struct {
	Endpoint string // HF_ENDPOINT, default DefaultEndpoint
	Token    string // HF_TOKEN, sent as a bearer token when set
	CacheDir string // files go to CacheDir/hub/<org>--<name>/<revision>/
	Offline  bool   // read the cache only
	HTTP     *http.Client
	// Progress, when set, is told about a file that takes longer than
	// ProgressDelay to arrive (the CLI passes stderr on a terminal).
	Progress      io.Writer
	ProgressDelay time.Duration
}

// repoPattern is a Hub model id, org/name, with an optional ":QUANT" naming
// a GGUF file of the repository (ollama's and llama.cpp's -hf form,
// org/name:Q4_K_M). Hub names are letters, digits, '-', '_' and '.'.
var repoPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9][A-Za-z0-9._-]*(:[A-Za-z0-9._-]+)?$`)

// LooksLikeRepo reports whether s has the form of a Hub model id.
// A name ending in a model file's extension is a mistyped path, not an id.
func LooksLikeRepo(s string) bool {
	if !repoPattern.MatchString(s) || strings.Contains(s, "..") {
		return false
	}
	switch strings.ToLower(filepath.Ext(s)) {
	case ".gguf", ".safetensors", ".json", ".bin":
		return false
	}
	return true
}

// Ref is a parsed model id: the repository and the GGUF type asked for.
type Ref struct{ Repo, Quant string }

// ParseRef splits "org/name:Q4_K_M".
func ParseRef(s string) (Ref, error) {
	if !LooksLikeRepo(s) {
		return Ref{}, fmt.Errorf("%q is not a Hugging Face model id (org/name or org/name:QUANT)", s)
	}
	repo, quant, _ := strings.Cut(s, ":")
	return Ref{Repo: repo, Quant: quant}, nil
}

// Error kinds a caller may test with errors.Is.
var (
	ErrNotFound   = errors.New("not found")
	ErrGated      = errors.New("gated repository")
	ErrNoRevision = errors.New("no such revision")
	ErrNetwork    = errors.New("no network")
	ErrTruncated  = errors.New("truncated download")
	ErrNotCached  = errors.New("not in the cache")
)

// Fetch returns the request's model object for ref at revision ("" is
// main): {"config": ..., "safetensors_index": ...}, {"config": ...,
// "safetensors_header_base64": ...} or {"gguf_header_base64": ...}.
func (c *Client) Fetch(ctx context.Context, ref Ref, revision string) (map[string]any, error) {
	if revision == "" {
		revision = "main"
	}
	if strings.Contains(revision, "..") || strings.ContainsAny(revision, "\\\x00") {
		return nil, fmt.Errorf("revision %q is not a branch, tag or commit name", revision)
	}
	f := &fetch{c: c, ctx: ctx, repo: ref.Repo, rev: revision}
	if ref.Quant != "" {
		return f.gguf(ref.Quant)
	}
	cfg, err := f.file(configFile)
	if errors.Is(err, errNoEntry) {
		// No config.json: a GGUF-only repository (bartowski/..., unsloth/...-GGUF).
		return f.gguf("")
	}
	if err != nil {
		return nil, err
	}
	// modelio.DecodeConfig, the engine's own reader: config.json may carry
	// Python's Infinity, which the request (strict JSON) cannot.
	config, err := modelio.DecodeConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("config.json of %s: %v", ref.Repo, err)
	}
	obj := map[string]any{"config": config}
	idx, err := f.file(indexFile)
	switch {
	case err == nil:
		var index map[string]any
		if err := json.Unmarshal(idx, &index); err != nil {
			return nil, fmt.Errorf("%s of %s: %v", indexFile, ref.Repo, err)
		}
		obj["safetensors_index"] = index
		return obj, nil
	case !errors.Is(err, errNoEntry):
		return nil, err
	}
	hdr, err := f.safetensorsHeader(singleFile)
	switch {
	case err == nil:
		obj["safetensors_header_base64"] = base64.StdEncoding.EncodeToString(hdr)
	case !errors.Is(err, errNoEntry):
		return nil, err
	}
	return obj, nil
}

// errNoEntry: the repository and revision exist, the file does not.
var errNoEntry = fmt.Errorf("file %w", ErrNotFound)

// fetch is one Fetch call.
type fetch struct {
	c         *Client
	ctx       context.Context
	repo, rev string
}

func (f *fetch) dir() string {
	return filepath.Join(f.c.CacheDir, "hub", strings.ReplaceAll(f.repo, "/", "--"), strings.ReplaceAll(f.rev, "/", "--"))
}

// missingMark is the cache's record that a file does not exist at the
// revision, so an offline run takes the same path an online one took.
const missingMark = ".missing"

// file returns a whole small file, from the cache when offline.
func (f *fetch) file(name string) ([]byte, error) {
	path := filepath.Join(f.dir(), name)
	if f.c.Offline {
		return f.cached(path)
	}
	b, err := f.get(name, "", maxJSONFile)
	if errors.Is(err, errNoEntry) {
		_ = f.store(path+missingMark, nil)
		return nil, err
	}
	if err != nil {
		return nil, err
	}
	if err := f.store(path, b); err != nil {
		return nil, err
	}
	_ = os.Remove(path + missingMark)
	return b, nil
}

func (f *fetch) cached(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if err == nil {
		return b, nil
	}
	if _, e := os.Stat(path + missingMark); e == nil {
		return nil, errNoEntry
	}
	return nil, fmt.Errorf("%s of %s at revision %s is %w (%s); run once without --offline", filepath.Base(path), f.repo, f.rev, ErrNotCached, f.dir())
}

// store writes a cache file whole or not at all.
func (f *fetch) store(path string, b []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("cache: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".part-*")
	if err != nil {
		return fmt.Errorf("cache: %w", err)
	}
	_, err = tmp.Write(b)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("cache: %w", err)
	}
	return nil
}

func (f *fetch) url(name string) string {
	return fmt.Sprintf("%s/%s/resolve/%s/%s", f.endpoint(), f.repo, url.PathEscape(f.rev), name)
}

func (f *fetch) endpoint() string {
	e := strings.TrimRight(f.c.Endpoint, "/")
	if e == "" {
		e = DefaultEndpoint
	}
	return e
}

// get fetches a file, or the byte range rng ("bytes=0-7") of it, refusing
// more than limit bytes and a body shorter than its Content-Length.
func (f *fetch) get(name, rng string, limit int64) ([]byte, error) {
	return f.getURL(f.url(name), name, rng, limit)
}

func (f *fetch) getURL(u, what, rng string, limit int64) ([]byte, error) {
	req, err := http.NewRequestWithContext(f.ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	if f.c.Token != "" {
		req.Header.Set("Authorization", "Bearer "+f.c.Token)
	}
	if rng != "" {
		req.Header.Set("Range", rng)
	}
	req.Header.Set("User-Agent", "ai-hwaccel")
	stop := f.progress(what)
	defer stop()
	client := f.c.HTTP
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(req)
	if err != nil {
		if f.ctx.Err() != nil {
			return nil, f.ctx.Err()
		}
		return nil, fmt.Errorf("%w: cannot reach %s (%v); --offline plans from the cache of an earlier run", ErrNetwork, f.endpoint(), err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusPartialContent {
		return nil, f.statusError(resp, what)
	}
	if resp.ContentLength > limit {
		return nil, fmt.Errorf("%s of %s is %d bytes, more than the %d read for planning", what, f.repo, resp.ContentLength, limit)
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if resp.ContentLength >= 0 && int64(len(b)) != resp.ContentLength || errors.Is(err, io.ErrUnexpectedEOF) {
		return nil, fmt.Errorf("%s of %s: got %d of %d bytes: %w (the connection ended early; try again)", what, f.repo, len(b), resp.ContentLength, ErrTruncated)
	}
	if err != nil {
		return nil, fmt.Errorf("%s of %s: %v: %w", what, f.repo, err, ErrNetwork)
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("%s of %s is more than the %d bytes read for planning", what, f.repo, limit)
	}
	return b, nil
}

// statusError turns a refusal into the error a person can act on.
func (f *fetch) statusError(resp *http.Response, what string) error {
	code := resp.Header.Get("X-Error-Code")
	msg := resp.Header.Get("X-Error-Message")
	if msg == "" {
		msg = bodyMessage(resp.Body)
	}
	switch {
	case code == "GatedRepo" || (resp.StatusCode == 403 && strings.Contains(msg, "restricted")):
		hint := "set HF_TOKEN to a token of an account that was granted access"
		if f.c.Token != "" {
			hint = "HF_TOKEN was sent: its account has not been granted access"
		}
		return fmt.Errorf("%s is a gated repository (%d: %s); request access at %s/%s and %s: %w", f.repo, resp.StatusCode, msg, f.endpoint(), f.repo, hint, ErrGated)
	case code == "RevisionNotFound":
		return fmt.Errorf("%s has no revision %q (a branch, tag or commit): %w", f.repo, f.rev, ErrNoRevision)
	case code == "EntryNotFound":
		return errNoEntry
	case code == "RepoNotFound" || resp.StatusCode == 401:
		// The Hub answers 401 for a repository that does not exist as for
		// a private one (huggingface_hub's _http.py says the same).
		hint := ""
		if f.c.Token == "" {
			hint = " (if it is private, set HF_TOKEN)"
		}
		return fmt.Errorf("no model repository %s on %s%s: %w", f.repo, f.endpoint(), hint, ErrNotFound)
	case resp.StatusCode == 404:
		return errNoEntry
	}
	if msg == "" {
		msg = resp.Status
	}
	return fmt.Errorf("%s of %s: %s answered %d: %s", what, f.repo, f.endpoint(), resp.StatusCode, msg)
}

// bodyMessage is the "error" member of the Hub's JSON error body, "" when
// there is none.
func bodyMessage(r io.Reader) string {
	b, _ := io.ReadAll(io.LimitReader(r, 4096))
	s := string(b)
	const key = `"error":`
	i := strings.Index(s, key)
	if i < 0 {
		return ""
	}
	s = strings.TrimSpace(s[i+len(key):])
	if !strings.HasPrefix(s, `"`) {
		return ""
	}
	end := strings.Index(s[1:], `"`)
	if end < 0 {
		return ""
	}
	return s[1 : end+1]
}

// progress prints one line when a fetch outlasts ProgressDelay.
func (f *fetch) progress(what string) func() {
	if f.c.Progress == nil {
		return func() {}
	}
	t := time.AfterFunc(f.c.ProgressDelay, func() {
		fmt.Fprintf(f.c.Progress, "ai-hwaccel: fetching %s of %s from %s ...\n", what, f.repo, f.endpoint())
	})
	return func() { t.Stop() }
}
