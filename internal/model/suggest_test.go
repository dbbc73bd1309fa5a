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
