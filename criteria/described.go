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

// claimRule says whose a described object is: why it is a run's, or false
// when no evidence ties it to one. Rows recorded before Roots.ByProvenance
// take every match as a run's, as they were judged.
type claimRule func(key, id string) (why string, ok bool)

// anyRunClaim ties an object to any run whose record claims it.
func anyRunClaim(s snapshots.Snapshot, r snapshots.Roots) claimRule {
	if !r.ByProvenance {
		return func(string, string) (string, bool) { return "", true }
	}
	return func(key, id string) (string, bool) {
		run, why, ok := snapshots.ClaimOf(s.Records, key, id)
		if !ok {
			return "", false
		}
		return "claimed by run " + run + " (" + why + ")", true
	}
}

// runClaim ties an object to the window's run alone.
func (c *ctx) runClaim(s snapshots.Snapshot) claimRule {
	if !c.in.Roots.ByProvenance {
		return func(string, string) (string, bool) { return "", true }
	}
	return func(key, id string) (string, bool) {
		if !snapshots.ClaimedBy(s.Records, c.sc.Run, key, id) {
			return "", false
		}
		_, why, _ := snapshots.ClaimOf(s.Records, key, id)
		return "the run's (" + why + ")", true
	}
}

// withWhy is a finding line with the claim's why, when there is one.
func withWhy(line, why string) string {
	if why == "" {
		return line
	}
	return line + ": " + why
}

// describedLinks are the links of s that match Roots.Links and not the link
// prefix (those are found already), and that claim ties to a run.
func describedLinks(s snapshots.Snapshot, r snapshots.Roots, prefix string, claim claimRule) []finding {
	var found []finding
	for _, l := range s.Links {
		if prefix != "" && strings.HasPrefix(l.Name, prefix) {
			continue
		}
		if !matchAny(r.Links, l.Name) {
			continue
		}
		why, ok := claim("link "+l.Name, snapshots.LinkID(l))
		if !ok {
			continue
		}
		if !r.ByProvenance {
			why = "declared by the driver"
		}
		found = append(found, finding{key: "link " + l.Name, line: withWhy(linkLine(l), why)})
	}
	return found
}

// describedChains are the chains of host tables in s that match
// Roots.Chains and that claim ties to a run. A capture fills Table.Chains
// for host tables only, and a table of another namespace dies with it.
func describedChains(s snapshots.Snapshot, r snapshots.Roots, claim claimRule) []finding {
	if len(r.Chains) == 0 {
		return nil
	}
	var found []finding
	for _, t := range s.Tables {
		if t.Netns != "" {
			continue
		}
		for _, ch := range t.Chains {
			if !matchAny(r.Chains, ch) {
				continue
			}
			k := chainKey(t.Family, t.Name, ch)
			why, ok := claim(k, snapshots.ChainID(t, ch))
			if !ok {
				continue
			}
			found = append(found, finding{key: k, line: withWhy(k, why)})
		}
	}
	return found
}

// isNetnsMount reports whether a mount point is a named netns the
// supervisor makes.
func isNetnsMount(mp string, r snapshots.Roots) bool {
	return len(r.Netns) > 0 && matchAny(r.Netns, cleanPath(mp))
}

// NotFaultwins lists what s shows under a supervisor's host-global names
// that no run's record claims: someone else's (a user's podman0 and its
// veths, a Kubernetes node's CNI veths, another containerd's shim
// sockets), which faultwin names and leaves alone. Empty for rows judged
// by name (before Roots.ByProvenance).
func NotFaultwins(s snapshots.Snapshot, r snapshots.Roots) []string {
	if !r.ByProvenance {
		return nil
	}
	claimed := anyRunClaim(s, r)
	var out []string
	add := func(key, id, line string) {
		if _, ok := claimed(key, id); !ok && !shared(r, key) {
			out = append(out, line)
		}
	}
	for _, l := range s.Links {
		if !(r.LinkPrefix != "" && strings.HasPrefix(l.Name, r.LinkPrefix)) && matchAny(r.Links, l.Name) {
			add("link "+l.Name, snapshots.LinkID(l), linkLine(l))
		}
	}
	for _, m := range s.Mounts {
		if mp := cleanPath(m.MountPoint); !beneath(mp, r.StateRoot) && isNetnsMount(mp, r) {
			add("mount "+mp, snapshots.MountID(m), mountLine(m))
		}
	}
	for _, t := range s.Tables {
		for _, ch := range t.Chains {
			if t.Netns == "" && matchAny(r.Chains, ch) {
				k := chainKey(t.Family, t.Name, ch)
				add(k, snapshots.ChainID(t, ch), k)
			}
		}
	}
	for _, so := range s.Sockets {
		if matchAny(r.Sockets, so.Path) {
			add("socket "+so.Path, so.Inode, "socket "+so.Path)
		}
	}
	for _, f := range s.State {
		if !under(f.Path, r.StateRoot) {
			add("state "+cleanPath(f.Path), f.Inode, fileLine("state entry", f))
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}
