package snapshot

import (
	"strings"
)

// contentTrees are the trees whose entries a snapshot may hold with their
// content: the kernel's views of the hardware (/sys, /proc, /dev) and the
// container markers under /run that detection reads (internal/detect
// environment.go).
var contentTrees = []string{"sys", "proc", "dev", "run/systemd/container"}

// markerPaths may be recorded as existing (type only, never content): the
// container and Kubernetes markers detection tests for. The Kubernetes
// service-account directory holds a token; only its existence is kept
// (host.ServiceAccountDirs: both ways to it).
var markerPaths = []string{".dockerenv", "run/.containerenv", "var/run/secrets/kubernetes.io/serviceaccount", "run/secrets/kubernetes.io/serviceaccount"}

// procPIDFiles are the only per-process files of /proc recorded: the cgroup
// membership (container detection). Everything else under /proc/<pid>
// (environ, cmdline, maps, fd) can hold secrets.
var procPIDFiles = map[string]bool{"cgroup": true}

// under reports whether p is root or inside it.
func under(p, root string) bool {
	return p == root || strings.HasPrefix(p, root+"/")
}

// mayRecord reports whether the physical path p may be in a snapshot, and
// whether with content (false: type only).
func mayRecord(p string) (ok, content bool) {
	if p == "." {
		return true, false
	}
	for _, m := range markerPaths {
		if p == m {
			return true, false
		}
		if strings.HasPrefix(m, p+"/") {
			return true, false // a parent directory of a marker: type only
		}
	}
	for _, t := range contentTrees {
		if under(p, t) {
			return procPIDAllowed(p), true
		}
		if strings.HasPrefix(t, p+"/") {
			return true, false // "run" on the way to run/systemd/container
		}
	}
	return false, false
}

// procPIDAllowed refuses /proc/<pid>/... and /proc/self/... except the
// files of procPIDFiles. /proc/self itself (a link) is allowed.
func procPIDAllowed(p string) bool {
	c := splitPath(p)
	if len(c) < 3 || c[0] != "proc" || !isProcessDir(c[1]) {
		return true
	}
	return len(c) == 3 && procPIDFiles[c[2]]
}

func isProcessDir(s string) bool {
	if s == "self" || s == "thread-self" {
		return true
	}
	return s != "" && strings.Trim(s, "0123456789") == ""
}
