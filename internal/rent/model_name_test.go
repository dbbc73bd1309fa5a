package rent

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A model given by its size has no name; the answer names the size, as the
// CLI's "for 70b" line does, rather than "model":"". Before, a size-given
// model's answer said "model":"".
func TestAnswerNamesASizeGivenModel(t *testing.T) {
	cat, err := Builtin()
	require.NoError(t, err)
	for js, want := range map[string]string{
		`{"model":{"params_b":70}}`:         "70B",
		`{"model":"70b"}`:                   "70B",
		`{"model":{"params_b":7.25}}`:       "7.25B",
		`{"model":{"params_b":0.5}}`:        "0.5B",
		`{"model":{"name":"Llama-3.1-8B"}}`: "Llama-3.1-8B",
	} {
		a, err := Rank(cat, &Request{Plan: planRequest(t, js), Now: readDay})
		require.NoError(t, err, js)
		assert.Equal(t, want, a.Model, js)
	}
}
