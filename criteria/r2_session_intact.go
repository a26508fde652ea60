package criteria

import (
	"strconv"

	"faultwin/internal/model"
)

var _ = register(model.R2, "the captured session is intact, not cold-started (recovery)", r2)

// r2 holds when the captured session came through the death intact rather
// than cold-started: its init runs, the marker in its environment and in
// what it writes from memory are the ones from before, its boot nonce (kept
// only in the payload's memory) is the same, and its counter continued from
// the value it had. A resumed session keeps its init's (pid, start time); a
// woken one gets a new one, and the settle must have said which. A save's
// images are never the session: after a save the session must be resumed.
func r2(c *ctx) Result {
	j := &judge{id: model.R2}
	j.gap(recoveryGaps(c.in)...)
	if len(j.gaps) > 0 {
		return j.result("", nil)
	}
	rec := c.in.Recovery
	b, a := rec.Before, rec.After
	switch {
	case b.Err != "":
		j.gap("identity before the trigger unreadable: " + b.Err)
	case b.Boot == "" || b.Marker == "":
		j.gap("identity before the trigger carries no marker or boot nonce")
	}
	if len(j.gaps) > 0 {
		return j.result("", nil)
	}
	if a.Err != "" {
		j.fail("session " + rec.Session + " unreadable after the settle: " + a.Err)
		return j.result("", func(int) string { return "session " + rec.Session + " lost" })
	}
	if !running(a) {
		j.fail("session " + rec.Session + " does not run after the settle (init " + pidText(a.Init) + " alive " +
			strconv.FormatBool(a.InitAlive) + ", counter " + strconv.Itoa(a.Counter) + " then " + strconv.Itoa(a.Counter2) + ")")
	}
	if a.Marker != b.Marker || a.CounterMarker != b.Marker {
		j.fail("marker changed: " + strconv.Quote(b.Marker) + " before, " + strconv.Quote(a.Marker) + " in environ and " +
			strconv.Quote(a.CounterMarker) + " from memory after")
	}
	if a.Boot != b.Boot {
		j.fail("booted afresh: boot nonce " + b.Boot + " before, " + a.Boot + " after (the session's memory is gone)")
	}
	if a.Counter2 < a.Counter {
		// the first read saw what the session wrote before, the second a
		// payload counting again: booted afresh between the reads
		j.fail("counter went back between the two reads after the settle: " + strconv.Itoa(a.Counter) + " then " +
			strconv.Itoa(a.Counter2) + " (a payload booted afresh took over)")
	}
	if a.Counter < b.Counter {
		j.fail("counter restarted: " + strconv.Itoa(b.Counter) + " before, " + strconv.Itoa(a.Counter) + " after")
	}
	kind := "resumed"
	if a.Init != b.Init {
		kind = "woken"
	}
	s, _ := finalSettle(rec.Trace)
	if s.path != "" && s.path != kind && len(j.bad) == 0 {
		j.fail("the settle says " + s.path + ", the session's init says " + kind)
	}
	if c.in.Window.Operation == model.OpSave && kind != "resumed" {
		j.fail("a save's images were adopted: init " + pidText(b.Init) + " replaced by " + pidText(a.Init) +
			", the session rolled back to the save")
	}
	if kind == "resumed" {
		j.note("resumed: init " + pidText(a.Init) + " kept")
	} else {
		j.note("woken: init " + pidText(b.Init) + " -> " + pidText(a.Init))
	}
	j.note("marker " + b.Marker + ", boot " + b.Boot + ", counter " + strconv.Itoa(b.Counter) + " before, " +
		strconv.Itoa(a.Counter) + " then " + strconv.Itoa(a.Counter2) + " after")
	return j.result("session "+rec.Session+" intact ("+kind+"): same marker and boot nonce, counter continued",
		func(int) string { return "session " + rec.Session + " not intact after the settle" })
}
