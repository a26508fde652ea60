package criteria

import (
	"strconv"
	"strings"
	"time"

	"faultwin/internal/model"
)

var _ = register(model.F1, "the fault fired where the window names, and what it killed died of SIGKILL (false: INVALID)", f1)

// f1 holds when the armed fault really landed: the trace has a fired point
// equal to the window's point, and the supervisor died of SIGKILL and was
// reaped. A window whose fault did not fire measured some other operation,
// so a false F1 makes the window INVALID, never PASS. An unreaped supervisor
// still looks alive to the sweep, so its death is not confirmed either.
func f1(c *ctx) Result {
	j := &judge{id: model.F1}
	f := c.in.Window.Fault
	if f.Point == "" {
		j.fail("window arms no fault point")
	}
	if f.Disarmed {
		return control(j, c)
	}
	var fired []model.TracePoint
	for _, t := range c.in.Trace {
		if t.Fired {
			fired = append(fired, t)
		}
	}
	hit := false
	for _, t := range fired {
		line := "fired " + t.Point + " at " + t.Time.UTC().Format(time.RFC3339Nano) + " (pid " + strconv.Itoa(t.PID) + ")"
		if t.Note != "" {
			line += ": " + t.Note
		}
		if f.Point != "" && (t.Point == f.Point || t.Point == f.String()) {
			hit = true
			j.note(line)
			criuGone(j, f, t.Note)
		} else {
			j.note(line + ", not the armed point")
		}
	}
	if !hit && f.Point != "" {
		last := "no trace"
		if n := len(c.in.Trace); n > 0 {
			last = "last point passed " + c.in.Trace[n-1].Point
		}
		j.fail("armed point " + f.Point + " never fired (" + plural(len(c.in.Trace), "trace point", "trace points") + ", " + last + ")")
	}
	d := c.in.Death
	switch {
	case len(d.Victims) > 0:
		// An external trigger's kill lands on the processes it names; the
		// supervisor itself may live on (a killed criu or conmon).
		victims(j, d)
	case d.Signaled && isSIGKILL(d.Signal):
		j.note("supervisor died of signal " + strconv.Quote(d.Signal))
	case d.Signaled:
		j.fail("supervisor died of signal " + strconv.Quote(d.Signal) + ", not SIGKILL")
	default:
		line := "supervisor was not killed: exit code " + strconv.Itoa(d.ExitCode)
		if d.OpErr != "" {
			line += ", operation returned " + strconv.Quote(d.OpErr)
		}
		j.fail(line)
	}
	if !d.Reaped {
		j.fail("supervisor not reaped: its death is not confirmed")
	}
	landing(j, f, d.Landing)
	ok := "fault fired at " + f.Point + " and the supervisor died of SIGKILL"
	if len(d.Victims) > 0 {
		ok = "fault fired at " + f.Point + " and " + plural(len(d.Victims), "victim", "victims") + " died of SIGKILL"
	}
	return j.result(ok,
		func(int) string { return "fault did not land as armed at " + f.Point })
}

// criuGone fails a kill that holds CRIU (criu_held) when the fired point
// found no CRIU to stop: the timed kill landed after CRIU finished, and a
// finished dump is no held CRIU to settle. (criu_first windows such as W4
// name delays at which CRIU has often finished: a kill that finds none
// still kills the supervisor where the window says.)
func criuGone(j *judge, f model.Fault, note string) {
	if f.Kill == model.KillCRIUHeld && strings.Contains(note, model.NoteNoCRIUToHold) {
		j.fail("kill " + f.Kill + " found no CRIU running to stop: CRIU had finished before the kill landed")
	}
}

// victims judges an external trigger's kills: each victim was killed by
// (pid, start) and seen gone. A role with no process of the run at the
// instant means the fault did not land as armed. A process of a role that
// was already exiting as its kill came died on its own: it is noted, and
// fails only when no other process of that role was killed.
func victims(j *judge, d model.Death) {
	killed := map[string]bool{}
	for _, v := range d.Victims {
		if v.Err == "" && v.Gone {
			killed[v.Role] = true
		}
	}
	for _, v := range d.Victims {
		who := v.Role + " " + v.Comm + " pid " + strconv.Itoa(v.PID.PID)
		switch {
		case v.Exited && killed[v.Role]:
			j.note(who + " was already exiting when its kill came (not this fault's victim); another " + v.Role + " was killed")
		case v.Err != "":
			j.fail(who + ": " + v.Err)
		case !v.Gone:
			j.fail(who + " was sent SIGKILL but not seen gone")
		default:
			j.note(who + " killed by SIGKILL at " + v.KilledAt.UTC().Format(time.RFC3339Nano) + " and gone")
		}
	}
	switch {
	case d.Signaled:
		j.note("supervisor died of signal " + strconv.Quote(d.Signal))
	case d.OpErr != "":
		j.note("supervisor lived on; its operation returned " + strconv.Quote(d.OpErr))
	default:
		j.note("supervisor lived on; its operation returned success")
	}
	if !d.Reaped {
		j.fail("operation's process not reaped")
	}
}

// landing judges where an external kill landed among the phases its driver
// observes: a window that names its phase (lands_in) measured another
// instant when the kill landed elsewhere, so it is not a PASS of the phase
// it names. Rows of windows that name none only note the landing.
func landing(j *judge, f model.Fault, l *model.Landing) {
	if l == nil {
		if f.LandsIn != "" {
			j.fail("the window must land in phase " + f.LandsIn + ", but no landing was recorded")
		}
		return
	}
	var seen []string
	for _, p := range l.Seen {
		s := p.Name + " at " + p.At.UTC().Format("15:04:05.000")
		if p.Evidence != "" {
			s += " (" + p.Evidence + ")"
		}
		seen = append(seen, s)
	}
	where := "kill landed in phase " + l.Phase
	if l.Phase == "" {
		where = "kill landed before any phase was entered"
	}
	if f.Disarmed {
		where = "disarmed: the " + where
	}
	where += "; phases entered: " + strings.Join(seen, ", ")
	switch {
	case f.LandsIn == "":
		j.note(where)
	case l.Phase != f.LandsIn:
		j.fail(where + "; the window must land in " + f.LandsIn)
	default:
		j.note(where + ", as the window names")
	}
}

// isSIGKILL accepts signal 9 as rows spell it: "SIGKILL" (model.SignalName)
// since one spelling, and "killed", "KILL" or "9" in rows recorded before.
func isSIGKILL(s string) bool {
	switch strings.ToUpper(strings.TrimSpace(s)) {
	case "SIGKILL", "KILL", "KILLED", "9":
		return true
	}
	return false
}

// control ends F1 of a disarmed window: its trigger must have reached the
// armed point (and phase) as the faulted window's would have, and killed
// nothing, so the control measured the same instant with no fault. A
// control that never got there is INVALID as a faulted window would be.
func control(j *judge, c *ctx) Result {
	f, d := c.in.Window.Fault, c.in.Death
	reached := false
	for _, t := range c.in.Trace {
		if (t.Point == f.Point || t.Point == f.String()) && strings.HasPrefix(t.Note, model.ControlNote) {
			reached = true
			j.note("reached " + t.Point + " at " + t.Time.UTC().Format(time.RFC3339Nano) + ": " + t.Note)
		}
		if t.Fired {
			j.fail("a control fired " + t.Point + ": " + t.Note)
		}
	}
	if !reached && f.Point != "" {
		j.fail("the disarmed trigger never reached " + f.Point + " (" + plural(len(c.in.Trace), "trace point", "trace points") + ")")
	}
	for _, v := range d.Victims {
		j.fail("a control killed " + v.Role + " " + v.Comm + " pid " + strconv.Itoa(v.PID.PID))
	}
	switch {
	case d.Signaled:
		j.fail("the operation died of signal " + strconv.Quote(d.Signal) + " with nothing killed by the harness")
	case d.OpErr != "":
		j.note("the operation returned " + strconv.Quote(d.OpErr) + " with no fault (judged by the other criteria)")
	default:
		j.note("the operation returned success")
	}
	if !d.Reaped {
		j.fail("operation's process not reaped")
	}
	landing(j, f, d.Landing)
	return j.result("control: the trigger reached "+f.Point+" and killed nothing",
		func(int) string { return "the control did not reach " + f.Point + " as armed, or killed" })
}
