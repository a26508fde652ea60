package reports

import (
	"bytes"
	"fmt"
	"os/exec"
	"strings"
)

// GitCommit returns the commit checked out in dir's work tree and whether
// the tree differs from it (staged, unstaged or untracked files, as go build
// would see them). Paths in ignore, relative to the top of the work tree, do
// not count as dirt: pass the results directory a run appends to, or every
// run after the first would read as dirty.
func GitCommit(dir string, ignore ...string) (commit string, dirty bool, err error) {
	out, err := gitOut(dir, "rev-parse", "--verify", "HEAD^{commit}")
	if err != nil {
		return "", false, fmt.Errorf("commit of %s: %w", dir, err)
	}
	commit = strings.TrimSpace(out)
	args := []string{"status", "--porcelain=v1", "-z", "--untracked-files=normal", "--", ":(top)"}
	for _, p := range ignore {
		args = append(args, ":(top,exclude)"+p)
	}
	st, err := gitOut(dir, args...)
	if err != nil {
		return commit, false, fmt.Errorf("status of %s: %w", dir, err)
	}
	return commit, st != "", nil
}

func gitOut(dir string, args ...string) (string, error) {
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	cmd.Env = append(cmd.Environ(), "LC_ALL=C", "GIT_OPTIONAL_LOCKS=0")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		if msg := strings.TrimSpace(stderr.String()); msg != "" {
			return "", fmt.Errorf("git %s: %s", args[0], msg)
		}
		return "", fmt.Errorf("git %s: %w", args[0], err)
	}
	return stdout.String(), nil
}
