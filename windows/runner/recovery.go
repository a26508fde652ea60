package runner

import (
	"errors"
	"fmt"
	"time"

	"faultwin/drivers"
	"faultwin/internal/model"
)

// Recovery windows (operations hibernate and save) do three things other
// windows do not: read the captured session's identity before the trigger
// (within step 4), restart the supervisor and let it settle after the
// evidence (step 7), and probe a fresh run after the sweeps (step 10).

// recoverer is the driver of a recovery window, or nil for any other.
func (x *attempt) recoverer() drivers.Recoverer {
	if !model.IsRecovery(x.w.Operation) {
		return nil
	}
	rc, _ := x.d.(drivers.Recoverer)
	return rc
}

// identityBefore records who the captured session is, once its counter has
// moved far enough that a cold start (which counts from 1) cannot reach it
// in the time the settle takes.
func (x *attempt) identityBefore() error {
	rc := x.recoverer()
	if rc == nil {
		return fmt.Errorf("driver %s cannot restart its supervisor for a %s window", x.d.Name(), x.w.Operation)
	}
	captured, other := rc.Sessions()
	rec := &model.Recovery{Session: captured, Other: other}
	x.in.Recovery = rec
	return x.step("identity_before", func() error {
		deadline := time.Now().Add(10 * time.Second)
		for {
			rec.Before = rc.Identity(x.ctx, captured)
			if rec.Before.Err == "" && rec.Before.Counter >= minCounterBefore {
				return nil
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("session %s: counter %d not at %d after 10s (%s)", captured, rec.Before.Counter, minCounterBefore, rec.Before.Err)
			}
			time.Sleep(100 * time.Millisecond)
		}
	})
}

// minCounterBefore is the counter the captured session must have reached
// before the trigger: its payload counts every 100 ms.
const minCounterBefore = 15

// recover (step 7, after the evidence): restart the supervisor on the dead run
// (twice, with a death in between, when the window has a second death),
// call both sessions while it settles, then read the identity and intents
// it left, and stop it before the sweeps.
func (x *attempt) recover() {
	rc, rec := x.recoverer(), x.in.Recovery
	if rc == nil || rec == nil || x.in.PrepareErr != "" || x.in.HarnessErr != "" {
		return
	}
	x.logf("restart and settle")
	err := x.step("recover", func() error {
		var err error
		if rec.AtDeath, err = rc.Intents(x.ctx); err != nil {
			return err
		}
		pending := rec.AtDeath
		if x.w.SecondDeath != "" {
			rec.Restarts++
			if err := rc.Restart(x.ctx, x.w.SecondDeath); err != nil {
				return fmt.Errorf("restart armed at %s: %w", x.w.SecondDeath, err)
			}
			d, err := rc.WaitDeath(x.ctx)
			if err != nil {
				return err
			}
			rec.SecondDeath = &d
			if rec.AtSecond, err = rc.Intents(x.ctx); err != nil {
				return err
			}
			pending = rec.AtSecond
		}
		rec.Restarts++
		if err := rc.Restart(x.ctx, ""); err != nil {
			return fmt.Errorf("restart: %w", err)
		}
		var serr error
		rec.Calls, rec.Released, serr = rc.Settle(x.ctx, pending, x.w.Fault.Kill == model.KillCRIUHeld)
		if serr != nil {
			x.logf("settle: %v", serr)
		}
		rec.After = rc.Identity(x.ctx, rec.Session)
		if rec.IntentsAfter, err = rc.Intents(x.ctx); err != nil {
			return err
		}
		tr, err := x.d.Trace()
		if err != nil {
			return err
		}
		if len(tr) >= len(x.in.Trace) {
			rec.Trace = tr[len(x.in.Trace):]
		}
		return rc.Stop()
	})
	if err != nil {
		rec.Err = err.Error()
		// a supervisor left running would keep the sweeps from judging
		// anything: stop it whatever broke
		x.harness("stopping the restarted supervisor", errors.Join(rc.Stop()))
	}
}

// reuse (step 10, after the sweeps): a fresh run on the same state root.
func (x *attempt) reuse() {
	rc, rec := x.recoverer(), x.in.Recovery
	if rc == nil || rec == nil || x.in.PrepareErr != "" || x.in.HarnessErr != "" {
		return
	}
	x.logf("reuse probe")
	_ = x.step("reuse_probe", func() error {
		rec.Probe = rc.Probe(x.ctx, NewRunID(), x.w.Precondition.Display)
		return nil
	})
}
