package criteria

import (
	"path"
	"strings"

	"faultwin/internal/model"
)

// cleanPath normalises an absolute path so that comparisons by component
// are exact. Relative or empty paths stay as they are: they never match.
func cleanPath(p string) string {
	if p == "" || !strings.HasPrefix(p, "/") {
		return p
	}
	return path.Clean(p)
}

// usableDir rejects directories that cannot own anything: a relative path,
// or "/", under which every path lies. A run whose state dir were "/" would
// own the whole host, so the criteria refuse to judge with it.
func usableDir(dir string) bool {
	return strings.HasPrefix(dir, "/") && path.Clean(dir) != "/"
}

// under is model.Within for a directory that can own things. Whole path
// components are compared: /x/r1/a is under /x/r1, /x/r10 is not, so one
// run's criteria never claim a sibling run's resources.
func under(p, dir string) bool { return usableDir(dir) && model.Within(p, dir) }

// beneath is under without dir itself: the state root may be a mount point
// of its own, its children are the runs.
func beneath(p, dir string) bool { return usableDir(dir) && model.Below(p, dir) }

// inCRIUTmp reports whether p is, or lies inside, one of CRIU's
// /tmp/.criu.* staging directories (tmp is the host's temp dir).
func inCRIUTmp(p, tmp string) bool { return usableDir(tmp) && model.InCRIUTmp(p, tmp) }

// samePath compares two absolute paths after cleaning.
func samePath(a, b string) bool {
	return a != "" && cleanPath(a) == cleanPath(b)
}
