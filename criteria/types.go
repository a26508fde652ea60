package criteria

import (
	"faultwin/drivers"
	"faultwin/snapshots"
	"faultwin/windows/def"
)

// Input is everything one window's verdict depends on. It is stored in each
// row as is, so replay re-judges exactly what the run judged.
type Input struct {
	Window      def.Window           `json:"window"`
	Scope       drivers.Scope        `json:"scope"`
	Roots       snapshots.Roots      `json:"roots"`
	Decoys      snapshots.Decoys     `json:"decoys"`
	Preflight   snapshots.Snapshot   `json:"preflight"`
	AfterDeath  snapshots.Snapshot   `json:"after_death"`
	AfterSweep  snapshots.Snapshot   `json:"after_sweep"`
	AfterSweep2 snapshots.Snapshot   `json:"after_sweep2"`
	Sweep1      drivers.SweepReport  `json:"sweep1"`
	Sweep2      drivers.SweepReport  `json:"sweep2"`
	Trace       []drivers.TracePoint `json:"trace"`
	Death       drivers.Death        `json:"death"`
	// LedgeredMounts are the mount points the run's ledger recorded, read
	// before the sweep (O1).
	LedgeredMounts []string `json:"ledgered_mounts"`
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
}

// Holds reports whether the criterion was judged and is true.
func (r Result) Holds() bool { return r.Judged && r.Pass }

// Verdict is a window's status and the results it was derived from.
type Verdict struct {
	Status  string   `json:"status"`
	Results []Result `json:"results"`
	Reason  string   `json:"reason"`
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

// Window statuses.
const (
	StatusPass    = "PASS"
	StatusFail    = "FAIL"
	StatusInvalid = "INVALID"
	StatusError   = "ERROR"
)

// Criterion ids. PRE and F1 are gatekeepers: they are judged for every
// window, listed or not, because without them no other result means anything.
const (
	PRE = "PRE"
	F1  = "F1"
	P1  = "P1"
	P2  = "P2"
	P3  = "P3"
	P4  = "P4"
	P5  = "P5"
	P6  = "P6"
	O1  = "O1"
	H1  = "H1"
)

// criuComm is the comm of every CRIU task, including the restorer forks that
// carry neither the supervisor's tag nor a path in argv.
const criuComm = "criu"
