package criteria

import (
	"path"
	"slices"
	"strconv"
	"strings"

	"faultwin/internal/model"
	"faultwin/snapshots"
)

// A supervisor other than refsup declares, in its driver description, the
// host-global names it makes (Roots.Links, Netns, Chains) and the findings
// it keeps across runs by design (Roots.Shared). Windows run one at a time on
// a host the preflight found clean, so a match seen after a window's sweeps
// is that window's run's. All of these are empty for refsup, and then every
// rule below matches nothing: rows recorded before them judge the same.

// matchAny reports whether name matches one of the path.Match globs. A
// malformed glob matches nothing; globGaps reports it so that a criterion
// is not judged on it.
func matchAny(globs []string, name string) bool {
	for _, g := range globs {
		if ok, err := path.Match(g, name); err == nil && ok {
			return true
		}
	}
	return false
}

// globGaps names each malformed glob among the given fields of the
// described roots ("links", "netns", "chains", "shared"; all when none are
// given): a typo would otherwise match nothing, and "nothing left" would
// hold vacuously.
func globGaps(r snapshots.Roots, fields ...string) []string {
	var gaps []string
	for _, set := range []struct {
		field string
		globs []string
	}{{"links", r.Links}, {"netns", r.Netns}, {"chains", r.Chains}, {"shared", r.Shared}} {
		if len(fields) > 0 && !slices.Contains(fields, set.field) {
			continue
		}
		for _, g := range set.globs {
			if _, err := path.Match(g, ""); err != nil {
				gaps = append(gaps, "roots: malformed "+set.field+" glob "+strconv.Quote(g))
			}
		}
	}
	return gaps
}

// chainKey names an nft chain the way findings and Roots.Shared do:
// "chain ip filter NETAVARK_FORWARD".
func chainKey(family, table, chain string) string {
	return "chain " + strings.TrimSpace(family+" "+table) + " " + chain
}

// cgroupKey is a cgroup finding's key: "cgroup " and the cleaned path.
func cgroupKey(cg string) string { return "cgroup " + cleanPath(cg) }

// shared reports whether a finding is one the supervisor keeps by design.
// A cgroup is matched both by its path as captured and by its part from the
// faultwin component on ("cgroup /faultwin/r1/conmon"): a description
// cannot know under which hierarchy mount a host captures it.
func shared(r snapshots.Roots, key string) bool {
	if len(r.Shared) == 0 {
		return false
	}
	if matchAny(r.Shared, key) {
		return true
	}
	if cg, ok := strings.CutPrefix(key, "cgroup "); ok {
		if rel, ok := runCgroupPath(cg); ok && matchAny(r.Shared, "cgroup "+rel) {
			return true
		}
	}
	return false
}

// runCgroupPath is the part of a cgroup path from the faultwin component
// model.RunOfCgroup reads the run from: "/faultwin/<run>/...".
func runCgroupPath(p string) (string, bool) {
	parts := strings.Split(strings.Trim(p, "/"), "/")
	for i := len(parts) - 2; i >= 0; i-- {
		if parts[i] == model.CgroupDir && parts[i+1] != "" {
			return "/" + strings.Join(parts[i:], "/"), true
		}
	}
	return "", false
}

// keptNote is the evidence line of a shared finding: shown, never a failure.
func keptNote(f finding) string {
	return "kept by design: " + f.key + " " + labels(f.labels)
}

// splitShared separates the findings the supervisor keeps by design from
// the others, each in their order.
func splitShared(r snapshots.Roots, found []finding) (own, kept []finding) {
	for _, f := range found {
		if shared(r, f.key) {
			kept = append(kept, f)
		} else {
			own = append(own, f)
		}
	}
	return own, kept
}

// describedLinks are the links of s that match Roots.Links and not the link
// prefix (those are found already).
func describedLinks(s snapshots.Snapshot, r snapshots.Roots, prefix string) []finding {
	var found []finding
	for _, l := range s.Links {
		if prefix != "" && strings.HasPrefix(l.Name, prefix) {
			continue
		}
		if matchAny(r.Links, l.Name) {
			found = append(found, finding{key: "link " + l.Name, line: linkLine(l) + ": declared by the driver"})
		}
	}
	return found
}

// describedChains are the chains of host tables in s that match
// Roots.Chains. A capture fills Table.Chains for host tables only, and a
// table of another namespace dies with it.
func describedChains(s snapshots.Snapshot, r snapshots.Roots) []finding {
	if len(r.Chains) == 0 {
		return nil
	}
	var found []finding
	for _, t := range s.Tables {
		if t.Netns != "" {
			continue
		}
		for _, ch := range t.Chains {
			if matchAny(r.Chains, ch) {
				k := chainKey(t.Family, t.Name, ch)
				found = append(found, finding{key: k, line: k})
			}
		}
	}
	return found
}

// isNetnsMount reports whether a mount point is a named netns the
// supervisor makes.
func isNetnsMount(mp string, r snapshots.Roots) bool {
	return len(r.Netns) > 0 && matchAny(r.Netns, cleanPath(mp))
}
