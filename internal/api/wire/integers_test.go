package wire_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/api/wire"
	"github.com/ai-hwaccel/ai-hwaccel/internal/errs"
)

// An integer member is read exactly and a refusal quotes it as the host
// wrote it. Before, integers went through float64: context_length
// 9007199254740993 (2^53 + 1) was refused as "context_length
// 9007199254740992 is outside [1, 16777216]", a number the host never
// sent, and mmproj.size_bytes above 2^53 was "not an integer of reasonable
// size" although request.schema.json allows up to 2^60.
func TestIntegerMembersAreReadExactly(t *testing.T) {
	for in, want := range map[string]string{
		`"context_length":9007199254740993`:           "request: context_length 9007199254740993 is outside [1, 16777216]",
		`"batch_size":9007199254740993`:               "request: batch_size 9007199254740993 is outside [1, 1048576]",
		`"batch_size":18446744073709551617`:           "request: batch_size 18446744073709551617 is outside [1, 1048576]",
		`"batch_size":-9223372036854775809`:           "request: batch_size -9223372036854775809 is outside [1, 1048576]",
		`"context_length":1e400`:                      "request: context_length 1e400 is outside [1, 16777216]",
		`"context_length":16777217.0`:                 "request: context_length 16777217.0 is outside [1, 16777216]",
		`"context_length":-0`:                         "request: context_length -0 is outside [1, 16777216]",
		`"replicas":9007199254740993`:                 "request: replicas 9007199254740993 is outside [1, 65536]",
		`"tensor_parallel_size":9007199254740993`:     "request: tensor_parallel_size 9007199254740993 is outside [1, 512]",
		`"mmproj":{"size_bytes":1152921504606846977}`: "request: mmproj size 1152921504606846977 bytes is outside [1, 1152921504606846976]",
		// Not integers: refused, whatever their size, in the words a Go int
		// member used ("got the number", strictjson.Int).
		`"context_length":4096.5`:                      "request: context_length: expected an integer, got the number 4096.5",
		`"batch_size":1e-400`:                          "request: batch_size: expected an integer, got the number 1e-400",
		`"batch_size":9007199254740992.5`:              "request: batch_size: expected an integer, got the number 9007199254740992.5",
		`"tensor_parallel_size":1.0000000000000000001`: "request: tensor_parallel_size: expected an integer, got the number 1.0000000000000000001",
	} {
		_, _, err := wire.DecodeRequest([]byte(`{"model":{"params_b":1},` + in + `}`))
		require.Error(t, err, in)
		assert.Equal(t, errs.InvalidArgument, errs.CodeOf(err), in)
		assert.Equal(t, want, errs.MessageOf(err), in)
	}
}

// An integer written with a fraction of zeros or an exponent is the
// integer (a JSON Schema "integer" is any number with no fractional part,
// draft 2020-12 validation §6.1.1), as it was when read through float64.
func TestIntegerMembersTakeIntegralForms(t *testing.T) {
	for in, want := range map[string]int{
		`4096`: 4096, `4096.0`: 4096, `4.096e3`: 4096, `4096E0`: 4096, `409600e-2`: 4096,
		`0.4096e+4`: 4096, `16777216`: 16777216, `1.6777216e7`: 16777216,
	} {
		r, _, err := wire.DecodeRequest([]byte(`{"model":{"params_b":1},"context_length":` + in + `}`))
		require.NoError(t, err, in)
		assert.Equal(t, want, r.ContextLength, in)
	}
	r, _, err := wire.DecodeRequest([]byte(`{"model":{"params_b":1},"mmproj":{"size_bytes":1152921504606846976,"offload":false}}`))
	require.NoError(t, err)
	assert.Equal(t, int64(1)<<60, r.Projector.Bytes)
	r, _, err = wire.DecodeRequest([]byte(`{"model":{"params_b":1},"mmproj":{"size_bytes":9007199254740993,"offload":false}}`))
	require.NoError(t, err)
	assert.Equal(t, int64(1)<<53+1, r.Projector.Bytes, "2^53 + 1 bytes, not 2^53")
}
