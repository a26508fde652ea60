package criteria_test

import (
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"

	"faultwin/criteria"
	"faultwin/internal/model"
)

// The recorded recovery windows pass as recorded: WH4 (woken from adopted
// images), WH2_60 (the settle waited for a held CRIU) and WS1 (resumed).
func TestRecoveryRecordedPass(t *testing.T) {
	for _, name := range []string{"wh4_pass", "wh2_60_pass", "ws1_pass"} {
		g := NewWithT(t)
		v := criteria.Evaluate(load(t, name))
		g.Expect(v.Status).To(Equal(model.StatusPass), "%s: %s", name, v.Reason)
		for _, id := range []string{model.R1, model.R2, model.R3, model.R4} {
			r, ok := v.Result(id)
			g.Expect(ok && r.Holds()).To(BeTrue(), "%s %s: %s", name, id, r.Summary)
		}
	}
	r := result(t, load(t, "wh4_pass"), model.R2)
	if !strings.Contains(strings.Join(r.Evidence, "\n"), "woken: init") {
		t.Errorf("WH4's R2 does not say the session was woken: %v", r.Evidence)
	}
	r = result(t, load(t, "ws1_pass"), model.R2)
	if !strings.Contains(strings.Join(r.Evidence, "\n"), "resumed: init") {
		t.Errorf("WS1's R2 does not say the session was resumed: %v", r.Evidence)
	}
}

// coldStart rewrites a recorded wake as what a fresh boot of the payload
// gives: a new init, a new boot nonce and a counter that starts again.
func coldStart(in *criteria.Input) {
	a := &in.Recovery.After
	a.Init = model.PID{PID: a.Init.PID + 7, StartTime: a.Init.StartTime + 3}
	a.Boot = "0123456789abcdef"
	a.Counter, a.Counter2 = 2, 5
}

func TestR2ColdStartFails(t *testing.T) {
	g := NewWithT(t)
	in := load(t, "wh4_pass")
	coldStart(&in)
	r := result(t, in, model.R2)
	g.Expect(r.Judged).To(BeTrue())
	g.Expect(r.Pass).To(BeFalse())
	ev := strings.Join(r.Evidence, "\n")
	g.Expect(ev).To(ContainSubstring("booted afresh"))
	g.Expect(ev).To(ContainSubstring("counter restarted"))
	// a cold start runs: R3 (the intent goes once the session runs) holds
	g.Expect(result(t, in, model.R3).Holds()).To(BeTrue())
	g.Expect(criteria.Evaluate(in).Status).To(Equal(model.StatusFail))
}

// The first read after a cold start can still see the old run's file (its
// counter and boot nonce), the second the fresh payload's: 22 then 3. That
// payload runs (R3 holds: the intent may go) and is not the session (R2
// fails on the counter going back), as when both reads see the fresh one.
func TestColdStartReadAcrossItsFirstWrite(t *testing.T) {
	g := NewWithT(t)
	in := load(t, "wh4_pass")
	// the first read is the old run's file whole: its boot nonce too
	a := &in.Recovery.After
	a.Init = model.PID{PID: a.Init.PID + 7, StartTime: a.Init.StartTime + 3}
	a.Counter, a.Counter2 = in.Recovery.Before.Counter+4, 3
	g.Expect(result(t, in, model.R3).Holds()).To(BeTrue())
	r := result(t, in, model.R2)
	g.Expect(r.Judged && !r.Pass).To(BeTrue())
	g.Expect(strings.Join(r.Evidence, "\n")).To(ContainSubstring("counter went back"))
	g.Expect(strings.Join(r.Evidence, "\n")).NotTo(ContainSubstring("does not run"))
}

// A cold start that even kept the boot nonce (it cannot: it is drawn when
// the payload starts) still fails on the counter.
func TestR2CounterAloneCatchesRestart(t *testing.T) {
	in := load(t, "wh4_pass")
	in.Recovery.After.Counter, in.Recovery.After.Counter2 = 1, 3
	r := result(t, in, model.R2)
	if r.Pass || !r.Judged {
		t.Fatalf("R2 %+v", r)
	}
}

func TestR2SaveMustResume(t *testing.T) {
	in := load(t, "ws1_pass")
	a := &in.Recovery.After
	a.Init = model.PID{PID: a.Init.PID + 1, StartTime: a.Init.StartTime + 1}
	r := result(t, in, model.R2)
	if r.Pass || !strings.Contains(strings.Join(r.Evidence, "\n"), "save's images were adopted") {
		t.Fatalf("R2 on a woken save: %+v", r)
	}
}

func TestR2StoppedSessionFails(t *testing.T) {
	in := load(t, "wh4_pass")
	in.Recovery.After.InitAlive = false
	in.Recovery.After.Counter2 = in.Recovery.After.Counter
	if r := result(t, in, model.R2); r.Pass {
		t.Fatalf("R2 holds on a stopped session: %+v", r)
	}
}

func TestR3(t *testing.T) {
	g := NewWithT(t)
	// kept over a running session
	in := load(t, "wh4_pass")
	in.Recovery.IntentsAfter = append(in.Recovery.IntentsAfter, in.Recovery.AtDeath...)
	g.Expect(result(t, in, model.R3).Pass).To(BeFalse())
	// dropped over a stopped one
	in = load(t, "wh4_pass")
	in.Recovery.After.InitAlive = false
	r := result(t, in, model.R3)
	g.Expect(r.Pass).To(BeFalse())
	g.Expect(strings.Join(r.Evidence, "\n")).To(ContainSubstring("nothing will settle it again"))
	// none written before the capture
	in = load(t, "wh4_pass")
	in.Recovery.AtDeath = nil
	g.Expect(result(t, in, model.R3).Pass).To(BeFalse())
	// gone at a second death
	in = load(t, "wh4_pass")
	in.Recovery.SecondDeath = &model.Death{Signaled: true, Signal: "killed", Reaped: true}
	in.Recovery.AtSecond = nil
	g.Expect(result(t, in, model.R3).Pass).To(BeFalse())
}

func TestR4(t *testing.T) {
	g := NewWithT(t)
	in := load(t, "wh2_60_pass")
	g.Expect(result(t, in, model.R4).Holds()).To(BeTrue())
	var end time.Time
	for _, tp := range in.Recovery.Trace {
		if tp.Point == "settle.done" {
			end = tp.Time
		}
	}
	g.Expect(end.IsZero()).To(BeFalse())
	// the other session held until the settle ended
	held := load(t, "wh2_60_pass")
	for i := range held.Recovery.Calls {
		if held.Recovery.Calls[i].Role == "other" {
			held.Recovery.Calls[i].Answered = end.Add(3 * time.Millisecond)
		}
	}
	r := result(t, held, model.R4)
	g.Expect(r.Pass).To(BeFalse())
	g.Expect(r.Summary).To(ContainSubstring("not held exactly"))
	// the settling session answered before its settle ended
	early := load(t, "wh2_60_pass")
	for i := range early.Recovery.Calls {
		if early.Recovery.Calls[i].Role == "settling" {
			early.Recovery.Calls[i].Answered = end.Add(-50 * time.Millisecond)
		}
	}
	g.Expect(result(t, early, model.R4).Pass).To(BeFalse())
	// no call recorded: not judged
	none := load(t, "wh2_60_pass")
	none.Recovery.Calls = nil
	g.Expect(result(t, none, model.R4).Judged).To(BeFalse())
}

func TestR1(t *testing.T) {
	g := NewWithT(t)
	in := load(t, "wh4_pass")
	in.Recovery.Probe.Err = "refsup create: exit status 1: netns: file exists"
	in.Recovery.Probe.Steps = nil
	g.Expect(result(t, in, model.R1).Pass).To(BeFalse())
	in = load(t, "wh4_pass")
	in.Recovery.Probe.Sweep.LedgerRemoved = false
	g.Expect(result(t, in, model.R1).Pass).To(BeFalse())
	in = load(t, "wh4_pass")
	in.Recovery.Probe = model.ReuseProbe{}
	g.Expect(result(t, in, model.R1).Judged).To(BeFalse())
}

// Without a recovery record the R criteria cannot be judged, so a window
// whose supervisor was never restarted is INVALID, never PASS.
func TestRecoveryMissingIsInvalid(t *testing.T) {
	in := load(t, "wh4_pass")
	in.Recovery = nil
	v := criteria.Evaluate(in)
	if v.Status != model.StatusInvalid {
		t.Fatalf("status %s: %s", v.Status, v.Reason)
	}
}

// A timed kill that lands after the capture finished finds nothing to
// settle: the R criteria are not judged and the window is INVALID, not a
// FAIL of a supervisor that did nothing wrong.
func TestCaptureFinishedBeforeKillIsInvalid(t *testing.T) {
	in := load(t, "wh4_pass")
	last := in.Trace[len(in.Trace)-1]
	in.Trace = append(in.Trace[:len(in.Trace)-1], model.TracePoint{Point: "hibernate.done", Time: last.Time, PID: last.PID}, last)
	v := criteria.Evaluate(in)
	if v.Status != model.StatusInvalid || !strings.Contains(v.Reason, "finished before the kill landed") {
		t.Fatalf("status %s: %s", v.Status, v.Reason)
	}
}
