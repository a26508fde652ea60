package gitcmd

import (
	"fmt"
	"strings"
)

// Commit returns the commit checked out in dir's work tree and whether
// the tree differs from it (staged, unstaged or untracked files, as go build
// would see them). Paths in ignore, relative to the top of the work tree, do
// not count as dirt: pass the results directory a run appends to, or every
// run after the first would read as dirty.
func Commit(dir string, ignore ...string) (commit string, dirty bool, err error) {
	out, err := Output(dir, "rev-parse", "--verify", "HEAD^{commit}")
	if err != nil {
		return "", false, fmt.Errorf("commit of %s: %w", dir, err)
	}
	commit = strings.TrimSpace(out)
	args := []string{"status", "--porcelain=v1", "-z", "--untracked-files=normal", "--", ":(top)"}
	for _, p := range ignore {
		args = append(args, ":(top,exclude)"+p)
	}
	st, err := Output(dir, args...)
	if err != nil {
		return commit, false, fmt.Errorf("status of %s: %w", dir, err)
	}
	return commit, st != "", nil
}
