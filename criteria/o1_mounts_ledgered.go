package criteria

import (
	"strconv"

	"faultwin/internal/model"
)

var _ = register(model.O1, "every mount under the run's dirs was in the ledger before the sweep", o1)

// o1 holds when, at the supervisor's death and before any sweep, every mount
// under the run's state dir (host or foreign, once per mount point) is in the
// run's ledger. The ledger is written before each resource is made; a mount
// missing from it is one the sweep cannot know to remove. Decoy mounts are
// never counted: a harness that judged its own decoy
// unledgered and failed O1 on all 8 windows while P1..P6 held, a harness
// defect. Matching is by path components, so a sibling run's mounts
// (r10 beside r1) are not the run's.
func o1(c *ctx) Result {
	j := &judge{id: model.O1}
	j.gap(snapshotGaps(named{LabelAfterDeath, c.in.AfterDeath})...)
	j.gap(scopeGaps(c.in.Scope, needStateDir)...)
	ledgered := map[string]bool{}
	for _, m := range c.in.LedgeredMounts {
		ledgered[cleanPath(m)] = true
	}
	seen := map[string]bool{}
	count, decoys := 0, 0
	for _, m := range c.in.AfterDeath.Mounts {
		mp := cleanPath(m.MountPoint)
		if !under(mp, c.sc.StateDir) || seen[mp] {
			continue
		}
		seen[mp] = true
		if c.isDecoyMount(m) {
			decoys++
			continue
		}
		count++
		if !ledgered[mp] {
			j.fail(mountLine(m) + " not in ledger")
		}
	}
	if decoys > 0 {
		j.note(plural(decoys, "decoy mount", "decoy mounts") + " under the state dir not counted")
	}
	return j.result(plural(count, "mount", "mounts")+" under the state dir at death, all ledgered",
		func(n int) string {
			return strconv.Itoa(n) + " of " + plural(count, "mount", "mounts") + " under the state dir not in the ledger"
		})
}
