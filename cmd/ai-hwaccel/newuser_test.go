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

// --cpu-offload on a machine whose host memory is unknown (the Slimbook
// fixture has no /proc/meminfo: its 8 GB RTX 4060 holds no Qwen3-30B-A3B)
// cannot keep anything in host RAM; the answer says so and why, instead of
// a refusal that reads as if the flag had been tried and failed.
func TestCPUOffloadWithoutHostMemorySaysWhy(t *testing.T) {
	r := runCLI(t, withFixture(t, "slimbook-hero-rtx4060-igpu", "plan", "--model", "qwen3:30b-a3b", "--engine", "llama.cpp", "--cpu-offload")...)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, "does not fit")
	assert.Contains(t, r.stdout, "cpu_offload: the registry does not report cpu:0's memory")

	r = runCLI(t, withFixture(t, "dgx-h100", "plan", "--model", "Llama-3.1-405B", "--quant", "bf16", "--devices", "cuda:0-3", "--cpu-offload", "--engine", "llama.cpp")...)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, "cpu_offload: devices leaves out cpu:0")
}
