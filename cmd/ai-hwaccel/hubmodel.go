package main

import (
	"net/http"
	"path/filepath"
	"time"

	"github.com/ai-hwaccel/ai-hwaccel/internal/hub"
)

// hubProgressDelay: a fetch that takes longer than this says so on stderr
// (a terminal only), about when a person starts to wonder.
const hubProgressDelay = time.Second

// hubRequestTimeout bounds one HTTP request of a fetch (a few MB at most).
const hubRequestTimeout = 2 * time.Minute

// hubFlags are --revision and --offline, which apply to a model given by
// its Hugging Face id.
type hubFlags struct {
	revision string
	offline  bool
}

func (h *hubFlags) register(f *flags) []string {
	f.StringVar(&h.revision, "revision", "", "with a Hugging Face id as --model: the branch, tag or commit `REV` to read (default main)")
	f.BoolVar(&h.offline, "offline", false, "with a Hugging Face id as --model: plan from the files an earlier run fetched, without the network")
	return []string{"revision", "offline"}
}

// hubClient is the fetcher of a Hugging Face id given as --model: the
// endpoint of HF_ENDPOINT, the token of HF_TOKEN, the cache under
// $XDG_CACHE_HOME/ai-hwaccel (~/.cache/ai-hwaccel), progress on a terminal.
func (a *app) hubClient(h hubFlags) *hub.Client {
	endpoint, _ := a.getenv("HF_ENDPOINT")
	token, _ := a.getenv("HF_TOKEN")
	c := &hub.Client{Endpoint: endpoint, Token: token, CacheDir: a.cacheDir(), Offline: h.offline,
		HTTP: a.hubHTTP, ProgressDelay: hubProgressDelay}
	if c.HTTP == nil {
		c.HTTP = &http.Client{Timeout: hubRequestTimeout}
	}
	if a.progress != nil {
		c.Progress = a.progress
	}
	return c
}

// cacheDir is the XDG base directory specification's user cache directory
// (https://specifications.freedesktop.org/basedir-spec/latest/) for this
// program.
func (a *app) cacheDir() string {
	if d, ok := a.getenv("XDG_CACHE_HOME"); ok && filepath.IsAbs(d) {
		return filepath.Join(d, "ai-hwaccel")
	}
	home, _ := a.getenv("HOME")
	return filepath.Join(home, ".cache", "ai-hwaccel")
}

// fetchModel fetches ref and returns the model argument that sends what
// was fetched.
func (a *app) fetchModel(cmd, raw string, h hubFlags) (modelArg, error) {
	ref, err := hub.ParseRef(raw)
	if err != nil {
		return modelArg{}, usagef(cmd, "--model: %v", err)
	}
	obj, err := a.hubClient(h).Fetch(a.ctx, ref, h.revision)
	if err != nil {
		return modelArg{}, err
	}
	return modelArg{key: "hub", val: ref.Repo, obj: obj}, nil
}
