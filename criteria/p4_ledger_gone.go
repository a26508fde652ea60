package criteria

import (
	"faultwin/internal/model"
	"faultwin/snapshots"
)

var _ = register(model.P4, "the ledger is gone", p4)

// p4 holds when, after both sweeps, the run's ledger file is gone and no
// other ledger file is left under its state dir. The sweep removes the
// ledger last, only once everything it records is gone, so a ledger left
// says the sweep knows it did not finish.
func p4(c *ctx) Result {
	j := &judge{id: model.P4}
	j.gap(snapshotGaps(c.afterSweeps()...)...)
	j.gap(scopeGaps(c.in.Scope, needStateDir, needLedger)...)
	found, gaps := collect(c.afterSweeps(), c.runLedgers)
	j.gap(gaps...)
	for _, f := range found {
		j.fail(f.lineIn())
	}
	return j.result("ledger of the run gone after the sweeps",
		func(n int) string {
			return plural(n, "ledger file", "ledger files") + " of the run left after the sweeps"
		})
}

// runLedgers finds the run's ledger files in s.
func (c *ctx) runLedgers(s snapshots.Snapshot) ([]finding, []string) {
	var found []finding
	for _, f := range s.Ledgers {
		if c.decoyFiles[cleanPath(f.Path)] {
			continue
		}
		if samePath(f.Path, c.sc.Ledger) || under(f.Path, c.sc.StateDir) {
			found = append(found, finding{key: "ledger " + cleanPath(f.Path), line: fileLine("ledger", f)})
		}
	}
	return found, nil
}
