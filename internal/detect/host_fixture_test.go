package detect

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// Graviton CPUs are named from their cpuinfo implementer/part, with that
// source (testdata/machines/graviton2-t4g-small and graviton3-c7g READMEs).
func TestCPUFixtureARMNames(t *testing.T) {
	for machine, want := range map[string]string{"graviton2-t4g-small": "ARM Neoverse-N1", "graviton3-c7g": "ARM Neoverse-V1"} {
		reg := detectFixtureBackends(t, machine, nil, "cpu")
		cpus := devicesOfKind(reg, registry.KindCPU)
		require.Len(t, cpus, 1, machine)
		assert.Equal(t, want, cpus[0].Name, machine)
		assert.Equal(t, "procfs CPU implementer/part", cpus[0].Sources["name"], machine)
		assert.Equal(t, "arm", cpus[0].Vendor, machine)
	}
}

// In a container the CPU device's usable memory is the cgroup limit, with
// its source; the host's RAM stays memory_bytes (the fixtures' READMEs).
func TestCPUFixtureCgroupMemoryLimitIsUsable(t *testing.T) {
	for _, tc := range []struct {
		machine string
		limit   int64
		source  string
	}{
		{"docker-cgroup-v1-128m", 128 << 20, "cgroup v1 memory limit (memory.limit_in_bytes)"},
		{"podman-cgroup-v2-042cpu-42m", 42 << 20, "cgroup v2 memory limit (memory.max)"},
	} {
		reg := detectFixtureBackends(t, tc.machine, nil, "cpu")
		cpus := devicesOfKind(reg, registry.KindCPU)
		require.Len(t, cpus, 1, tc.machine)
		c := cpus[0]
		assert.Equal(t, tc.limit, c.MemoryUsableBytes, tc.machine)
		assert.Equal(t, tc.source, c.Sources["memory_usable_bytes"], tc.machine)
		assert.LessOrEqual(t, c.UsableMemory(), tc.limit, tc.machine)
	}
}
