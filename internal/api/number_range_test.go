package api

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/errs"
)

// A number too large for any float (1e400) is out of range, not of the
// wrong type: the message says the member's range, as it does for 1e30.
// Before, timeout_ms 1e400 was "a value of the wrong type (number 1e400)".
func TestOverflowingNumbersAreOutOfRange(t *testing.T) {
	for in, want := range map[string]string{
		`{"timeout_ms":1e400}`:   "options: timeout_ms 1e400 is outside (0, 600000]",
		`{"timeout_ms":-1e400}`:  "options: timeout_ms -1e400 is outside (0, 600000]",
		`{"cache_ttl_ms":1e400}`: "options: cache_ttl_ms 1e400 is outside [0, 86400000]",
		`{"cache_ttl_ms":1e30}`:  "options: cache_ttl_ms 1000000000000000000000000000000 is outside [0, 86400000]",
		// An integer is quoted as written, not as float64 reads it (2^53).
		`{"timeout_ms":9007199254740993}`: "options: timeout_ms 9007199254740993 is outside (0, 600000]",
		`{"timeout_ms":"5"}`:              "options: timeout_ms: expected a number, got a string",
		`{"timeout_ms":[1]}`:              "options: timeout_ms: expected a number, got an array",
	} {
		_, err := DecodeOptions([]byte(in), NoEnv)
		require.Error(t, err, in)
		assert.Equal(t, errs.InvalidArgument, errs.CodeOf(err), in)
		assert.Equal(t, want, errs.MessageOf(err), in)
	}
	o, err := DecodeOptions([]byte(`{"timeout_ms":1.5e3,"cache_ttl_ms":null}`), NoEnv)
	require.NoError(t, err)
	assert.Equal(t, int64(1500), o.Timeout.Milliseconds())
	// Any other number member: out of range, never "wrong type".
	ans := PlanSharding(context.Background(), []byte(`{"model":{"params_b":1e400}}`), NoEnv)
	assert.Equal(t, errs.InvalidArgument, errorCode(t, ans))
	assert.Contains(t, string(ans), "model: params_b: 1e400 is outside the range of a number")
	assert.NotContains(t, string(ans), "wrong type")
	ans = PlanSharding(context.Background(), []byte(`{"model":{"params_b":7},"memory_fraction":-1E+999}`), NoEnv)
	assert.Contains(t, string(ans), "memory_fraction: -1E+999 is outside the range of a number")
	// An integer member past int64 is outside its own range, quoted as
	// written, as one inside int64 is (strictjson.Int). Before, these
	// members decoded into Go ints: training.seq_len 99999999999999999999
	// was "a value of the wrong type (number 99999999999999999999)", then
	// "outside the range of an integer (at most 9.2e+18 in magnitude)".
	for in, want := range map[string]string{
		`{"model":{"params_b":7},"training":{"seq_len":99999999999999999999}}`:    "request: training.seq_len 99999999999999999999 is outside [1, 16777216]",
		`{"model":{"params_b":7},"training":{"lora_rank":-99999999999999999999}}`: "request: training.lora_rank -99999999999999999999 is outside [1, 65536]",
	} {
		ans = EstimateTraining(context.Background(), []byte(in), NoEnv)
		assert.JSONEq(t, `{"error":{"code":"invalid_argument","message":`+quote(want)+`}}`, string(ans), in)
	}
	ans = Fit(context.Background(), []byte(`{"context_length":9223372036854775808}`), NoEnv)
	assert.Contains(t, string(ans), "request: context_length 9223372036854775808 is outside [1, 16777216]")
}
