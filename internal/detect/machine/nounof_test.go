package machine

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// The sysfs fallbacks' warnings count devices: one is "device", others
// "devices" (the gaudi2-8 fixture's warning read "8 Gaudi device(s)").
func TestNounOf(t *testing.T) {
	assert.Equal(t, "device", NounOf(1, "device"))
	assert.Equal(t, "devices", NounOf(8, "device"))
	assert.Equal(t, "GPUs", NounOf(0, "GPU"))
}
