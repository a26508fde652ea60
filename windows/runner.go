// Package windows runs registered fault windows: the eight steps of one
// window (preflight, decoys, prepare, arm and trigger, death, evidence, two
// sweeps, evaluation) against a driver, and the ginkgo suite that makes one
// spec per window instance.
package windows

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"faultwin/criteria"
	"faultwin/drivers"
	"faultwin/fixtures/decoys"
	"faultwin/reports"
	"faultwin/snapshots"
	"faultwin/snapshots/host"
	"faultwin/windows/def"
)

// Runner runs windows one at a time. Windows share host-global names (veth
// numbers, nft tables, X displays), so they are never run concurrently.
type Runner struct {
	// NewDriver returns a fresh driver for one window; logDir is a
	// harness-owned directory for the supervisor's stdout.
	NewDriver func(logDir string) drivers.Driver
	Roots     snapshots.Roots
	LogDir    string    // per-window subdirs are made under it
	Progress  io.Writer // one line per step; nil for quiet
	// BeforeTrigger, when set, runs between prepare and arm. Mutant specs use
	// it to make the environment adversarial (a process the sweep cannot
	// reap); registered windows never set it.
	BeforeTrigger func(ctx context.Context, sc drivers.Scope) error
	// AfterDeath, when set, runs after the death evidence is taken and before
	// the sweep. Mutant specs use it to keep the ledger a buggy sweep would
	// lose, so the host can be restored after them.
	AfterDeath func(ctx context.Context, sc drivers.Scope) error
}

// Outcome is everything one window produced: the criteria's input (which is
// all a replay needs), the verdict, logs and step durations.
type Outcome struct {
	Input     criteria.Input
	Verdict   criteria.Verdict
	Logs      map[string]string
	Durations map[string]float64 // milliseconds per step
	Host      reports.Host
	Started   time.Time
	Finished  time.Time
}

// NewRunID returns a fresh run id: "r" and 8 hex digits.
func NewRunID() string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return "r" + hex.EncodeToString(b)
}

func (r *Runner) logf(format string, a ...any) {
	if r.Progress != nil {
		fmt.Fprintf(r.Progress, format+"\n", a...)
	}
}

// Run runs window w once. The returned error is reserved for failures that
// leave no trustworthy outcome at all; a harness failure inside the window is
// recorded as HarnessErr, so the row says ERROR instead of vanishing.
func (r *Runner) Run(ctx context.Context, w def.Window) (*Outcome, error) {
	o := &Outcome{Durations: map[string]float64{}, Started: time.Now().UTC(), Host: reports.HostFacts()}
	in := &o.Input
	in.Window, in.Roots = w, r.Roots
	run := NewRunID()
	step := func(name string, f func() error) error {
		t0 := time.Now()
		err := f()
		o.Durations[name] += float64(time.Since(t0).Microseconds()) / 1000
		return err
	}
	harness := func(what string, err error) {
		if err != nil {
			in.HarnessErr = joinMsg(in.HarnessErr, what+": "+err.Error())
		}
	}
	capture := func(label string, into *snapshots.Snapshot) {
		harness("snapshot "+label, step("snapshot_"+label, func() (err error) {
			*into, err = host.Capture(ctx, label, r.Roots, in.Decoys)
			return err
		}))
	}
	defer func() {
		o.Finished = time.Now().UTC()
		if l, err := reports.LoadAvg(); err == nil {
			o.Host.LoadAfter = l
		}
		o.Verdict = criteria.Evaluate(*in)
	}()

	// 1. Preflight: never run on an unclean host. A zombie is already dead
	// and waits only for its parent (often init, after the previous window's
	// supervisor died) to reap it: give that a moment before judging, so a
	// reaping in flight does not read as a leftover.
	capture("preflight", &in.Preflight)
	for deadline := time.Now().Add(preflightZombieWait); in.HarnessErr == "" &&
		onlyZombies(in.Preflight, r.Roots) && time.Now().Before(deadline); {
		time.Sleep(50 * time.Millisecond)
		capture("preflight", &in.Preflight)
	}
	if in.HarnessErr != "" || len(criteria.Leftovers(in.Preflight, r.Roots)) > 0 {
		r.logf("%s: host unclean or unreadable; not running", w.ID)
		return o, nil
	}

	// 2. Decoys.
	var planted *decoys.Planted
	if err := step("decoys", func() (err error) {
		planted, err = decoys.Plant(r.Roots.StateRoot, run)
		return err
	}); err != nil {
		harness("planting decoys", err)
		return o, nil
	}
	in.Decoys = planted.Decoys
	defer func() { harness("removing decoys", step("decoys_remove", planted.Remove)) }()

	logDir := filepath.Join(r.LogDir, w.ID+"-"+run)
	d := r.NewDriver(logDir)
	defer func() { harness("closing driver", d.Close()) }()

	// 3. Prepare.
	r.logf("%s: prepare %s (run %s)", w.ID, describePre(w.Precondition), run)
	prepErr := step("prepare", func() (err error) {
		in.Scope, err = d.Prepare(ctx, run, w.Precondition)
		return err
	})
	if prepErr == nil && r.BeforeTrigger != nil {
		if err := step("before_trigger", func() error { return r.BeforeTrigger(ctx, in.Scope) }); err != nil {
			harness("before trigger", err)
			prepErr = err
		}
	}
	if prepErr == nil {
		// 4. Arm and trigger.
		r.logf("%s: arm %s, trigger %s", w.ID, w.Fault.Env(), w.Operation)
		if err := step("arm", func() error { return d.Arm(ctx, w.Fault) }); err != nil {
			prepErr = fmt.Errorf("arming %s: %w", w.Fault.Env(), err)
		} else {
			harness("trigger", step("trigger", func() error { return d.Trigger(ctx, w.Operation) }))
		}
	}
	if prepErr != nil {
		in.PrepareErr = prepErr.Error()
		r.logf("%s: precondition not reached: %v", w.ID, prepErr)
	}

	// 5. Death: reap before anything looks at the host.
	harness("reap", step("reap", func() (err error) {
		in.Death, err = d.Reap(ctx)
		return err
	}))
	harness("trace", step("trace", func() (err error) {
		in.Trace, err = d.Trace()
		return err
	}))

	// 6. Evidence before any cleanup.
	capture("after_death", &in.AfterDeath)
	harness("ledgered mounts", step("ledger", func() (err error) {
		in.LedgeredMounts, err = d.LedgeredMounts()
		return err
	}))
	_ = step("logs", func() error { o.Logs = d.Logs(); return nil })
	if r.AfterDeath != nil && in.Scope.Run != "" {
		harness("after death", r.AfterDeath(ctx, in.Scope))
	}

	// 7. Sweep, snapshot, sweep again, snapshot.
	r.logf("%s: sweep", w.ID)
	harness("sweep 1", step("sweep1", func() (err error) {
		in.Sweep1, err = d.Sweep(ctx)
		return err
	}))
	capture("after_sweep", &in.AfterSweep)
	harness("sweep 2", step("sweep2", func() (err error) {
		in.Sweep2, err = d.Sweep(ctx)
		return err
	}))
	capture("after_sweep2", &in.AfterSweep2)
	return o, nil
}

// preflightZombieWait bounds how long a preflight waits for zombies alone to
// be reaped before it calls the host unclean. Orphans of a killed supervisor
// are reaped by init, and some inits (this VM's among them) reap on a timer:
// a killed orphan was seen to stay a zombie for 7 to 10 s.
const preflightZombieWait = 15 * time.Second

// onlyZombies reports whether s has leftovers and every one of them is a
// zombie process: without its zombies the snapshot would be clean.
func onlyZombies(s snapshots.Snapshot, roots snapshots.Roots) bool {
	if len(criteria.Leftovers(s, roots)) == 0 {
		return false
	}
	live := s
	live.Processes = nil
	for _, p := range s.Processes {
		if !p.Zombie() {
			live.Processes = append(live.Processes, p)
		}
	}
	return len(live.Processes) < len(s.Processes) && len(criteria.Leftovers(live, roots)) == 0
}

func describePre(p drivers.Precondition) string {
	s := fmt.Sprintf("cold=%d restored=%d checkpoint=%v", p.Cold, p.Restored, p.Checkpoint)
	if p.Display {
		s += " display"
	}
	if p.FailRestore {
		s += " fail_restore"
	}
	return s
}

func joinMsg(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

// ErrNoWindows is returned when a filter leaves nothing to run: a run that
// executes zero windows is a failure, not a pass.
var ErrNoWindows = errors.New("no window selected")
