package criteria

import (
	"faultwin/internal/model"
	"faultwin/snapshots"
)

// Snapshot labels: the runner takes each of Input's snapshots under its
// label, and the criteria refuse one that carries another (swapped
// evidence).
const (
	LabelPreflight   = "preflight"
	LabelAfterDeath  = "after_death"
	LabelAfterSweep  = "after_sweep"
	LabelAfterSweep2 = "after_sweep2"
)

// Input is everything one window's verdict depends on. It is stored in each
// row as is, so replay re-judges exactly what the run judged.
type Input struct {
	Window    model.Window       `json:"window"`
	Scope     model.Scope        `json:"scope"`
	Roots     snapshots.Roots    `json:"roots"`
	Decoys    snapshots.Decoys   `json:"decoys"`
	Preflight snapshots.Snapshot `json:"preflight"`
	// PreflightOthers are the leftovers the judge found at the preflight
	// with every supervisor's host-global names (as hostcheck judges) that
	// the window's own roots do not show: another supervisor's stale
	// socket, say. Rows from before it lack it.
	PreflightOthers []string           `json:"preflight_others,omitempty"`
	AfterDeath      snapshots.Snapshot `json:"after_death"`
	AfterSweep      snapshots.Snapshot `json:"after_sweep"`
	AfterSweep2     snapshots.Snapshot `json:"after_sweep2"`
	Sweep1          model.SweepReport  `json:"sweep1"`
	Sweep2          model.SweepReport  `json:"sweep2"`
	Trace           []model.TracePoint `json:"trace"`
	Death           model.Death        `json:"death"`
	// LedgeredMounts are the mount points the run's ledger recorded, read
	// before the sweep (O1).
	LedgeredMounts []string `json:"ledgered_mounts"`
	// Recovery is what a recovery window recorded after the first death:
	// the restarts, the settle, identities and intents (R1..R4).
	Recovery *model.Recovery `json:"recovery,omitempty"`
	// Aftermath is what the user's own recovery found after the death and
	// before the sweep: the calls, the looks and the workloads (U1..U3).
	Aftermath *model.Aftermath `json:"aftermath,omitempty"`
	// PrepareErr is set when the window's precondition was not reached.
	PrepareErr string `json:"prepare_err,omitempty"`
	// HarnessErr is set when the harness itself broke during the window.
	HarnessErr string `json:"harness_err,omitempty"`
}

// Result is one criterion's answer. Judged is false when the evidence it
// reads is missing or incomplete; Pass is then false too and means nothing.
type Result struct {
	ID       string   `json:"id"`
	Pass     bool     `json:"pass"`
	Judged   bool     `json:"judged"`
	Summary  string   `json:"summary"`
	Evidence []string `json:"evidence,omitempty"`
	// Workaround is the expert step that brought back a workload the
	// user's own recovery left lost (U1 graded stuck): a bug report's
	// workaround. Rows recorded before it name it in U1's summary only;
	// reports/decoded reads it from there for them.
	Workaround string `json:"workaround,omitempty"`
}

// Holds reports whether the criterion was judged and is true.
func (r Result) Holds() bool { return r.Judged && r.Pass }

// Verdict is a window's status and the results it was derived from.
type Verdict struct {
	Status  string   `json:"status"`
	Results []Result `json:"results"`
	Reason  string   `json:"reason"`
}

// Outcome is the verdict as an outcome: its status, then the criteria
// that did not hold. An INVALID or ERROR window measured nothing about
// the supervisor: only what made it so is kept (F1 for a fault that did
// not land, PRE for an unclean host), not the other criteria's
// accidental results.
func (v Verdict) Outcome() model.Outcome {
	o := model.Outcome{Status: v.Status}
	for _, r := range v.Results {
		if r.Holds() {
			continue
		}
		if v.Status == model.StatusInvalid && r.ID != model.F1 && r.ID != model.PRE {
			continue
		}
		o.False = append(o.False, r.ID)
	}
	return o
}

// Result returns the result with the given id, if the verdict has one.
func (v Verdict) Result(id string) (Result, bool) {
	for _, r := range v.Results {
		if r.ID == id {
			return r, true
		}
	}
	return Result{}, false
}
