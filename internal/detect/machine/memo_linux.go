package machine

import "syscall"

// memoSupported: the memo is for Linux sysfs and procfs (memo.go).
const memoSupported = true

// statTimes returns a stat's modification and change times.
func statTimes(st *syscall.Stat_t) (mtime, ctime syscall.Timespec) { return st.Mtim, st.Ctim }
