//go:build amd64 || ppc64 || ppc64le || s390x

package machine

import "syscall"

// sysFstatat is fstatat(2) with package syscall's Stat_t
// (syscall/syscall_linux_amd64.go, _ppc64x.go, _s390x.go: SYS_NEWFSTATAT).
const (
	sysFstatat  = syscall.SYS_NEWFSTATAT
	haveFstatat = true
)
