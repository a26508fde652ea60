// Package runner runs registered fault windows: the eleven steps of one
// window (preflight, decoys, the driver opened, prepare and trigger, death,
// evidence, recovery, aftermath, two sweeps, reuse, the last resort; in the
// order attempt.execute runs them), then the host checked and the criteria
// evaluated, against a driver, and the rows they produce. The CLI
// and both ginkgo suites build it the same way, with New and Open.
package runner

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"time"

	"faultwin/criteria"
	"faultwin/drivers"
	"faultwin/drivers/catalog"
	"faultwin/drivers/reclaim"
	"faultwin/internal/model"
	"faultwin/snapshots"
	"faultwin/snapshots/host"
)

// Config is what a runner is built from.
type Config struct {
	Bin       string   // the supervisor's binary (refsup)
	StateRoot string   // where runs keep their state
	Bugs      []string // known-bug switches (mutant runs only)
	// KillWait, when set, is how long the supervisor waits for a process it
	// killed to go (mutant runs only: a frozen stray never goes, and the
	// verdict is the same after 1 s as after refsup's default 5 s).
	KillWait time.Duration
	LogDir   string    // per-window subdirs for the supervisor's own output
	Progress io.Writer // one line per step; nil for quiet
	// BeforeTrigger, when set, runs between prepare and arm. Mutant specs use
	// it to make the environment adversarial (a process the sweep cannot
	// reap); registered windows never set it.
	BeforeTrigger func(ctx context.Context, sc model.Scope) error
	// AfterDeath, when set, runs after the death evidence is taken and before
	// the sweep. Mutant specs use it to keep the ledger a buggy sweep would
	// lose, so the host can be restored after them.
	AfterDeath func(ctx context.Context, sc model.Scope) error
	// SkipAftermath, when set, is why the user's recovery is not run: the
	// sweep then meets what the death itself left. Mutant specs of sweep
	// bugs set it, since a restarted supervisor tidies up what those bugs
	// would leave; registered windows never do.
	SkipAftermath string
}

// Runner runs windows one at a time. Windows share host-global names (veth
// numbers, nft tables, X displays), so they are never run concurrently.
type Runner struct {
	Config
	Roots snapshots.Roots
	// newDriver returns a fresh driver for one window; logDir is a
	// harness-owned directory for the supervisor's stdout.
	newDriver func(w model.Window, logDir string) (drivers.Driver, error)
}

// New returns a runner that drives each window's supervisor through the
// driver the window names.
func New(cfg Config) *Runner {
	return &Runner{
		Config: cfg,
		Roots:  snapshots.DefaultRoots(cfg.StateRoot),
		newDriver: func(w model.Window, logDir string) (drivers.Driver, error) {
			return catalog.New(driverOf(w), catalog.Options{Bin: cfg.Bin, StateRoot: cfg.StateRoot, LogDir: logDir, Bugs: cfg.Bugs, KillWait: cfg.KillWait})
		},
	}
}

// Outcome is everything one window produced: the criteria's input (which is
// all a replay needs), the verdict, logs and step durations.
type Outcome struct {
	Input     criteria.Input
	Verdict   criteria.Verdict
	Driver    string
	Logs      map[string]string
	Durations map[string]float64 // milliseconds per step
	Host      snapshots.Host
	// Reclaim is what the last resort removed after a described
	// supervisor's window (nil for refsup, whose own sweep is all there is).
	Reclaim *model.Reclaim
	// HostLeft is what the judge of a clean host found once the window was
	// over: each entry would make the next window INVALID at its
	// preflight, so whoever runs windows stops there (StopMessage).
	HostLeft []string
	// HostLeftAt says when HostLeft was found: "preflight" (the window
	// found the host unclean and did not run) or "after" (it left it so).
	HostLeftAt string
	Started    time.Time
	Finished   time.Time
	Bugs       []string // the known-bug switches the supervisor ran with
}

// NewRunID returns a fresh run id: "r" and 8 hex digits.
func NewRunID() string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return "r" + hex.EncodeToString(b)
}

// ErrNoWindows is returned when a filter leaves nothing to run: a run that
// executes zero windows is a failure, not a pass.
var ErrNoWindows = errors.New("no window selected")

// Run runs window w once and judges it. The returned error is reserved for
// failures that leave no trustworthy outcome at all; a harness failure
// inside the window is recorded as HarnessErr, so the row says ERROR
// instead of vanishing.
func (r *Runner) Run(ctx context.Context, w model.Window) (*Outcome, error) {
	o := &Outcome{Durations: map[string]float64{}, Started: time.Now().UTC(), Host: host.Facts(), Bugs: slices.Clone(r.Bugs)}
	o.Input.Window, o.Input.Roots = w, r.RootsFor(w)
	x := &attempt{r: r, ctx: ctx, o: o, in: &o.Input, w: w, run: NewRunID()}
	if x.execute() {
		x.checkAfter()
	}
	o.Finished = time.Now().UTC()
	if l, err := host.LoadAvg(); err == nil {
		o.Host.LoadAfter = l
	}
	o.Verdict = criteria.Evaluate(o.Input)
	return o, nil
}

// attempt is one window while it runs: the steps below fill its input.
type attempt struct {
	r       *Runner
	ctx     context.Context
	o       *Outcome
	in      *criteria.Input
	w       model.Window
	run     string
	planted *Planted
	d       drivers.Driver
	claimer *reclaim.Claimer // the window's claims across its captures
}

// execute runs the steps in order. A step that leaves nothing for the next
// to measure ends the window early; cleanup of what the harness made (the
// decoys, the driver) runs whatever happened.
// It reports whether the window got past its preflight (so something of
// it may be left on the host).
func (x *attempt) execute() bool {
	if !x.preflight() {
		return false
	}
	if !x.plantDecoys() {
		return true
	}
	defer x.removeDecoys()
	if !x.openDriver() {
		return true
	}
	defer x.closeDriver()
	x.prepareAndTrigger()
	x.death()
	x.evidence()
	x.recover()
	x.aftermath()
	x.sweeps()
	x.reuse()
	x.reclaim()
	return true
}

// step times f under name and returns its error.
func (x *attempt) step(name string, f func() error) error {
	t0 := time.Now()
	err := f()
	x.o.Durations[name] += float64(time.Since(t0).Microseconds()) / 1000
	return err
}

// harness records a failure of the harness itself: the window is ERROR.
func (x *attempt) harness(what string, err error) {
	if err != nil {
		x.in.HarnessErr = joinMsg(x.in.HarnessErr, what+": "+err.Error())
	}
}

// capture takes one snapshot. After the preflight, what appeared under the
// host-global names since it and is the run's by evidence is claimed in the
// run's tie record first (reclaim.Claimer), so the snapshot is judged with
// the claims made from it, and the last resort and hostcheck find them.
func (x *attempt) capture(label string, into *snapshots.Snapshot) {
	x.harness("snapshot "+label, x.step("snapshot_"+label, func() (err error) {
		*into, err = host.Capture(x.ctx, label, x.in.Roots, x.in.Decoys)
		if err != nil || label == criteria.LabelPreflight {
			return err
		}
		if x.claimer == nil {
			x.claimer = &reclaim.Claimer{Roots: x.in.Roots, Scope: x.in.Scope, Pre: x.in.Preflight}
		}
		*into, err = x.claimer.Claim(*into)
		return err
	}))
}

func (x *attempt) logf(format string, a ...any) {
	if x.r.Progress != nil {
		fmt.Fprintf(x.r.Progress, x.w.ID+": "+format+"\n", a...)
	}
}

// preflight (step 1): never run on an unclean host. A zombie is already dead
// and waits only for its parent (often init, after the previous window's
// supervisor died) to reap it: give that a moment before judging, so a
// reaping in flight does not read as a leftover.
func (x *attempt) preflight() bool {
	// Every supervisor's names first: a judge that finds the host clean
	// drops the tie records, and a window's own narrower names would drop
	// another supervisor's run's claims unseen.
	if others, oerr := x.othersLeft(criteria.LabelPreflight); oerr != nil || len(others) > 0 {
		x.logf("host unclean or unreadable; not running")
		x.in.PreflightOthers = others
		x.o.HostLeft, x.o.HostLeftAt = others, "preflight"
		if oerr != nil {
			x.o.HostLeft = []string{"host state unreadable: " + oerr.Error()}
		}
		// The row still shows the host as the window's names see it (PRE
		// judges it); no judge runs on it, so no tie record is dropped.
		x.capture(criteria.LabelPreflight, &x.in.Preflight)
		return false
	}
	// Every supervisor's names found the host clean just now (the judge
	// hostcheck is, so the two cannot disagree); this judge is the
	// window's own, whose snapshot the window's claims start from.
	j, err := reclaim.JudgeWith(func() (snapshots.Snapshot, error) {
		x.capture(criteria.LabelPreflight, &x.in.Preflight)
		if x.in.HarnessErr != "" {
			return x.in.Preflight, errors.New(x.in.HarnessErr)
		}
		return x.in.Preflight, nil
	}, x.in.Roots)
	if err != nil || !j.Clean() {
		x.logf("host unclean or unreadable; not running")
		x.o.HostLeft, x.o.HostLeftAt = j.Left, "preflight"
		if err != nil {
			x.o.HostLeft = []string{"host state unreadable: " + err.Error()}
		}
		return false
	}
	return true
}

// othersLeft judges the host with every known supervisor's host-global
// names (AllRoots, as hostcheck does), when they add any to the window's.
func (x *attempt) othersLeft(label string) ([]string, error) {
	all := AllRoots(x.in.Roots)
	if slices.Equal(all.Links, x.in.Roots.Links) && slices.Equal(all.Netns, x.in.Roots.Netns) &&
		slices.Equal(all.Chains, x.in.Roots.Chains) && slices.Equal(all.Sockets, x.in.Roots.Sockets) && slices.Equal(all.State, x.in.Roots.State) {
		return nil, nil
	}
	j, err := reclaim.Judge(x.ctx, label+" (every supervisor's names)", all)
	return j.Left, err
}

// checkAfter judges the host once the window is over (its sweeps, its last
// resort, the decoys removed), with the judge every preflight uses: what
// it finds would make every later window INVALID, so the caller stops
// instead (StopMessage).
func (x *attempt) checkAfter() {
	var j reclaim.Judgement
	var err error
	if j.Left, err = x.othersLeft("after"); err == nil && len(j.Left) == 0 {
		j, err = reclaim.Judge(x.ctx, "after", x.in.Roots)
	}
	switch {
	case err != nil:
		x.o.HostLeft = []string{"host state unreadable after the window: " + err.Error()}
	case len(j.Left) > 0:
		x.o.HostLeft = j.Left
	}
	if len(x.o.HostLeft) > 0 {
		x.o.HostLeftAt = "after"
		x.logf("host left unclean after the window (%d leftovers)", len(x.o.HostLeft))
	}
}

// plantDecoys (step 2): the decoys P5 checks are left untouched.
func (x *attempt) plantDecoys() bool {
	err := x.step("decoys", func() (err error) {
		x.planted, err = Plant(x.r.Roots.StateRoot, x.run)
		return err
	})
	if err != nil {
		x.harness("planting decoys", err)
		return false
	}
	x.in.Decoys = x.planted.Decoys
	return true
}

func (x *attempt) removeDecoys() {
	x.harness("removing decoys", x.step("decoys_remove", x.planted.Remove))
}

// openDriver (step 3): the window's driver, with its logs.
func (x *attempt) openDriver() bool {
	d, err := x.r.newDriver(x.w, filepath.Join(x.r.LogDir, x.w.ID+"-"+x.run))
	if err != nil {
		x.harness("driver", err)
		return false
	}
	x.d, x.o.Driver = d, d.Name()
	if v, ok := d.(drivers.Versioned); ok {
		x.o.Host.Versions = v.Versions(x.ctx)
	}
	return true
}

func (x *attempt) closeDriver() { x.harness("closing driver", x.d.Close()) }

// prepareAndTrigger (step 4): build the precondition, then arm the
// fault for the window's operation and start it. A precondition that was
// not reached makes the window INVALID, and its cause is the console line.
func (x *attempt) prepareAndTrigger() {
	x.logf("prepare %s (run %s)", describePre(x.w.Precondition), x.run)
	err := x.step("prepare", func() (err error) {
		x.in.Scope, err = x.d.Prepare(x.ctx, x.run, x.w.Precondition)
		return err
	})
	if err == nil && model.IsRecovery(x.w.Operation) {
		err = x.identityBefore()
	}
	if err == nil && x.r.BeforeTrigger != nil {
		if err = x.step("before_trigger", func() error { return x.r.BeforeTrigger(x.ctx, x.in.Scope) }); err != nil {
			x.harness("before trigger", err)
		}
	}
	if err == nil {
		x.logf("arm %s, trigger %s", x.w.Fault.String(), x.w.Operation)
		if aerr := x.step("arm", func() error { return x.d.Arm(x.ctx, x.w.Fault) }); aerr != nil {
			err = fmt.Errorf("arming %s: %w", x.w.Fault.String(), aerr)
		} else {
			x.harness("trigger", x.step("trigger", func() error { return x.d.Trigger(x.ctx, x.w.Operation) }))
		}
	}
	if err != nil {
		x.in.PrepareErr = err.Error()
		x.logf("precondition not reached: %v", err)
	}
}

// death (step 5): reap before anything looks at the host, then read where
// the fault landed.
func (x *attempt) death() {
	x.harness("reap", x.step("reap", func() (err error) {
		x.in.Death, err = x.d.Reap(x.ctx)
		return err
	}))
	x.harness("trace", x.step("trace", func() (err error) {
		x.in.Trace, err = x.d.Trace()
		return err
	}))
}

// evidence (step 6): what the death left, before any cleanup.
func (x *attempt) evidence() {
	x.capture(criteria.LabelAfterDeath, &x.in.AfterDeath)
	// What the run owns that can outlive its state dir, kept where its
	// sweep cannot remove it: a process its sweep leaves in one of its
	// namespaces, or holding a file through one of its mounts, is still
	// named after the sweep (snapshots.TieRecord).
	_, err := reclaim.Record(x.in.Roots, x.in.Scope, x.in.AfterDeath)
	x.harness("tie record", err)
	x.harness("ledgered mounts", x.step("ledger", func() (err error) {
		x.in.LedgeredMounts, err = x.d.LedgeredMounts()
		return err
	}))
	_ = x.step("logs", func() error { x.o.Logs = x.d.Logs(); return nil })
	if x.r.AfterDeath != nil && x.in.Scope.Run != "" {
		x.harness("after death", x.r.AfterDeath(x.ctx, x.in.Scope))
	}
}

// aftermath (step 8): what the death cost the user. The driver does what
// the supervisor's user does after a crash, before the destructive sweep.
func (x *attempt) aftermath() {
	ac, ok := x.d.(drivers.Aftercarer)
	if !ok || x.in.PrepareErr != "" || x.in.HarnessErr != "" {
		return
	}
	if why := x.r.SkipAftermath; why != "" {
		x.in.Aftermath = &model.Aftermath{Supervisor: x.o.Driver, Operation: x.w.Operation, Calls: []model.UserCall{},
			NotApplicable: map[string]string{model.U1: why, model.U2: why, model.U3: why}}
		return
	}
	x.logf("aftermath: look, clean up, retry %s, look", x.w.Operation)
	_ = x.step("aftermath", func() error {
		x.in.Aftermath = ac.Aftermath(x.ctx, x.w)
		return nil
	})
}

// sweeps (step 9): the supervisor's own sweep, a snapshot, the sweep again
// (it must be a no-op), a snapshot.
func (x *attempt) sweeps() {
	x.logf("sweep")
	x.harness("sweep 1", x.step("sweep1", func() (err error) {
		x.in.Sweep1, err = x.d.Sweep(x.ctx)
		return err
	}))
	x.capture(criteria.LabelAfterSweep, &x.in.AfterSweep)
	x.harness("sweep 2", x.step("sweep2", func() (err error) {
		x.in.Sweep2, err = x.d.Sweep(x.ctx)
		return err
	}))
	x.capture(criteria.LabelAfterSweep2, &x.in.AfterSweep2)
}

func describePre(p model.Precondition) string {
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
