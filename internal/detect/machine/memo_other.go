//go:build !linux && !windows

package machine

import "syscall"

// memoSupported: other systems have no sysfs or procfs to remember (memo.go),
// and name the stat time fields differently.
const memoSupported = false

func statTimes(*syscall.Stat_t) (mtime, ctime syscall.Timespec) { return }
