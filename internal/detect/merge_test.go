package detect

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestNormalizeBusID(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"00000000:18:00.0", "0000:18:00.0"},     // nvidia-smi's 8-digit domain
		{"0000:18:00.0", "0000:18:00.0"},         // sysfs form unchanged
		{"18:00.0", "0000:18:00.0"},              // no domain: domain 0
		{"0000:1C:00.0", "0000:1c:00.0"},         // upper case
		{" 0000:18:00.0\n", "0000:18:00.0"},      // spaces
		{"10000:e1:00.0", "10000:e1:00.0"},       // Intel VMD domain: 5 digits kept
		{"00010000:e1:00.0", "10000:e1:00.0"},    // VMD domain zero-padded to 8
		{"0001:00:02.0", "0001:00:02.0"},         // 4-digit non-zero domain
		{"00000001:00:02.0", "0001:00:02.0"},     // padded non-zero domain
		{"abcdef01:00:02.0", "abcdef01:00:02.0"}, // 8 significant digits
		{"not-a-bus-id", "not-a-bus-id"},         // left alone
	} {
		assert.Equal(t, tc.want, NormalizeBusID(tc.in), tc.in)
	}
}
