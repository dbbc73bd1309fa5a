package api

import (
	"math/rand"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/ai-hwaccel/ai-hwaccel/bench/benchreg"
)

// depthByteByByte is depth as first written, one byte at a time: the
// reference the string-skipping depth must agree with.
func depthByteByByte(b []byte) int {
	d, max := 0, 0
	inStr, esc := false, false
	for _, c := range b {
		switch {
		case inStr:
			if esc {
				esc = false
			} else if c == '\\' {
				esc = true
			} else if c == '"' {
				inStr = false
			}
		case c == '"':
			inStr = true
		case c == '[' || c == '{':
			d++
			if d > max {
				max = d
				if max > MaxDepth {
					return max
				}
			}
		case c == ']' || c == '}':
			d--
		}
	}
	return max
}

func TestDepthAgreesWithByteByByte(t *testing.T) {
	cases := []string{``, `"`, `\`, `"\`, `"\"`, `"\\"[`, `["\\\"[" ,{`, `{"a":"[[[[[[{{{{\"]]"}`, `[[{}],[[]]]`,
		`"abc`, `"ab\\`, `[{"k":"v\\\\"},[{"x":"]"}]]`, string(benchreg.Request(16))}
	rng := rand.New(rand.NewSource(1))
	alphabet := []byte(`"\[]{}a:, `)
	for n := 0; n < 20000; n++ {
		b := make([]byte, rng.Intn(40))
		for i := range b {
			b[i] = alphabet[rng.Intn(len(alphabet))]
		}
		cases = append(cases, string(b))
	}
	deep := make([]byte, 0, 2*MaxDepth+10)
	for i := 0; i < MaxDepth+5; i++ {
		deep = append(deep, '[')
	}
	cases = append(cases, string(deep))
	for _, c := range cases {
		assert.Equal(t, depthByteByByte([]byte(c)), depth([]byte(c)), "%q", c)
	}
}

func BenchmarkDepth(b *testing.B) {
	req := benchreg.Request(16)
	b.SetBytes(int64(len(req)))
	for b.Loop() {
		depth(req)
	}
}

func BenchmarkDepthByteByByte(b *testing.B) {
	req := benchreg.Request(16)
	b.SetBytes(int64(len(req)))
	for b.Loop() {
		depthByteByByte(req)
	}
}
