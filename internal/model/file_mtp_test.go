package model

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestFileMTPCheckpoints: a checkpoint's file_mtp (Checkpoint.FileMTP) is
// a GGUF file's fact, with the source that says which converter wrote the
// MTP layers into it, of a model whose config declares them; its
// "layer+embed-head" form is for a checkpoint that stores the layers' own
// embedding and head (params_include mtp-embed-head), and only there.
func TestFileMTPCheckpoints(t *testing.T) {
	n := 0
	for _, e := range Catalog() {
		for _, ck := range e.Checkpoints {
			if ck.FileMTP == "" {
				assert.Empty(t, ck.FileMTPSource, "%s %s %s: file_mtp_source without file_mtp", e.Name, ck.Repo, ck.Quant)
				continue
			}
			n++
			id := e.Name + " " + ck.Repo + " " + ck.Quant
			assert.True(t, ck.IsGGUF(), "%s: file_mtp on a checkpoint that is no GGUF file", id)
			assert.NotEmpty(t, ck.FileMTPSource, id)
			assert.Contains(t, []string{"layer", "layer+embed-head"}, ck.FileMTP, id)
			m := Lookup(e.Name)
			if assert.NotNil(t, m, id) {
				assert.Positive(t, m.MTPLayers, "%s: file_mtp, but the config declares no MTP layer", id)
			}
			copies := strings.Contains("+"+e.ParamsInclude+"+", "+mtp-embed-head+")
			assert.Equal(t, copies, ck.FileMTP == "layer+embed-head", "%s: file_mtp %q, params_include %q", id, ck.FileMTP, e.ParamsInclude)
		}
	}
	assert.Positive(t, n, "no checkpoint records file_mtp")
}

// TestMTPLayersFromConfig: MTPLayers is the config's count of MTP layers,
// whichever key states it, and 0 without one.
func TestMTPLayersFromConfig(t *testing.T) {
	for name, want := range map[string]int{"GLM-4.7": 1, "DeepSeek-V3-0324": 1, "Step-3.7-Flash": 3, "Qwen3.5-27B": 1, "Llama-3.1-8B": 0} {
		m := Lookup(name)
		if assert.NotNil(t, m, name) {
			assert.Equal(t, want, m.MTPLayers, name)
		}
	}
}
