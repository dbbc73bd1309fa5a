package host

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestEnvironmentParsers(t *testing.T) {
	for in, want := range map[string]int64{"17179869184\n": 17179869184, "max": 0, "": 0, "-1": 0, "x": 0,
		"9223372036854771712": 0} {
		assert.Equal(t, want, parseCgroupMemoryMax(in), "%q", in)
	}
	for in, want := range map[string]float64{"400000 100000": 4, "200000 100000\n": 2, "50000 100000": 0.5,
		"max 100000": 0, "150000": 1.5, "0 100000": 0, "1 0": 0, "a b": 0, "": 0} {
		assert.InDelta(t, want, parseCgroupCPUMax(in), 1e-9, "%q", in)
	}
	for in, want := range map[string]string{
		"12:pids:/docker/abc\n":                         "docker",
		"1:name=systemd:/system.slice/docker-abc.scope": "docker",
		"0::/kubepods.slice/x\n":                        "kubernetes",
		"5:cpu:/machine.slice/libpod-abc.scope":         "podman",
		"3:cpu:/lxc/web01":                              "lxc",
		"0::/":                                          "",
		"0::/user.slice/user-1000.slice":                "",
		"garbage":                                       "",
	} {
		assert.Equal(t, want, containerFromCgroup(in), "%q", in)
	}
	assert.True(t, cpuinfoHasHypervisorFlag("processor\t: 0\nflags\t\t: fpu hypervisor\n"))
	assert.False(t, cpuinfoHasHypervisorFlag("flags\t\t: fpu\nmodel name\t: hypervisor-like name\n"))
	assert.Equal(t, "", containerFromSystemd("a b"))
}

func FuzzEnvironmentParsers(f *testing.F) {
	f.Add("400000 100000", "12:devices:/docker/abc\n0::/", "17179869184")
	f.Add("max 100000", "0::/kubepods/burstable/pod1/c", "max")
	f.Add("-5 -7", ":::\n::", "9223372036854771712")
	f.Fuzz(func(t *testing.T, cpuMax, cgroup, memMax string) {
		c := parseCgroupCPUMax(cpuMax)
		require.GreaterOrEqual(t, c, 0.0)
		require.LessOrEqual(t, c, float64(1<<21))
		m := parseCgroupMemoryMax(memMax)
		require.GreaterOrEqual(t, m, int64(0))
		require.Less(t, m, int64(1)<<60)
		switch containerFromCgroup(cgroup) {
		case "", "docker", "podman", "lxc", "kubernetes":
		default:
			t.Fatalf("unexpected container name from %q", cgroup)
		}
		_ = cpuinfoHasHypervisorFlag(cgroup)
	})
}
