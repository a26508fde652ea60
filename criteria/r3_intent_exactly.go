package criteria

import (
	"faultwin/internal/model"
)

var _ = register(model.R3, "the capture's intent is on disk at every death and gone once it runs (recovery)", r3)

// r3 holds when the capture's intent is on disk at every death (the capture
// was in flight, and a death in the settle leaves it unsettled), and after
// the last settle is gone exactly when the session runs: an intent kept
// over a running session settles it again, an intent dropped over a
// stopped one strands it.
func r3(c *ctx) Result {
	j := &judge{id: model.R3}
	j.gap(recoveryGaps(c.in)...)
	if len(j.gaps) > 0 {
		return j.result("", nil)
	}
	rec := c.in.Recovery
	op := c.in.Window.Operation
	if in, ok := intentOf(rec.AtDeath, rec.Session); !ok || in.Verb != op {
		j.fail("no " + op + " intent of " + rec.Session + " on disk at the death: the capture ran without one")
	}
	if rec.SecondDeath != nil {
		if _, ok := intentOf(rec.AtSecond, rec.Session); !ok {
			j.fail("intent of " + rec.Session + " gone at the second death, in the settle, before the session was safe")
		}
	}
	_, kept := intentOf(rec.IntentsAfter, rec.Session)
	safe := running(rec.After)
	switch {
	case safe && kept:
		j.fail("intent of " + rec.Session + " kept although the session runs")
	case !safe && !kept:
		j.fail("intent of " + rec.Session + " gone although the session does not run: nothing will settle it again")
	}
	state := "does not run"
	if safe {
		state = "runs"
	}
	j.note("after the settle the session " + state + "; intent kept: " + yesNo(kept))
	return j.result("intent on disk while the capture was unsettled, gone once the session ran",
		func(int) string { return "intent of " + rec.Session + " not gone exactly when the session is safe" })
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}
