package engine

import (
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/llamahf"
	"github.com/ai-hwaccel/ai-hwaccel/internal/model"
	"github.com/ai-hwaccel/ai-hwaccel/internal/quant"
)

// llamaPick is the file llama-server fetches for args (-hf REPO[:TAG]
// [--hf-file FILE]) from a repository listing files (sorted, as the Hub
// lists them): the file --hf-file names exactly, else llamahf.Pick of TAG,
// else (no tag) Q4_K_M, then Q8_0, then the first file: find_best_model and
// common_download_get_hf_plan in common/download.cpp of ggml-org/llama.cpp
// (https://github.com/unslothai/llama.cpp/blob/d32676d77426540327835040d5d3279728f0b4c8/common/download.cpp,
// synced from ggml-org 82bb48500). A folder of split files (a catalog
// File without .gguf) stands for its first part, whose name follows the
// type with "-" (Q6_K/...-Q6_K-00001-of-00004.gguf): FOLDER/FOLDER-00001-of-00002.gguf.
func llamaPick(args []string, files []string) string {
	var repoTag, file string
	for i := 0; i+1 < len(args); i++ {
		switch args[i] {
		case "-hf":
			repoTag = args[i+1]
		case "--hf-file":
			file = args[i+1]
		}
	}
	if file != "" {
		if slices.Contains(files, file) {
			return file
		}
		return ""
	}
	listed := map[string]string{}
	var paths []string
	for _, f := range files {
		p := f
		if !strings.HasSuffix(strings.ToLower(f), ".gguf") {
			p = f + "/" + f + "-00001-of-00002.gguf"
		}
		listed[p] = f
		paths = append(paths, p)
	}
	tags := []string{"Q4_K_M", "Q8_0"}
	if i := strings.LastIndex(repoTag, ":"); i >= 0 {
		tags = []string{repoTag[i+1:]}
	}
	for _, t := range tags {
		if p := llamahf.Pick(t, paths); p != "" {
			return listed[p]
		}
	}
	if len(tags) == 2 && len(files) > 0 {
		return files[0]
	}
	return ""
}

// TestLlamaCommandFetchesCatalogFile: for every GGUF file the catalog
// lists, the llama-server command fetches exactly that file among the
// files the catalog lists in its repository, by llama.cpp's own rule
// (llamaPick); a file named without its type (Llama-3.2-1B-Instruct-f16.gguf,
// whose :F16 would also match a -bf16 file listed before it) is named with
// --hf-file.
func TestLlamaCommandFetchesCatalogFile(t *testing.T) {
	byRepo := map[string][]string{}
	type item struct {
		name string
		ck   model.Checkpoint
	}
	var items []item
	for _, e := range model.Catalog() {
		name := e.Name
		for _, ck := range e.Checkpoints {
			if !ck.IsGGUF() || ck.File == "" {
				continue
			}
			if !slices.Contains(byRepo[ck.Repo], ck.File) {
				byRepo[ck.Repo] = append(byRepo[ck.Repo], ck.File)
			}
			items = append(items, item{name, ck})
		}
	}
	require.NotEmpty(t, items)
	for _, fs := range byRepo {
		slices.Sort(fs)
	}
	e := llamaCPP{}
	for _, it := range items {
		l, err := quant.Parse(it.ck.Quant)
		require.NoError(t, err, "%s %s", it.name, it.ck.Quant)
		ld := Load{Repo: it.ck.Repo, File: it.ck.File, GGUFType: l.LlamaCPPLevel().GGUFType()}
		cmd := e.Command(Served{Load: ld})
		assert.Equal(t, it.ck.File, llamaPick(cmd, byRepo[it.ck.Repo]), "%s %s: %v", it.name, it.ck.Quant, cmd)
	}
}

// TestHFArgsNameFilesWithoutTheirType pins the forms: the type when it
// picks the file, the file when it does not (Microsoft's
// Phi-3-mini-4k-instruct-q4.gguf: a bare -hf would fetch Q4_K_M or the
// first file), the F16 and Q2_0 files named (":F16" also matches
// "-BF16.", ":Q2_0" "-TQ2_0."), and the draft's file given to -md beside
// -hfd.
func TestHFArgsNameFilesWithoutTheirType(t *testing.T) {
	for _, c := range []struct {
		ld   Load
		want []string
	}{
		{Load{Repo: "r/A-GGUF", File: "A-Q8_0.gguf", GGUFType: "Q8_0"}, []string{"-hf", "r/A-GGUF:Q8_0"}},
		{Load{Repo: "r/A-GGUF", File: "a.Q4_K_M-00001-of-00002.gguf", GGUFType: "Q4_K_M"}, []string{"-hf", "r/A-GGUF:Q4_K_M"}},
		{Load{Repo: "r/A-GGUF", File: "Q6_K", GGUFType: "Q6_K"}, []string{"-hf", "r/A-GGUF:Q6_K"}},
		{Load{Repo: "r/A-GGUF", GGUFType: "Q5_K_M"}, []string{"-hf", "r/A-GGUF:Q5_K_M"}},
		{Load{Repo: "microsoft/Phi-3-mini-4k-instruct-gguf", File: "Phi-3-mini-4k-instruct-q4.gguf", GGUFType: "Q4_K_M"},
			[]string{"-hf", "microsoft/Phi-3-mini-4k-instruct-gguf", "--hf-file", "Phi-3-mini-4k-instruct-q4.gguf"}},
		{Load{Repo: "r/A-GGUF", File: "A-f16.gguf", GGUFType: "F16"}, []string{"-hf", "r/A-GGUF", "--hf-file", "A-f16.gguf"}},
		{Load{Repo: "r/A-GGUF", File: "A-IQ4_XS.gguf", GGUFType: "Q4_XS"}, []string{"-hf", "r/A-GGUF", "--hf-file", "A-IQ4_XS.gguf"}},
		{Load{Repo: "r/A-GGUF", File: "A-bf16.gguf", GGUFType: "BF16"}, []string{"-hf", "r/A-GGUF:BF16"}},
		{Load{Repo: "r/A-GGUF", File: "A-Q2_0.gguf", GGUFType: "Q2_0"}, []string{"-hf", "r/A-GGUF", "--hf-file", "A-Q2_0.gguf"}},
		{Load{Repo: "r/A-GGUF", File: "A-TQ2_0.gguf", GGUFType: "TQ2_0"}, []string{"-hf", "r/A-GGUF:TQ2_0"}},
	} {
		assert.Equal(t, c.want, hfArgs(c.ld, "-hf", "--hf-file"), "%+v", c.ld)
	}
	assert.Equal(t, []string{"-hfd", "r/D-GGUF", "-md", "D-q4.gguf"},
		hfArgs(Load{Repo: "r/D-GGUF", File: "D-q4.gguf", GGUFType: "Q4_K_M"}, "-hfd", "-md"))
}
