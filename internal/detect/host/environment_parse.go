package host

import (
	"strconv"
	"strings"
)

// parseCgroupMemoryMax reads cgroup v2 memory.max ("max" or bytes) or v1
// memory.limit_in_bytes. It returns 0 for "no limit": "max", and the huge
// page-aligned value cgroup v1 prints for unlimited (PAGE_COUNTER_MAX ×
// page size, about 2^63), which no machine has. Garbage is also 0.
func parseCgroupMemoryMax(s string) int64 {
	s = strings.TrimSpace(s)
	if s == "" || s == "max" {
		return 0
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil || v <= 0 || v >= 1<<60 {
		return 0
	}
	return v
}

// parseCgroupCPUMax reads cgroup v2 cpu.max ("$MAX $PERIOD", e.g.
// "200000 100000" = 2 CPUs; "max 100000" = no limit) and returns the CPU
// limit, 0 for none or garbage.
func parseCgroupCPUMax(s string) float64 {
	f := strings.Fields(s)
	if len(f) == 0 || f[0] == "max" {
		return 0
	}
	period := int64(100000) // the kernel default when only the quota is given
	if len(f) >= 2 {
		p, err := strconv.ParseInt(f[1], 10, 64)
		if err != nil {
			return 0
		}
		period = p
	}
	quota, err := strconv.ParseInt(f[0], 10, 64)
	return cpuLimit(quota, period, err)
}

// parseCgroupV1CPU reads cgroup v1 cpu.cfs_quota_us and cpu.cfs_period_us
// (quota -1 = no limit).
func parseCgroupV1CPU(quota, period string) float64 {
	q, err := strconv.ParseInt(strings.TrimSpace(quota), 10, 64)
	if err != nil {
		return 0
	}
	p, err := strconv.ParseInt(strings.TrimSpace(period), 10, 64)
	return cpuLimit(q, p, err)
}

func cpuLimit(quota, period int64, err error) float64 {
	if err != nil || quota <= 0 || period <= 0 || quota/period > 1<<20 {
		return 0
	}
	v := float64(quota) / float64(period)
	return float64(int64(v*1000+0.5)) / 1000
}

// containerFromCgroup recognises a container runtime from /proc/1/cgroup
// (cgroup v1 paths such as "12:devices:/docker/<id>" or
// "0::/kubepods/burstable/pod<uid>/<id>"). A cgroup v2 namespace shows only
// "0::/" and gives no hint, which is expected.
func containerFromCgroup(s string) string {
	for _, line := range strings.Split(s, "\n") {
		// hierarchy-ID:controller-list:cgroup-path
		parts := strings.SplitN(strings.TrimSpace(line), ":", 3)
		if len(parts) != 3 {
			continue
		}
		p := parts[2]
		switch {
		case strings.Contains(p, "/kubepods"):
			return "kubernetes"
		case strings.Contains(p, "/docker/"), strings.Contains(p, "/docker-"):
			return "docker"
		case strings.Contains(p, "/libpod-"), strings.Contains(p, "/machine.slice/libpod"):
			return "podman"
		case strings.Contains(p, "/lxc/"), strings.HasPrefix(p, "/lxc.payload"):
			return "lxc"
		}
	}
	return ""
}

// containerFromSystemd maps systemd's /run/systemd/container value
// ("docker", "podman", "lxc", "systemd-nspawn", ...) to a container name.
func containerFromSystemd(s string) string {
	s = strings.ToLower(strings.TrimSpace(s))
	if s == "" || len(s) > 64 || strings.ContainsAny(s, " \t\n/") {
		return ""
	}
	return s
}

// hypervisorFromDMI recognises a virtual platform from DMI sys_vendor and
// product_name as the hypervisors set them. Cloud vendors' DMI strings
// ("Amazon EC2", "Google") are not here: bare-metal instances carry them too.
func hypervisorFromDMI(sysVendor, product string) string {
	v, p := strings.ToLower(sysVendor), strings.ToLower(product)
	switch {
	case v == "qemu":
		return "qemu"
	case p == "kvm" || strings.HasPrefix(p, "kvm "):
		return "kvm"
	case strings.HasPrefix(v, "vmware"):
		return "vmware"
	case v == "microsoft corporation" && p == "virtual machine":
		return "hyperv"
	case v == "xen" || strings.Contains(p, "hvm domu"):
		return "xen"
	case v == "innotek gmbh" || p == "virtualbox":
		return "virtualbox"
	}
	return ""
}

// cpuinfoHasHypervisorFlag reports whether any "flags" line of /proc/cpuinfo
// lists "hypervisor" (x86 CPUID leaf 1 ECX bit 31, set by every hypervisor).
func cpuinfoHasHypervisorFlag(s string) bool {
	for _, line := range strings.Split(s, "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok || strings.TrimSpace(k) != "flags" {
			continue
		}
		for _, fl := range strings.Fields(v) {
			if fl == "hypervisor" {
				return true
			}
		}
	}
	return false
}
