package machine

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestInlineReadableIsTheKernelCoreOnly: an inline run reads the files the
// kernel's core writes, and no driver attribute sharing their directories.
func TestInlineReadableIsTheKernelCoreOnly(t *testing.T) {
	for _, name := range []string{
		"proc/meminfo", "proc/cpuinfo", "proc/1/cgroup", "sys/devices/system/cpu/online",
		"sys/devices/system/node/node1/meminfo", "sys/fs/cgroup/memory/memory.limit_in_bytes",
		"sys/devices/virtual/dmi/id/product_name", "sys/bus/pci/devices/0000:00:02.0/vendor",
		"sys/bus/pci/devices/0000:00:02.0/numa_node", "sys/block/vda/size", "sys/block/vda/queue/rotational",
	} {
		assert.True(t, inlineReadable(name), name)
	}
	for _, name := range []string{
		"proc/driver/nvidia/version", "proc/version", "sys/class/drm/card0/device/mem_info_vram_total",
		"sys/bus/pci/devices/0000:03:00.0/mem_info_vram_total", "sys/bus/pci/devices/0000:03:00.0/driver/module/version",
		"sys/block/nvme0n1/device/model", "sys/devices/system/cpu/cpu0/cpufreq/scaling_cur_freq",
		"sys/devices/virtual/dmi/id/subdir/x", "sys/fs/cgroup/../../proc/version", "sys/class/infiniband/mlx5_0/ports/1/rate",
	} {
		assert.False(t, inlineReadable(name), name)
	}
}
