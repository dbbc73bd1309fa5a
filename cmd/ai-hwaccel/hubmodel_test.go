package main

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	json "github.com/goccy/go-json"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const graniteID = "ibm-granite/granite-3.1-1b-a400m-instruct"

// hubServer serves the recorded files of graniteID (testdata/hub) and the
// Hub's answer for a gated repository, as huggingface.co does: files at
// /{repo}/resolve/{revision}/{file}, errors with X-Error-Code.
func hubServer(t *testing.T) *httptest.Server {
	dir := filepath.Join("..", "..", "testdata", "hub", "ibm-granite--granite-3.1-1b-a400m-instruct")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/meta-llama/") {
			w.Header().Set("X-Error-Code", "GatedRepo")
			w.Header().Set("X-Error-Message", "Access to model meta-llama/Llama-3.1-8B is restricted. You must have access to it and be authenticated to access it. Please log in.")
			w.WriteHeader(401)
			return
		}
		prefix := "/" + graniteID + "/resolve/main/"
		b, err := os.ReadFile(filepath.Join(dir, strings.TrimPrefix(r.URL.Path, prefix)))
		if !strings.HasPrefix(r.URL.Path, prefix) || err != nil {
			w.Header().Set("X-Error-Code", "EntryNotFound")
			w.WriteHeader(404)
			return
		}
		_, _ = w.Write(b)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// loopbackOnly is an HTTP client that refuses every host but this one's
// loopback: no test reaches huggingface.co, whatever --model it gives.
func loopbackOnly() *http.Client {
	dial := (&net.Dialer{}).DialContext
	return &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		host, _, err := net.SplitHostPort(addr)
		if ip := net.ParseIP(host); err != nil || ip == nil || !ip.IsLoopback() {
			return nil, fmt.Errorf("test: no network beyond loopback (%s)", addr)
		}
		return dial(ctx, network, addr)
	}}}
}

// runWithEnv runs the CLI with env as its whole environment.
func runWithEnv(t *testing.T, env map[string]string, args ...string) result {
	t.Helper()
	var out, errOut bytes.Buffer
	a := testApp(&out, &errOut)
	a.getenv = func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	a.sent = func(kind string, body []byte) { checkRequest(t, kind, body) }
	code := a.run(args)
	return result{code, out.String(), errOut.String()}
}

// An id outside the catalog is fetched from HF_ENDPOINT into
// $XDG_CACHE_HOME/ai-hwaccel, planned with the index's total_size, and
// planned again with --offline once the server is gone.
func TestPlanModelByHubID(t *testing.T) {
	srv := hubServer(t)
	cache := t.TempDir()
	env := map[string]string{"HF_ENDPOINT": srv.URL, "XDG_CACHE_HOME": cache}
	args := withFixture(t, "dgx-h100", "plan", "--model", graniteID, "--json")
	r := runWithEnv(t, env, args...)
	require.Equal(t, 0, r.code, r.stderr)
	var plan map[string]any
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &plan))
	m := plan["model"].(map[string]any)
	assert.Contains(t, m["source"], "metadata.total_size")
	assert.FileExists(t, filepath.Join(cache, "ai-hwaccel", "hub", "ibm-granite--granite-3.1-1b-a400m-instruct", "main", "model.safetensors.index.json"))

	srv.Close()
	off := runWithEnv(t, env, append(args, "--offline")...)
	require.Equal(t, 0, off.code, off.stderr)
	assert.Equal(t, r.stdout, off.stdout)

	// The text answer names the repository for vllm serve.
	text := runWithEnv(t, env, withFixture(t, "dgx-h100", "plan", "--model", graniteID, "--offline")...)
	require.Equal(t, 0, text.code, text.stderr)
	assert.Contains(t, text.stdout, graniteID)
}

func TestPlanModelByHubIDErrors(t *testing.T) {
	srv := hubServer(t)
	env := map[string]string{"HF_ENDPOINT": srv.URL, "XDG_CACHE_HOME": t.TempDir()}
	r := runWithEnv(t, env, withFixture(t, "dgx-h100", "plan", "--model", "meta-llama/Llama-3.1-8B-Private")...)
	assert.Equal(t, exitError, r.code)
	assert.Contains(t, r.stderr, "gated repository")
	assert.Contains(t, r.stderr, "HF_TOKEN")

	r = runWithEnv(t, env, withFixture(t, "dgx-h100", "plan", "--model", "org/never-fetched", "--offline")...)
	assert.Equal(t, exitError, r.code)
	assert.Contains(t, r.stderr, "not in the cache")

	// No HF_ENDPOINT: huggingface.co, which the tests' client refuses to
	// reach, as a machine without network does.
	r = runWithEnv(t, map[string]string{"HOME": t.TempDir()}, withFixture(t, "dgx-h100", "plan", "--model", "org/x")...)
	assert.Equal(t, exitError, r.code)
	assert.Contains(t, r.stderr, "no network: cannot reach https://huggingface.co")
	r = runWithEnv(t, map[string]string{"HOME": t.TempDir()}, withFixture(t, "dgx-h100", "plan", "--model", "org/x", "--offline")...)
	assert.Contains(t, r.stderr, "run once without --offline")
}

func TestCacheDirFollowsXDG(t *testing.T) {
	a := testApp(&bytes.Buffer{}, &bytes.Buffer{})
	a.getenv = func(k string) (string, bool) {
		v, ok := map[string]string{"HOME": "/home/u"}[k]
		return v, ok
	}
	assert.Equal(t, "/home/u/.cache/ai-hwaccel", a.cacheDir())
	a.getenv = func(k string) (string, bool) {
		v, ok := map[string]string{"HOME": "/home/u", "XDG_CACHE_HOME": "/c"}[k]
		return v, ok
	}
	assert.Equal(t, "/c/ai-hwaccel", a.cacheDir())
}
