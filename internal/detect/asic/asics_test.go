package asic

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/ai-hwaccel/ai-hwaccel/internal/detect/machine"
)

func TestASICAccelNodeName(t *testing.T) {
	for name, want := range map[string]bool{"accel0": true, "accel12": true, "accel": false,
		"accel_controlD0": false, "accel1a": false, "card0": false} {
		assert.Equal(t, want, machine.IsAccelNodeName(name), name)
	}
}
