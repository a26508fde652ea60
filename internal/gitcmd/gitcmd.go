// Package gitcmd runs git for provenance and registration: both need the
// same environment (C locale, no optional locks on a tree a run is writing
// into) and the same errors (git's own message, the exec error wrapped).
package gitcmd

import (
	"bytes"
	"fmt"
	"os/exec"
	"strings"
)

// Output runs git -C dir args... and returns its standard output.
// Equivalent to: git -C <dir> <args>.
func Output(dir string, args ...string) (string, error) {
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	cmd.Env = append(cmd.Environ(), "LC_ALL=C", "GIT_OPTIONAL_LOCKS=0")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		if msg := strings.TrimSpace(stderr.String()); msg != "" {
			return "", fmt.Errorf("git %s: %s: %w", args[0], msg, err)
		}
		return "", fmt.Errorf("git %s: %w", args[0], err)
	}
	return stdout.String(), nil
}
