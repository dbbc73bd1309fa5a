package host

import "github.com/ai-hwaccel/ai-hwaccel/internal/detect/machine"

// armCPUPart is one arm64 core design: implementer code and part number as
// /proc/cpuinfo prints them ("CPU implementer : 0x41", "CPU part : 0xd0c").
type armCPUPart struct{ implementer, part int64 }

// armCPUNames names arm64 cores, whose /proc/cpuinfo has no "model name"
// (arch/arm64/kernel/cpuinfo.c). Codes from Linux
// https://github.com/torvalds/linux/blob/master/arch/arm64/include/asm/cputype.h
// (ARM_CPU_PART_*, AMPERE_CPU_PART_*, NVIDIA_CPU_PART_*); names as lscpu prints
// them, https://github.com/util-linux/util-linux/blob/master/sys-utils/lscpu-arm.c.
// Neoverse-N1 is AWS Graviton2 and Ampere Altra, Neoverse-V1 Graviton3,
// Neoverse-V2 Graviton4 and NVIDIA Grace: the core alone does not tell the
// chip, so the chip is not named.
var armCPUNames = map[armCPUPart]string{
	{0x41, 0xd03}: "ARM Cortex-A53",
	{0x41, 0xd07}: "ARM Cortex-A57",
	{0x41, 0xd08}: "ARM Cortex-A72",
	{0x41, 0xd0b}: "ARM Cortex-A76",
	{0x41, 0xd0c}: "ARM Neoverse-N1",
	{0x41, 0xd40}: "ARM Neoverse-V1",
	{0x41, 0xd49}: "ARM Neoverse-N2",
	{0x41, 0xd4f}: "ARM Neoverse-V2",
	{0x41, 0xd84}: "ARM Neoverse-V3",
	{0x41, 0xd8e}: "ARM Neoverse-N3",
	{0x4e, 0x004}: "NVIDIA Carmel",
	{0xc0, 0xac3}: "Ampere Ampere-1",
	{0xc0, 0xac4}: "Ampere Ampere-1a",
}

// srcARMName is the source of a CPU name derived from the arm64 ids.
const srcARMName = "procfs CPU implementer/part"

// armCPUName names the core of an implementer/part pair; "" when unknown.
func armCPUName(implementer, part string) string {
	imp, err1 := machine.ParseInt(implementer)
	p, err2 := machine.ParseInt(part)
	if err1 != nil || err2 != nil {
		return ""
	}
	return armCPUNames[armCPUPart{imp, p}]
}

// isARMCoreName reports whether a CPU name is one armCPUName gives.
func isARMCoreName(name string) bool {
	for _, n := range armCPUNames {
		if n == name {
			return true
		}
	}
	return false
}
