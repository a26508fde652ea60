package criteria

import (
	"strconv"
	"strings"
	"time"

	"faultwin/internal/model"
)

// Trace points of a supervisor's settle, as refsup names them.
const (
	pointSettleBegin = "settle.begin"
	pointSettleDone  = "settle.done"
)

// settleRun is one restarted supervisor's settle, read from its trace lines.
type settleRun struct {
	pid      int
	begin    time.Time
	done     time.Time // zero when it never finished
	path     string
	waitMS   float64
	totalMS  float64
	finished bool
}

// finalSettle is the settle of the last supervisor that began one, if any.
func finalSettle(tr []model.TracePoint) (settleRun, bool) {
	var s settleRun
	found := false
	for _, tp := range tr {
		switch tp.Point {
		case pointSettleBegin:
			s, found = settleRun{pid: tp.PID, begin: tp.Time}, true
		case pointSettleDone:
			if found && tp.PID == s.pid {
				s.done, s.finished = tp.Time, true
				kv := noteFields(tp.Note)
				s.path = kv["path"]
				s.waitMS, _ = strconv.ParseFloat(kv["wait_ms"], 64)
				s.totalMS, _ = strconv.ParseFloat(kv["total_ms"], 64)
			}
		}
	}
	return s, found
}

// noteFields reads "k=v k=v" notes.
func noteFields(note string) map[string]string {
	out := map[string]string{}
	for _, f := range strings.Fields(note) {
		if k, v, ok := strings.Cut(f, "="); ok {
			out[k] = v
		}
	}
	return out
}

// intentOf returns the intent of session among ins.
func intentOf(ins []model.Intent, session string) (model.Intent, bool) {
	for _, in := range ins {
		if in.Session == session {
			return in, true
		}
	}
	return model.Intent{}, false
}

// running reports whether id's recorded init runs and its counter moved
// between two reads: the session is alive, whatever it remembers. A counter
// that moved back ran too: a payload booted afresh rewrote it after the
// first read saw the old run's value (R2 judges what it remembers).
func running(id model.Identity) bool {
	return id.Err == "" && id.InitAlive && id.Counter2 != id.Counter
}

// recoveryGaps says why a recovery criterion cannot be judged.
func recoveryGaps(in Input) []string {
	rec := in.Recovery
	switch {
	case !model.IsRecovery(in.Window.Operation):
		return []string{"operation " + in.Window.Operation + " has no settle to judge"}
	case rec == nil:
		return []string{"no recovery record: the supervisor was never restarted"}
	case rec.Err != "":
		return []string{"recovery steps broke: " + rec.Err}
	case rec.Session == "":
		return []string{"recovery record names no captured session"}
	}
	for _, tp := range in.Trace {
		if tp.Point == in.Window.Operation+".done" {
			// a timed kill always lands, even after the capture it was
			// armed for finished: then nothing was left to settle
			return []string{"the " + in.Window.Operation + " finished before the kill landed: nothing was left to settle"}
		}
	}
	return nil
}

func pidText(p model.PID) string {
	return "(" + strconv.Itoa(p.PID) + ", " + strconv.FormatUint(p.StartTime, 10) + ")"
}

func msText(d time.Duration) string {
	return strconv.FormatFloat(float64(d.Microseconds())/1000, 'f', 1, 64) + " ms"
}
