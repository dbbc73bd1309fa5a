package strictjson_test

import (
	"strings"
	"testing"

	json "github.com/goccy/go-json"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/errs"
	"github.com/ai-hwaccel/ai-hwaccel/internal/strictjson"
)

// An Int member is refused in the words a Go int member is (kindCheck:
// "got a string", "got the number 1.5"), so that a request reads the same
// whichever of the two types a member decodes into; one it takes keeps
// its text, which a refusal quotes and MarshalJSON writes back.
func TestIntReadsAsAGoIntWouldSay(t *testing.T) {
	type doc struct {
		N *strictjson.Int `json:"n"`
		G *int            `json:"g"`
	}
	for in, want := range map[string]string{
		`{"n":"7"}`:    `request: n: expected an integer, got a string`,
		`{"g":"7"}`:    `request: g: expected an integer, got a string`,
		`{"n":1.5}`:    `request: n: expected an integer, got the number 1.5`,
		`{"g":1.5}`:    `request: g: expected an integer, got the number 1.5`,
		`{"n":[1]}`:    `request: n: expected an integer, got an array`,
		`{"n":true}`:   `request: n: expected an integer, got a boolean`,
		`{"n":1e-400}`: `request: n: expected an integer, got the number 1e-400`,
	} {
		var d doc
		err := strictjson.Decode([]byte(in), &d, "request")
		require.Error(t, err, in)
		assert.Equal(t, errs.InvalidArgument, errs.CodeOf(err), in)
		assert.Equal(t, want, errs.MessageOf(err), in)
	}
	var d doc
	require.NoError(t, strictjson.Decode([]byte(`{"n":4.096e3}`), &d, "request"))
	assert.Equal(t, int64(4096), d.N.V)
	assert.True(t, d.N.Within(1, 4096))
	assert.False(t, d.N.Within(1, 4095))
	out, err := json.Marshal(d.N)
	require.NoError(t, err)
	assert.Equal(t, `4.096e3`, string(out))
	out, err = json.Marshal(strictjson.Int{V: 7})
	require.NoError(t, err)
	assert.Equal(t, `7`, string(out))
	long := &strictjson.Int{Text: "1" + strings.Repeat("0", 44)}
	assert.Equal(t, "1000000000000000000000000000000000000000...", long.Quote())
}
