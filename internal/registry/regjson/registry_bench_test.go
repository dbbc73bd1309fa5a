package regjson_test

// JSON encode and decode of a registry (docs/performance.md): the synthetic
// H100 registries of the planning benchmarks, at each size of the cost curve.
//
//	go test -run xxx -bench . -benchtime=200ms ./internal/registry/regjson/

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/bench/benchreg"
	"github.com/ai-hwaccel/ai-hwaccel/internal/registry/regjson"
)

func BenchmarkRegistryEncode(b *testing.B) {
	for _, n := range benchreg.Sizes {
		b.Run(fmt.Sprintf("devices=%d", n+1), func(b *testing.B) {
			reg := benchreg.Registry(n)
			out, err := regjson.Encode(reg)
			require.NoError(b, err)
			b.SetBytes(int64(len(out)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := regjson.Encode(reg); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkRegistryDecode(b *testing.B) {
	for _, n := range benchreg.Sizes {
		b.Run(fmt.Sprintf("devices=%d", n+1), func(b *testing.B) {
			data := benchreg.RegistryJSON(n)
			reg, err := regjson.Decode(data)
			require.NoError(b, err)
			require.Len(b, reg.Devices, n+1)
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := regjson.Decode(data); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
