package plan

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/ai-hwaccel/ai-hwaccel/internal/model"
	"github.com/ai-hwaccel/ai-hwaccel/internal/quant"
)

// Load is what an engine loads to run a plan: a Hugging Face repository
// (and, for llama.cpp, the GGUF file and type), from the catalog's
// published checkpoints (internal/model/catalog.json); the answer's form
// of engine.Load.
type Load struct {
	// Quant is the level of the weights loaded.
	Quant string `json:"quant"`
	// Repo is the Hugging Face repository id ("openai/gpt-oss-120b"); ""
	// when no checkpoint at this level is published.
	Repo string `json:"repo,omitempty"`
	// File is the GGUF file within Repo (llama.cpp).
	File string `json:"file,omitempty"`
	// GGUFType is the llama.cpp file type the level means ("Q4_K_M").
	GGUFType string `json:"gguf_type,omitempty"`
	// Method is the quantization method the checkpoint's config declares
	// (fp8, mxfp4, awq, gptq; gguf); "" for 16-bit weights.
	Method string `json:"method,omitempty"`
	Source string `json:"source,omitempty"`
	// Needs says which checkpoint the plan needs when the weights the
	// request gave (a folder, a file, a fetched repository) are stored at
	// another level than the plan's, or when a catalog model has no
	// published checkpoint at the plan's level that the engine loads
	// (engine.Load.Needs); "" otherwise. With Needs and no Repo no command
	// can run the plan.
	Needs string `json:"needs,omitempty"`
}

// nativeLevels is what auto tries for a model whose native checkpoint is
// quantized (gpt-oss MXFP4, DeepSeek FP8, an AWQ repository named in the
// request): that format first, then the auto levels narrower than it. A
// 16-bit upcast of a quantized checkpoint holds no more information, so it
// is never preferred. nil when the native format is 16-bit or unknown.
func nativeLevels(m *model.Model) ([]quant.Level, string) {
	ck := m.NativeCheckpoint()
	if ck == nil {
		return nil, ""
	}
	if types := namedGGUFTypes(m); len(types) > 1 {
		return repositoryLevels(ck.Repo, types)
	}
	native, err := quant.Parse(ck.Quant)
	if err != nil || native == quant.BF16 || native == quant.FP16 || native == quant.FP32 {
		return nil, ""
	}
	levels := []quant.Level{native}
	for _, l := range autoLevels {
		if width(l) < width(native) {
			levels = append(levels, l)
		}
	}
	why := fmt.Sprintf("auto: %s is published in %s (%s); auto plans that format first, then narrower levels (a 16-bit upcast holds no more information)",
		m.Name, native, ck.Repo)
	return levels, why
}

// namedGGUFTypes are the levels of the files the catalog lists in the
// GGUF repository the request named (model.Model.Named), best first (most
// bits per weight); nil when the request named no GGUF repository.
func namedGGUFTypes(m *model.Model) []quant.Level {
	var types []quant.Level
	for i := range m.Checkpoints {
		ck := &m.Checkpoints[i]
		if !ck.IsGGUF() || !m.Named(i) {
			continue
		}
		if l, err := quant.Parse(ck.Quant); err == nil && !slices.Contains(types, l) {
			types = append(types, l)
		}
	}
	sort.SliceStable(types, func(a, b int) bool { return types[a].BitsPerWeight() > types[b].BitsPerWeight() })
	return types
}

// repositoryLevels is what auto tries for a named GGUF repository of
// several types (namedGGUFTypes): its types, best first, so that the plan
// takes the best of the files named that fits (a user who names
// ggml-org/gemma-3-27b-it-GGUF means its files, any of its types), then,
// as nativeLevels does for one type, the auto levels narrower than its
// narrowest.
func repositoryLevels(repo string, types []quant.Level) ([]quant.Level, string) {
	levels := slices.Clone(types)
	narrowest := types[len(types)-1]
	for _, l := range autoLevels {
		if width(l) < width(narrowest) {
			levels = append(levels, l)
		}
	}
	names := make([]string, len(types))
	for i, l := range types {
		names[i] = string(l)
	}
	why := fmt.Sprintf("auto: %s, the GGUF repository named, holds %s (the types the catalog lists of it); auto plans the best of them that fits",
		repo, strings.Join(names, " > "))
	if len(levels) > len(types) {
		why += ", then narrower levels"
	}
	return levels, why
}

// width is the nominal bits of a level's values, scales aside: 4 for int4
// and mxfp4 (4.125 and 4.25 bits per weight), 8 for fp8 and int8. An int4
// requantization of an MXFP4 checkpoint is not narrower than it.
func width(l quant.Level) int { return int(l.BitsPerWeight()) }
