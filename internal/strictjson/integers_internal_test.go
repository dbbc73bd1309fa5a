package strictjson

import (
	"math"
	"math/big"
	"testing"

	json "github.com/goccy/go-json"
	"github.com/stretchr/testify/assert"
)

// wholeNumber agrees with exact rational arithmetic (math/big) on every
// JSON number: integer or not, and the value where it fits int64.
func FuzzWholeNumber(f *testing.F) {
	for _, s := range []string{"0", "-0", "4096", "4096.0", "4.096e3", "4096.5", "9007199254740993",
		"9223372036854775807", "9223372036854775808", "-9223372036854775808", "-9223372036854775809",
		"1e400", "1e-400", "0e999999999999999999999", "1.5e1", "1.25e1", "12E-1", "120E-1", "00", "01", "1.", ".5",
		"1e", "1e+", "--1", "1.0000000000000000001", "92233720368547758070e-1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if len(s) > 40 || s == "" || !(s[0] == '-' || s[0] >= '0' && s[0] <= '9') {
			return // the caller refuses other first characters; big.Rat is slow on long exponents
		}
		v, ok := wholeNumber(s)
		if !json.Valid([]byte(s)) {
			assert.False(t, ok, "%q is not a JSON number", s)
			return
		}
		r, parsed := new(big.Rat).SetString(s)
		if !parsed {
			return
		}
		assert.Equal(t, r.IsInt(), ok, "%q", s)
		if !ok {
			return
		}
		n := r.Num()
		switch {
		case n.IsInt64():
			assert.Equal(t, n.Int64(), v, "%q", s)
		case n.Sign() > 0:
			assert.Equal(t, int64(math.MaxInt64), v, "%q", s)
		default:
			assert.Equal(t, int64(math.MinInt64), v, "%q", s)
		}
	})
}
