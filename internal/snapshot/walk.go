package snapshot

import (
	"errors"
	"io/fs"
	"path"
	"strings"
)

// maxLinkHops bounds the symbolic links followed while resolving one path,
// as Linux does (MAXSYMLINKS, 40): a cycle fails instead of looping.
const maxLinkHops = 40

var (
	errEscape   = errors.New("path leaves the machine tree")
	errLinkLoop = errors.New("too many levels of symbolic links")
)

// linkOf answers, for a path inside the tree whose parents are all real
// directories, whether it is a symbolic link and to what.
type linkOf func(p string) (target string, isLink bool, err error)

// resolve returns the physical path of name (a valid fs path) in a tree:
// every symbolic link among its components is replaced by its target, the
// last component too when follow is set. Components that do not exist are
// kept as they are (the caller's read fails on them). ".." is applied to the
// physical path, as the kernel does. A target starting with "/" is taken from
// the tree's root (the sysroot), and ".." above the root is errEscape: a
// snapshot never leaves its tree.
func resolve(name string, follow bool, lookup linkOf) (string, error) {
	if !fs.ValidPath(name) {
		return "", &fs.PathError{Op: "resolve", Path: name, Err: fs.ErrInvalid}
	}
	var done []string
	todo := splitPath(name)
	hops := 0
	for len(todo) > 0 {
		c := todo[0]
		todo = todo[1:]
		switch c {
		case "", ".":
			continue
		case "..":
			if len(done) == 0 {
				return "", &fs.PathError{Op: "resolve", Path: name, Err: errEscape}
			}
			done = done[:len(done)-1]
			continue
		}
		p := path.Join(append(done, c)...)
		if len(todo) == 0 && !follow {
			done = append(done, c)
			break
		}
		target, isLink, err := lookup(p)
		if err != nil {
			return "", err
		}
		if !isLink {
			done = append(done, c)
			continue
		}
		if hops++; hops > maxLinkHops {
			return "", &fs.PathError{Op: "resolve", Path: name, Err: errLinkLoop}
		}
		if strings.HasPrefix(target, "/") {
			done = done[:0]
		}
		todo = append(splitPath(target), todo...)
	}
	if len(done) == 0 {
		return ".", nil
	}
	return path.Join(done...), nil
}

// splitPath splits a slash-separated path into its components ("." has none).
func splitPath(p string) []string {
	if p == "." || p == "" {
		return nil
	}
	return strings.Split(strings.Trim(p, "/"), "/")
}

// linkStaysInside reports whether a link at name (physical parents) pointing
// to target resolves lexically inside the tree: target relative, and its ".."
// never climbing above the root. The reader refuses any other link.
func linkStaysInside(name, target string) bool {
	if target == "" || strings.HasPrefix(target, "/") || strings.ContainsRune(target, 0) {
		return false
	}
	depth := len(splitPath(path.Dir(name)))
	for _, c := range splitPath(target) {
		switch c {
		case "", ".":
		case "..":
			if depth--; depth < 0 {
				return false
			}
		default:
			depth++
		}
	}
	return true
}
