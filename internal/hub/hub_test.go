package hub

import (
	"bytes"
	"context"
	"encoding/binary"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	json "github.com/goccy/go-json"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/api/wire"
)

const granite = "ibm-granite/granite-3.1-1b-a400m-instruct"

func recorded(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "hub", strings.ReplaceAll(granite, "/", "--"), name))
	require.NoError(t, err)
	return b
}

// hubError answers as the Hub does: status, X-Error-Code, X-Error-Message
// and the JSON body {"error": message}.
func hubError(w http.ResponseWriter, status int, code, msg string) {
	w.Header().Set("X-Error-Code", code)
	w.Header().Set("X-Error-Message", msg)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write([]byte(`{"error":"` + msg + `"}`))
}

// safetensorsBytes is a single-file checkpoint's start: the 8-byte length
// and a header of the safetensors format with two BF16 tensors.
func safetensorsBytes() []byte {
	hdr := []byte(`{"__metadata__":{"format":"pt"},"lm_head.weight":{"dtype":"BF16","shape":[49155,1024],"data_offsets":[0,100669440]},"model.norm.weight":{"dtype":"BF16","shape":[1024],"data_offsets":[100669440,100671488]}}`)
	var b bytes.Buffer
	_ = binary.Write(&b, binary.LittleEndian, uint64(len(hdr)))
	b.Write(hdr)
	b.Write(make([]byte, 4096)) // the start of the tensor data
	return b.Bytes()
}

// ggufBytes is a GGUF v3 file's header (ggml docs/gguf.md): a llama
// architecture key, a padding string that pushes the tensor list past the
// first range request, and one F16 tensor of 4096 x 1000.
func ggufBytes(pad int) []byte {
	var b bytes.Buffer
	u32 := func(v uint32) { _ = binary.Write(&b, binary.LittleEndian, v) }
	u64 := func(v uint64) { _ = binary.Write(&b, binary.LittleEndian, v) }
	str := func(s string) { u64(uint64(len(s))); b.WriteString(s) }
	u32(0x46554747) // "GGUF"
	u32(3)
	u64(1) // tensors
	u64(2) // metadata
	str("general.architecture")
	u32(8) // string
	str("llama")
	str("general.padding")
	u32(8)
	str(strings.Repeat("x", pad))
	str("token_embd.weight")
	u32(2)
	u64(4096)
	u64(1000)
	u32(1) // F16
	u64(0)
	b.Write(make([]byte, 1024))
	return b.Bytes()
}

type server struct {
	*httptest.Server
	hits map[string]int
}

func newServer(t *testing.T) *server {
	s := &server{hits: map[string]int{}}
	files := map[string][]byte{
		"/" + granite + "/resolve/main/config.json":                  recorded(t, "config.json"),
		"/" + granite + "/resolve/main/model.safetensors.index.json": recorded(t, "model.safetensors.index.json"),
		"/org/single/resolve/main/config.json":                       recorded(t, "config.bf16.json"),
		"/org/single/resolve/main/model.safetensors":                 safetensorsBytes(),
		"/org/gguf-GGUF/resolve/main/model-Q4_K_M.gguf":              ggufBytes(5 << 20),
		"/org/gguf-GGUF/resolve/main/model-Q8_0.gguf":                ggufBytes(10),
		"/api/models/org/gguf-GGUF/revision/main":                    []byte(`{"id":"org/gguf-GGUF","siblings":[{"rfilename":".gitattributes"},{"rfilename":"model-Q4_K_M.gguf"},{"rfilename":"model-Q8_0.gguf"},{"rfilename":"mmproj-F16.gguf"}]}`),
	}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.hits[r.URL.Path]++
		p := r.URL.Path
		switch {
		case strings.HasPrefix(p, "/google/gemma-3-1b-pt/"):
			hubError(w, 401, "GatedRepo", "Access to model google/gemma-3-1b-pt is restricted. You must have access to it and be authenticated to access it. Please log in.")
			return
		case strings.HasPrefix(p, "/org/missing/"):
			hubError(w, 401, "RepoNotFound", "Repository not found")
			return
		case strings.HasPrefix(p, "/"+granite+"/resolve/nope/"):
			hubError(w, 404, "RevisionNotFound", "Invalid rev id: nope")
			return
		case p == "/org/truncated/resolve/main/config.json":
			w.Header().Set("Content-Length", "888")
			_, _ = w.Write(recorded(t, "config.json")[:100])
			return
		}
		b, ok := files[p]
		if !ok {
			hubError(w, 404, "EntryNotFound", p+" does not exist on \"main\"")
			return
		}
		http.ServeContent(w, r, filepath.Base(p), time.Time{}, bytes.NewReader(b))
	}))
	t.Cleanup(s.Close)
	return s
}

func client(s *server, cache string) *Client {
	return &Client{Endpoint: s.URL, CacheDir: cache, HTTP: s.Client()}
}

// plan decodes a request carrying the fetched model object as the engine
// does (internal/api/wire), so the object is checked against the contract.
func resolve(t *testing.T, obj map[string]any) (params, weights int64, quant, source string) {
	t.Helper()
	body, err := json.Marshal(map[string]any{"model": obj})
	require.NoError(t, err)
	req, _, err := wire.DecodeRequest(body)
	require.NoError(t, err)
	return req.Model.Params, req.Model.FileWeightBytes, req.Model.FileQuant, req.Model.Source
}

func TestFetchShardedCheckpoint(t *testing.T) {
	s := newServer(t)
	cache := t.TempDir()
	obj, err := client(s, cache).Fetch(context.Background(), Ref{Repo: granite}, "")
	require.NoError(t, err)
	assert.Contains(t, obj, "config")
	assert.Contains(t, obj, "safetensors_index")
	_, weights, quant, source := resolve(t, obj)
	// metadata.total_size of the recorded index, the float32 checkpoint.
	assert.Equal(t, int64(5338513408), weights)
	assert.Equal(t, "fp32", quant)
	assert.Contains(t, source, "metadata.total_size")
	assert.FileExists(t, filepath.Join(cache, "hub", "ibm-granite--granite-3.1-1b-a400m-instruct", "main", "config.json"))

	// Offline, the cache answers and the server is not asked.
	before := len(s.hits)
	s.Close()
	c := client(s, cache)
	c.Offline = true
	again, err := c.Fetch(context.Background(), Ref{Repo: granite}, "main")
	require.NoError(t, err)
	assert.Equal(t, obj, again)
	assert.Len(t, s.hits, before)
}

func TestFetchOfflineWithoutCache(t *testing.T) {
	c := &Client{Endpoint: "http://127.0.0.1:1", CacheDir: t.TempDir(), Offline: true}
	_, err := c.Fetch(context.Background(), Ref{Repo: granite}, "")
	require.ErrorIs(t, err, ErrNotCached)
	assert.Contains(t, err.Error(), "without --offline")
}

func TestFetchSingleSafetensorsHeader(t *testing.T) {
	s := newServer(t)
	obj, err := client(s, t.TempDir()).Fetch(context.Background(), Ref{Repo: "org/single"}, "")
	require.NoError(t, err)
	require.Contains(t, obj, "safetensors_header_base64")
	params, weights, quant, source := resolve(t, obj)
	assert.Equal(t, int64(49155*1024+1024), params)
	assert.Equal(t, int64(2*(49155*1024+1024)), weights)
	assert.Equal(t, "bf16", quant)
	assert.Equal(t, "config.json + safetensors header", source)
	assert.Equal(t, 2, s.hits["/org/single/resolve/main/model.safetensors"], "two range requests: the length, then the header")
}

func TestFetchGGUFHeaderInGrowingRanges(t *testing.T) {
	s := newServer(t)
	cache := t.TempDir()
	obj, err := client(s, cache).Fetch(context.Background(), Ref{Repo: "org/gguf-GGUF", Quant: "q4_k_m"}, "")
	require.NoError(t, err)
	params, _, quant, _ := resolve(t, obj)
	assert.Equal(t, int64(4096*1000), params)
	assert.Equal(t, "F16", strings.ToUpper(quant))
	assert.Equal(t, 2, s.hits["/org/gguf-GGUF/resolve/main/model-Q4_K_M.gguf"], "4 MiB did not hold the header; 16 MiB did")

	// Without a type, a repository of several GGUF files asks for one.
	_, err = client(s, cache).Fetch(context.Background(), Ref{Repo: "org/gguf-GGUF"}, "")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "org/gguf-GGUF:TYPE")
	assert.Contains(t, err.Error(), "model-Q8_0.gguf")
	assert.NotContains(t, err.Error(), "mmproj")
}

func TestFetchErrors(t *testing.T) {
	s := newServer(t)
	ctx := context.Background()
	for _, tc := range []struct {
		name, repo, rev, token string
		is                     error
		says                   []string
	}{
		{"no such repository", "org/missing", "", "", ErrNotFound, []string{"no model repository org/missing", "set HF_TOKEN"}},
		{"gated", "google/gemma-3-1b-pt", "", "", ErrGated, []string{"gated repository", "is restricted", "/google/gemma-3-1b-pt", "set HF_TOKEN"}},
		{"gated with a token", "google/gemma-3-1b-pt", "", "hf_x", ErrGated, []string{"HF_TOKEN was sent"}},
		{"no such revision", granite, "nope", "", ErrNoRevision, []string{`no revision "nope"`}},
		{"truncated", "org/truncated", "", "", ErrTruncated, []string{"got 100 of 888 bytes"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := client(s, t.TempDir())
			c.Token = tc.token
			_, err := c.Fetch(ctx, Ref{Repo: tc.repo}, tc.rev)
			require.ErrorIs(t, err, tc.is)
			for _, w := range tc.says {
				assert.Contains(t, err.Error(), w)
			}
		})
	}
	t.Run("truncated download leaves no cache file", func(t *testing.T) {
		cache := t.TempDir()
		_, err := client(s, cache).Fetch(ctx, Ref{Repo: "org/truncated"}, "")
		require.ErrorIs(t, err, ErrTruncated)
		assert.NoFileExists(t, filepath.Join(cache, "hub", "org--truncated", "main", "config.json"))
	})
	t.Run("no network", func(t *testing.T) {
		s.Close()
		_, err := client(s, t.TempDir()).Fetch(ctx, Ref{Repo: granite}, "")
		require.ErrorIs(t, err, ErrNetwork)
		assert.Contains(t, err.Error(), "--offline")
	})
}

func TestTokenIsSent(t *testing.T) {
	var got string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r.Header.Get("Authorization")
		hubError(w, 401, "RepoNotFound", "Repository not found")
	}))
	defer srv.Close()
	c := &Client{Endpoint: srv.URL + "/", Token: "hf_secret", CacheDir: t.TempDir()}
	_, err := c.Fetch(context.Background(), Ref{Repo: "org/private"}, "")
	require.ErrorIs(t, err, ErrNotFound)
	assert.Equal(t, "Bearer hf_secret", got)
	assert.NotContains(t, err.Error(), "set HF_TOKEN")
}

func TestProgressForSlowFiles(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(50 * time.Millisecond)
		hubError(w, 401, "RepoNotFound", "Repository not found")
	}))
	defer srv.Close()
	out := &lockedBuffer{}
	c := &Client{Endpoint: srv.URL, CacheDir: t.TempDir(), Progress: out, ProgressDelay: time.Millisecond}
	_, _ = c.Fetch(context.Background(), Ref{Repo: "org/slow"}, "")
	assert.Contains(t, out.String(), "fetching config.json of org/slow")

	// A fast answer says nothing.
	quiet := &lockedBuffer{}
	c = &Client{Endpoint: srv.URL, CacheDir: t.TempDir(), Progress: quiet, ProgressDelay: time.Minute}
	_, _ = c.Fetch(context.Background(), Ref{Repo: "org/slow"}, "")
	assert.Empty(t, quiet.String())
}

// lockedBuffer is written by the progress timer's goroutine.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func TestLooksLikeRepo(t *testing.T) {
	for s, want := range map[string]bool{
		"Qwen/Qwen3-Next-80B-A3B-Instruct": true, "unsloth/Qwen3-30B-A3B-GGUF:Q4_K_M": true,
		"Llama-2-7B": false, "./models/x": false, "/abs/path": false, "a/b/c": false, "org/../x": false, "70b": false,
		"models/x.gguf": false, "dir/model.safetensors": false,
	} {
		assert.Equal(t, want, LooksLikeRepo(s), s)
	}
}

// TestLibraryOpensNoSocket: the shared library (capi) and the engine's api
// layer import neither this package nor the net package; only the CLI
// fetches (issue 25 item 3: "the library itself never opens a socket").
func TestLibraryOpensNoSocket(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	cmd := exec.Command("go", "list", "-deps", "./capi", "./internal/api/...")
	cmd.Dir = filepath.Join("..", "..")
	out, err := cmd.Output()
	require.NoError(t, err)
	deps := strings.Fields(string(out))
	assert.NotContains(t, deps, "net")
	assert.NotContains(t, deps, "net/http")
	assert.NotContains(t, deps, "github.com/ai-hwaccel/ai-hwaccel/internal/hub")
	assert.Contains(t, deps, "github.com/ai-hwaccel/ai-hwaccel/internal/model", "the list is the library's")
}

// TestPickGGUFIsTheFileLlamaServerLoads: repo:TYPE reads the header of
// the file `llama-server -hf repo:TYPE` downloads (llamahf.Pick): TYPE
// followed by "." or "-", so Q4_K is not read as Q4_K_M and Q3_K not as
// Q3_K_M (llama.cpp finds no file for them), and F16 takes the first file
// it matches, the BF16 one where no F16 file is listed. The listing is
// bartowski/google_gemma-3-12b-it-GGUF's files as the catalog records them.
func TestPickGGUFIsTheFileLlamaServerLoads(t *testing.T) {
	var info repoInfo
	for _, n := range []string{
		"google_gemma-3-12b-it-Q8_0.gguf", "google_gemma-3-12b-it-Q4_K_M.gguf", "google_gemma-3-12b-it-bf16.gguf",
		"google_gemma-3-12b-it-Q3_K_M.gguf", "google_gemma-3-12b-it-IQ3_XXS.gguf", "google_gemma-3-12b-it-IQ3_XS.gguf",
		"README.md",
	} {
		info.Siblings = append(info.Siblings, struct {
			Name string `json:"rfilename"`
		}{n})
	}
	const repo = "bartowski/google_gemma-3-12b-it-GGUF"
	for quant, want := range map[string]string{
		"Q4_K_M": "google_gemma-3-12b-it-Q4_K_M.gguf",
		"iq3_xs": "google_gemma-3-12b-it-IQ3_XS.gguf",
		"F16":    "google_gemma-3-12b-it-bf16.gguf",
		"BF16":   "google_gemma-3-12b-it-bf16.gguf",
	} {
		got, err := pickGGUF(repo, quant, info)
		require.NoError(t, err, quant)
		assert.Equal(t, want, got, quant)
	}
	for _, quant := range []string{"Q4_K", "Q3_K", "Q8"} {
		got, err := pickGGUF(repo, quant, info)
		require.Error(t, err, "%s picked %s", quant, got)
		assert.Contains(t, err.Error(), "no .gguf file of type "+quant)
		assert.Contains(t, err.Error(), "followed by")
	}
}
