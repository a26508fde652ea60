package criteria

import (
	"path"
	"strings"

	"faultwin/internal/model"
)

var _ = register(model.P7, "no entry of the supervisor's own state of the run is left", p7)

// p7 holds when, after the second sweep, none of the entries where the
// supervisor keeps its workloads' state (Roots.State: runc's state dir of
// a container, a shim's socket or fifos, refsup's sessions and locks) is
// the run's: under its state dir, or under a host-global name that the
// preflight did not see (windows run one at a time on a host found
// clean, so what appeared is the run's). Such an entry is what makes a
// later call say "already exists" or "locked".
func p7(c *ctx) Result {
	j := &judge{id: model.P7}
	j.gap(snapshotGaps(named{LabelPreflight, c.in.Preflight}, named{LabelAfterSweep2, c.in.AfterSweep2})...)
	j.gap(scopeGaps(c.in.Scope, needStateDir)...)
	if len(c.in.Roots.State) == 0 {
		j.gap("the driver names no state entries (a description's owns.state): say where the supervisor keeps a workload's state")
	}
	for _, g := range c.in.Roots.State {
		if _, err := path.Match(strings.ReplaceAll(g, "{state}", "x"), ""); err != nil {
			j.gap("roots: malformed state glob " + g)
		}
	}
	before := map[string]bool{}
	for _, f := range c.in.Preflight.State {
		before[cleanPath(f.Path)] = true
	}
	for _, f := range c.in.AfterSweep2.State {
		p := cleanPath(f.Path)
		switch {
		case c.sc.StateDir != "" && under(p, c.sc.StateDir):
			j.fail(fileLine("state entry", f) + ": in the run's state dir")
		case under(p, c.in.Roots.StateRoot):
			// another run's state dir: the preflight's to refuse
		case model.MadeFrom(p, c.sc.StateDir):
			j.fail(fileLine("state entry", f) + ": its path holds the run's state dir")
		case model.MadeFrom(p, c.in.Roots.StateRoot):
			// made from another run's state dir: that run's
		case c.in.Roots.ByProvenance:
			// Appearing is not enough beside other users: the claim says
			// it appeared during the run and nothing else holds it.
			if why, ok := c.runClaim(c.in.AfterSweep2)("state "+p, f.Inode); ok {
				j.fail(fileLine("state entry", f) + ": " + why)
			}
		case !before[p]:
			j.fail(fileLine("state entry", f) + ": appeared during the run")
		}
	}
	j.note(plural(len(c.in.Roots.State), "state glob", "state globs") + ": " + strings.Join(c.in.Roots.State, " "))
	return j.result("no state entry of the run after the second sweep",
		func(n int) string {
			return plural(n, "state entry", "state entries") + " of the run left after the second sweep"
		})
}
