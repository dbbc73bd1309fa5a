package specs

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// The cpu-only fixture's Xeon L5640 has SSE4.2 and no AVX (its
// /proc/cpuinfo flags); a CPU of a family without a record is unknown,
// not assumed to lack anything.
func TestCPUVectorByName(t *testing.T) {
	v, ok := CPUVectorByName("Intel(R) Xeon(R) CPU           L5640  @ 2.27GHz")
	assert.True(t, ok)
	assert.False(t, v.AVX2 || v.AVX512)
	assert.Equal(t, "SSE4.2", v.Widest)
	_, ok = CPUVectorByName("Intel(R) Xeon(R) Gold 5218R CPU @ 2.10GHz")
	assert.False(t, ok)
}
