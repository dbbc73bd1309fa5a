//go:build arm64 || riscv64

package machine

import "syscall"

// sysFstatat is fstatat(2) with package syscall's Stat_t
// (syscall/syscall_linux_arm64.go, _riscv64.go: SYS_FSTATAT).
const (
	sysFstatat  = syscall.SYS_FSTATAT
	haveFstatat = true
)
