package criteria

import (
	"faultwin/internal/model"
	"faultwin/snapshots"
)

var _ = register(model.H1, "host settings are back as they were", h1)

// h1 holds when every host-global setting the supervisor may touch (the
// watched sysctls, ip_forward first) reads after both sweeps what it read at
// preflight. A killed test run that leaves ip_forward=1 behind poisons the
// next run's measurements.
func h1(c *ctx) Result {
	j := &judge{id: model.H1}
	j.gap(snapshotGaps(named{LabelPreflight, c.in.Preflight}, named{LabelAfterSweep2, c.in.AfterSweep2})...)
	keys := c.in.Roots.Sysctls
	if len(keys) == 0 {
		j.gap("no host settings watched")
	}
	for _, k := range keys {
		before, ok1 := sysctl(c.in.Preflight, k)
		after, ok2 := sysctl(c.in.AfterSweep2, k)
		switch {
		case !ok1:
			j.gap("sysctl " + k + " not read at preflight")
		case !ok2:
			j.gap("sysctl " + k + " not read after the sweeps")
		case before != after:
			j.fail("sysctl " + k + " = " + after + " after the sweeps, " + before + " at preflight")
		}
	}
	return j.result(plural(len(keys), "host setting", "host settings")+" as at preflight",
		func(n int) string { return plural(n, "host setting", "host settings") + " changed" })
}

// sysctl reads a watched setting from s, whose keys are in sysctl(8)'s
// dotted form while Roots spells names as /proc/sys paths.
func sysctl(s snapshots.Snapshot, name string) (string, bool) {
	if v, ok := s.Sysctls[snapshots.SysctlKey(name)]; ok {
		return v, true
	}
	v, ok := s.Sysctls[name]
	return v, ok
}
