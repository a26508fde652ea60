package criteria

import (
	"path"
	"strings"

	"faultwin/snapshots"
)

// cleanPath normalises an absolute path so that comparisons by component
// are exact. Relative or empty paths stay as they are: they never match.
func cleanPath(p string) string {
	if p == "" || !strings.HasPrefix(p, "/") {
		return p
	}
	return path.Clean(p)
}

// under reports whether p is dir or lies below it, comparing whole path
// components: /x/r1/a is under /x/r1, /x/r10 is not. A prefix check would
// let one run's criteria claim a sibling run's resources, the defect the
// source record corrected after review.
func under(p, dir string) bool {
	p, dir = cleanPath(p), cleanPath(dir)
	if !usableDir(dir) || !strings.HasPrefix(p, "/") {
		return false
	}
	return p == dir || strings.HasPrefix(p, dir+"/")
}

// beneath is under without dir itself: the state root may be a mount point
// of its own, its children are the runs.
func beneath(p, dir string) bool {
	return under(p, dir) && cleanPath(p) != cleanPath(dir)
}

// usableDir rejects directories that would make every path match.
func usableDir(dir string) bool {
	return strings.HasPrefix(dir, "/") && dir != "/"
}

// inCRIUTmp reports whether p is, or lies inside, one of CRIU's
// /tmp/.criu.* staging directories (tmp is the host's temp dir).
func inCRIUTmp(p, tmp string) bool {
	if !beneath(p, tmp) {
		return false
	}
	rel := strings.TrimPrefix(cleanPath(p), cleanPath(tmp)+"/")
	first, _, _ := strings.Cut(rel, "/")
	return strings.HasPrefix(first, snapshots.CRIUTmpPrefix)
}

// samePath compares two absolute paths after cleaning.
func samePath(a, b string) bool {
	return a != "" && cleanPath(a) == cleanPath(b)
}
