package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A device id the machine does not have is an error that says which ids
// it has, so the user can retry without running --table first (tried as a
// new user on the cpu-only fixture, which has no GPU: `--devices cuda:0`
// answered only `unknown device "cuda:0"`).
func TestUnknownDeviceNamesTheDevicesThereAre(t *testing.T) {
	r := runCLI(t, withFixture(t, "cpu-only", "plan", "--model", "70b", "--devices", "cuda:0")...)
	require.Equal(t, 1, r.code, r.stderr)
	assert.Contains(t, r.stderr, `unknown device "cuda:0"`)
	assert.Contains(t, r.stderr, "this registry has cpu:0)")

	r = runCLI(t, withFixture(t, "dgx-h100", "plan", "--model", "70b", "--devices", "cuda:8")...)
	require.Equal(t, 1, r.code, r.stderr)
	assert.Contains(t, r.stderr, "this registry has cpu:0, cuda:0, cuda:1, cuda:2, cuda:3, cuda:4, cuda:5, cuda:6, cuda:7)")
}
