package criteria

import (
	"path"
	"testing"
)

// matchAny passes over a glob whose literal start the name lacks, and
// says what path.Match says of every glob, a malformed one included.
func TestMatchAnyAsPathMatch(t *testing.T) {
	globs := []string{"link fw*", "chain ip filter NETAVARK_*", "cgroup /faultwin/*/conmon", `x\*y`, "a?c", "[ab]x", "bad[", "exact", "", "*", `tail\`}
	names := []string{"link fw0", "link fx", "chain ip filter NETAVARK_FORWARD", "chain ip nat X", "cgroup /faultwin/r1/conmon",
		"cgroup /faultwin/r1/x/conmon", "x*y", "xay", "abc", "ax", "bx", "bad[", "bad", "exact", "exactly", "", "tail", `tail\`}
	for _, g := range globs {
		for _, n := range names {
			ok, err := path.Match(g, n)
			if got := matchAny([]string{g}, n); got != (err == nil && ok) {
				t.Errorf("glob %q name %q: matchAny %v, path.Match %v %v", g, n, got, ok, err)
			}
		}
	}
}
