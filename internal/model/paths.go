package model

import (
	"path"
	"strings"
)

// Within reports whether p is dir or lies below it, comparing whole path
// components after cleaning both: "/a/r1/x" is within "/a/r1", "/a/r10" is
// not. Only absolute paths are compared: an empty or relative p or dir is
// never within anything. "/" contains every absolute path; a caller that
// must not treat the whole host as one run's says so before asking.
func Within(p, dir string) bool {
	if !strings.HasPrefix(p, "/") || !strings.HasPrefix(dir, "/") {
		return false
	}
	p, dir = path.Clean(p), path.Clean(dir)
	return p == dir || dir == "/" || strings.HasPrefix(p, dir+"/")
}

// Below is Within without dir itself: a state root's children are the runs.
func Below(p, dir string) bool {
	return Within(p, dir) && path.Clean(p) != path.Clean(dir)
}

// WithinAny reports whether p is within at least one of dirs.
func WithinAny(p string, dirs ...string) bool {
	for _, d := range dirs {
		if Within(p, d) {
			return true
		}
	}
	return false
}

// InCRIUTmp reports whether p is one of CRIU's staging entries in tmp
// ("/tmp/.criu.mntns.x") or lies inside one.
func InCRIUTmp(p, tmp string) bool {
	if !Below(p, tmp) {
		return false
	}
	rel := strings.TrimPrefix(path.Clean(p), path.Clean(tmp))
	first, _, _ := strings.Cut(strings.TrimPrefix(rel, "/"), "/")
	return strings.HasPrefix(first, CRIUTmpPrefix)
}

// MadeFrom reports whether p is a path elsewhere on the host made from dir
// (a supervisor's lock at /run/<tool>/lock/<dir>/...): dir, whole, is a
// run of p's components. A run's state dir holds its id, so such a path
// is the run's by its name.
func MadeFrom(p, dir string) bool {
	if !strings.HasPrefix(dir, "/") || dir == "/" || Within(p, dir) {
		return false
	}
	return strings.Contains(path.Clean(p)+"/", path.Clean(dir)+"/")
}
