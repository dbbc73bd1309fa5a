package host

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// A FIFO at /proc/cpuinfo must not block the environment backend, which
// reads the file's head for the hypervisor flag (issue 14 item 1: it once
// opened the file without the regular-file and non-blocking checks).
func TestEnvironmentCPUInfoFIFOIsNotWaitedOn(t *testing.T) {
	f := detectWithCPUInfoFIFO(t, DetectEnvironment)
	assert.Nil(t, f.Environment, "nothing readable: no environment facts")
	assert.Empty(t, f.Warnings)
}
