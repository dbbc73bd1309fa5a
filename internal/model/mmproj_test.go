package model

import (
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/ai-hwaccel/ai-hwaccel/internal/llamahf"
)

// TestCatalogProjectorsFollowLlamaCPP: a GGUF checkpoint's MMProj is the
// projector llama-server -hf loads beside its file (llamahf.PickProjector,
// llama.cpp's find_best_mmproj) among the files the catalog knows in its
// repository (every checkpoint's file and projector there, sorted as the
// Hub lists them). Files a repository holds that no source read here names
// (other projectors: unsloth's repositories may hold BF16 or F32 ones
// beside the F16 the gallery names) are not in that listing; the entries'
// notes say which types are known.
func TestCatalogProjectorsFollowLlamaCPP(t *testing.T) {
	files := map[string][]string{}
	for _, e := range Catalog() {
		for _, ck := range e.Checkpoints {
			if ck.IsGGUF() {
				files[ck.Repo] = append(files[ck.Repo], ck.File, ck.MMProj)
			}
		}
	}
	checked := 0
	for _, e := range Catalog() {
		for _, ck := range e.Checkpoints {
			if !ck.IsGGUF() || ck.MMProj == "" || ck.File == "" {
				continue
			}
			listing := append([]string(nil), files[ck.Repo]...)
			sort.Strings(listing)
			assert.Equal(t, llamahf.PickProjector(ck.File, listing), ck.MMProj, "%s %s %s", e.Name, ck.Repo, ck.Quant)
			checked++
		}
	}
	assert.Greater(t, checked, 10, "the catalog's VLM checkpoints with a projector")
}
