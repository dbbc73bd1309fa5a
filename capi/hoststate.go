package main

/*
#include <sys/resource.h>
#include "shim.h"
*/
import "C"

import "syscall"

// The Go runtime raises RLIMIT_NOFILE's soft limit to the hard limit - 1 at
// start-up for its own sake (src/syscall/rlimit.go, go.dev/issue/46279,
// "leave old software to set the limit back as needed"); in a host process
// that raise is the host's, and breaks hosts that still use select() on
// descriptors below FD_SETSIZE (issue 14 item 11). hoststate.c records the
// host's limit before the runtime starts; this init, which runs after
// package syscall's, puts the soft limit back. It changes only what the
// runtime did: if the soft limit is no longer the runtime's hard - 1, the
// host changed it meanwhile and it is left alone.
func init() { restoreHostNofile() }

func restoreHostNofile() {
	if C.aihw_host_nofile_known == 0 {
		return
	}
	host := syscall.Rlimit{Cur: uint64(C.aihw_host_nofile.rlim_cur), Max: uint64(C.aihw_host_nofile.rlim_max)}
	var now syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &now) != nil {
		return
	}
	if now.Cur == host.Cur || now.Max != host.Max || now.Cur != now.Max-1 {
		return
	}
	// syscall.Setrlimit also tells os/exec not to adjust the limit of the
	// tools it starts: they inherit the host's limit, as from the host.
	_ = syscall.Setrlimit(syscall.RLIMIT_NOFILE, &host)
}
