package criteria

import (
	"slices"
	"strconv"
	"strings"

	"faultwin/internal/model"
)

var _ = register(model.R1, "a fresh run on the same state root works (recovery windows)", r1)

// r1 holds when the host is reusable after the settle and the sweeps: a
// fresh run on the same state root creates a session, checkpoints it and
// restores it with its counter continuing, and its own sweep then leaves
// nothing, refuses nothing and removes its ledger.
func r1(c *ctx) Result {
	j := &judge{id: model.R1}
	j.gap(recoveryGaps(c.in)...)
	if len(j.gaps) > 0 {
		return j.result("", nil)
	}
	p := c.in.Recovery.Probe
	if p.Run == "" {
		j.gap("no reuse probe was run")
		return j.result("", nil)
	}
	if p.Err != "" {
		j.fail("fresh run " + p.Run + " on the same state root failed: " + p.Err)
	}
	for _, step := range []string{"create", "checkpoint", "restore", "sweep"} {
		if !slices.Contains(p.Steps, step) {
			j.fail("fresh run " + p.Run + ": step " + step + " not done")
		}
	}
	if len(j.bad) == 0 {
		r := p.Restored
		if r.Marker == "" || r.CounterMarker != r.Marker || r.Counter < p.Checkpoint {
			j.fail("fresh run " + p.Run + ": restored clone " + r.Session + " does not continue its checkpoint (marker " +
				strconv.Quote(r.CounterMarker) + ", counter " + strconv.Itoa(r.Counter) + " < " + strconv.Itoa(p.Checkpoint) + ")")
		}
		sw := p.Sweep
		if len(sw.Survivors) > 0 || len(sw.Refused) > 0 || len(sw.Errors) > 0 || !sw.LedgerRemoved {
			j.fail("fresh run " + p.Run + ": its sweep left survivors " + strconv.Itoa(len(sw.Survivors)) +
				", refused " + strconv.Itoa(len(sw.Refused)) + ", errors " + strings.Join(sw.Errors, "; ") +
				", ledger removed " + strconv.FormatBool(sw.LedgerRemoved))
		}
	}
	j.note("fresh run " + p.Run + ": " + strings.Join(p.Steps, ", "))
	return j.result("a fresh run on the same state root created, checkpointed, restored and swept cleanly",
		func(int) string { return "host not reusable after the settle and the sweep" })
}
