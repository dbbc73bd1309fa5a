package model

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// A family name typed without its size names the family's models: tried as
// a new user, "gpt-oss" suggested gpt-oss-20b only (gpt-oss-120b is four
// edits away, past the limit), and "nemotron-h" nothing at all although
// the catalog holds Nemotron-H-56B-Base-8K. A release suffix the catalog
// does not list still finds its base first, and a near miss its model.
func TestSuggestNamesTheFamily(t *testing.T) {
	for typed, want := range map[string][]string{
		"gpt-oss":                          {"gpt-oss-120b", "gpt-oss-20b"},
		"nemotron-h":                       {"Nemotron-H-56B-Base-8K"},
		"oss-120b":                         {"gpt-oss-120b"},
		"Qwen3-Next":                       {"Qwen3-Next-80B-A3B-Instruct"},
		"Qwen3-Next-80B-A3B-Instruct-2507": {"Qwen3-Next-80B-A3B-Instruct"},
		"llama-3.3-70":                     {"Llama-3.3-70B-Instruct"},
	} {
		got := Suggest(typed, 3)
		for _, w := range want {
			assert.Contains(t, got, w, "%q suggests %v", typed, got)
		}
		if len(want) > 0 {
			assert.Contains(t, want, got[0], "%q suggests %v: the closest first", typed, got)
		}
	}
	assert.Empty(t, Suggest("zz", 3), "two letters name no family")
}

// A family typed without a version ("llama") is as close to every Llama
// as to any other; on such ties the newer generation comes first (the
// catalog records no release dates, so the version in the name: Llama 4
// before Llama 3.3 before Llama 2). Sorted alphabetically, the three
// suggestions were Llama-2-13B, Llama-2-70B and Llama-2-7B.
func TestSuggestTiesPreferTheNewerGeneration(t *testing.T) {
	got := Suggest("llama", 3)
	if assert.Len(t, got, 3) {
		for _, s := range got {
			assert.NotContains(t, s, "Llama-2", "%v", got)
		}
		assert.Contains(t, got[0], "Llama-4", "%v", got)
	}
	assert.Equal(t, []string{"Qwen3.6-27B"}, Suggest("qwen3.6-27", 1), "one model closest stays first")
}

func TestGeneration(t *testing.T) {
	for name, want := range map[string]float64{
		"Llama-2-7B": 2, "Llama-3.3-70B-Instruct": 3.3, "Llama-4-Scout-17B-16E-Instruct": 4,
		"Meta-Llama-3-8B": 3, "Qwen2.5-72B": 2.5, "Qwen3-30B-A3B": 3, "gpt-oss-120b": 120, "TinyLlama": 0,
	} {
		assert.Equal(t, want, generation(name), name)
	}
}
