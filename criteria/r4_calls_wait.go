package criteria

import (
	"time"

	"faultwin/internal/model"
)

// otherSlack is how long before the settle's end a call to another
// session must have gone out for its answer after that end to count as
// held: an inspect takes up to about 100 ms on a busy host, so a settle
// that ends sooner cannot tell a held call from a slow one.
const otherSlack = 200 * time.Millisecond

var _ = register(model.R4, "the restarted supervisor answers other sessions during its settle (recovery)", r4)

// r4 holds when, during the restarted supervisor's settle, calls to the
// settling session are answered only once the settle ended, and calls to
// other sessions are not held until then.
func r4(c *ctx) Result {
	j := &judge{id: model.R4}
	j.gap(recoveryGaps(c.in)...)
	if len(j.gaps) > 0 {
		return j.result("", nil)
	}
	rec := c.in.Recovery
	if len(rec.Calls) == 0 {
		j.gap("no call was made during the settle")
		return j.result("", nil)
	}
	s, ok := finalSettle(rec.Trace)
	if !ok {
		j.note("the last start had no intent to settle: no call had to wait")
	}
	end := s.done
	if ok && !s.finished {
		j.note("the settle never finished: it gave up, or died")
	}
	for _, call := range rec.Calls {
		lat := call.Answered.Sub(call.Sent)
		switch {
		case call.Answered.IsZero():
			j.fail(call.Role + " call to " + call.Session + " never answered")
		case !ok || !s.finished:
		case call.Role == "settling" && call.Sent.Before(end) && call.Answered.Before(end):
			j.fail("call to settling " + call.Session + " answered " + msText(end.Sub(call.Answered)) + " before the settle ended")
		case call.Role == "other" && call.Sent.Before(end.Add(-otherSlack)) && !call.Answered.Before(end):
			j.fail("call to other session " + call.Session + " held " + msText(lat) + ", until the settle ended")
		case call.Role == "other" && !call.Answered.Before(end):
			j.note("the settle ended within " + msText(otherSlack) + " of the call to " + call.Session + ": too short to tell a held call from a slow one")
		}
		j.note(call.Role + " call to " + call.Session + ": " + msText(lat))
	}
	if ok && s.finished {
		j.note("settle " + s.path + ": " + msText(s.done.Sub(s.begin)) + " in the trace")
	}
	return j.result("calls to the settling session waited for the settle, calls to others did not",
		func(int) string { return "calls not held exactly to the settling session" })
}
