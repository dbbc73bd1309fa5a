//go:build !(amd64 || ppc64 || ppc64le || s390x || arm64 || riscv64)

package machine

// haveFstatat is false where package syscall's Stat_t is not what the
// kernel's fstatat fills (32-bit architectures use fstatat64, mips64
// converts): a stat there takes the O_PATH open and fstat.
const (
	sysFstatat  = 0
	haveFstatat = false
)
