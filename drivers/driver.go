// Package drivers holds the contract the runner speaks to a supervisor under
// test. Implementations live in subpackages (drivers/refsup first); each
// publishes a model.DriverSpec (its fault points and operations) that the
// window loader checks definitions against. What a driver returns is plain
// data of package model, stored in every row and read back by replay.
package drivers

import (
	"context"
	"time"

	"faultwin/internal/model"
)

// Driver runs one supervisor lifetime for one window. The runner calls, in
// order: Prepare, Arm, Trigger, Reap, Trace, Logs, Sweep (twice), Close.
type Driver interface {
	// Name is the supervisor's name in rows ("refsup").
	Name() string
	// Prepare starts a fresh supervisor for run (an id the runner chose, so
	// decoys named after it exist before the supervisor does) and builds pre.
	Prepare(ctx context.Context, run string, pre model.Precondition) (model.Scope, error)
	// Arm arms f for the next operation only.
	Arm(ctx context.Context, f model.Fault) error
	// Trigger starts op ("restore", "checkpoint", "destroy", "sweep", "idle")
	// and returns once the supervisor died or the operation returned.
	Trigger(ctx context.Context, op string) error
	// Reap waits for the supervisor process to be gone and reaped.
	Reap(ctx context.Context) (model.Death, error)
	// Trace reads the fault trace; it must be called before any sweep.
	Trace() ([]model.TracePoint, error)
	// LedgeredMounts returns the mount points the run's ledger records, read
	// before any sweep (O1 compares them with the mounts really there).
	LedgeredMounts() ([]string, error)
	// Logs returns the supervisor's and CRIU's logs by name, before any sweep.
	Logs() map[string]string
	// Sweep runs the supervisor's own sweep of the run.
	Sweep(ctx context.Context) (model.SweepReport, error)
	// Close releases what the driver itself holds (never run resources).
	Close() error
}

// Versioned is a driver that says which versions of its supervisor's
// components it drives, for the row (a finding must say what it was seen
// on).
type Versioned interface {
	Versions(ctx context.Context) map[string]string
}

// Recoverer is a driver whose supervisor can be restarted on its dead run's
// state, as recovery windows (operations hibernate and save) need. The
// runner calls Sessions and Identity before the trigger; after the death,
// Intents, Restart (and WaitDeath for a second death), Settle, Identity,
// Intents, Stop; after the sweeps, Probe.
type Recoverer interface {
	// Sessions names the session the capture takes and another live one.
	Sessions() (captured, other string)
	// Identity reads a session's identity through the supervisor.
	Identity(ctx context.Context, session string) model.Identity
	// Intents reads the capture intents the run's ledger holds.
	Intents(ctx context.Context) ([]model.Intent, error)
	// Restart starts the supervisor again on the run, armed to die at
	// fault ("" for none); without a fault it returns once it serves.
	Restart(ctx context.Context, fault string) error
	// WaitDeath waits for the restarted supervisor to die at its fault.
	WaitDeath(ctx context.Context) (model.Death, error)
	// Settle calls the captured and the other session while the restarted
	// supervisor settles the pending intents, lets their held CRIU go on
	// once the settle has begun (returning when), and returns once the
	// settle is over.
	Settle(ctx context.Context, pending []model.Intent, held bool) ([]model.Call, *time.Time, error)
	// Stop kills the restarted supervisor, before the sweeps.
	Stop() error
	// Probe runs a fresh run (a new id) on the same state root: create,
	// checkpoint, restore, then its own sweep. With display the session
	// takes a display, so the host-global display names are reused too.
	Probe(ctx context.Context, run string, display bool) model.ReuseProbe
}

// DeadSweeper is a driver that can run its supervisor's own sweep on a run
// whose window never finished (`faultwin sweep` after an interrupted run):
// made as for a window, it starts no supervisor.
type DeadSweeper interface {
	// SweepDead sweeps run as the supervisor's user would after a crash
	// and returns each sweep's report, in order (one or more).
	SweepDead(ctx context.Context, run string) ([]model.SweepReport, error)
}

// HostChecker is a driver whose supervisor needs more of the host than
// faultwin's own prerequisites (drivers/doctor): `faultwin doctor` lists
// its checks after those.
type HostChecker interface {
	// CheckHost probes each prerequisite for real; path is the PATH to
	// search for commands ("" for the process's).
	CheckHost(ctx context.Context, path string) []Prerequisite
}

// Prerequisite is the outcome of one of a driver's host checks.
type Prerequisite struct {
	Name   string // "podman >= 4"
	OK     bool
	Detail string // what was found
	Fix    string // what provides it ("Debian package podman")
}

// Aftercarer is a driver that can do what its supervisor's user does after
// a crash, before anything destructive: look (list, inspect), let the
// supervisor clean up its own workload, retry the interrupted operation,
// look again. It records each call, bounded, and reads the host at each
// look and each workload's identity from the host (package hostview). The
// runner calls it after the death's evidence and before the sweeps; the
// driver read the workloads' identities before the trigger itself.
type Aftercarer interface {
	Aftermath(ctx context.Context, w model.Window) *model.Aftermath
}

// Tryer is a driver whose supervisor's commands can be run once, with no
// fault, on throwaway runs (faultwin try): each step reported as it ends,
// so the author of a description sees, before a soak, whether a failure
// is the supervisor's or the description's.
type Tryer interface {
	// TryRuns are the runs a try makes, in order, each on a fresh run.
	TryRuns() []TryRun
	// Try makes one of them on run (a fresh driver each): requires aside,
	// the setup, the daemon, the precondition the operation needs, the
	// operation or its retry, the recovery's list and look, the sweep. The
	// sweep runs whatever failed before it.
	Try(ctx context.Context, r TryRun, run string, step func(TryStep))
}

// TryRun is one run of a try: an operation on the precondition it needs,
// or, Retry, the recovery's retry of it on that precondition instead.
type TryRun struct {
	Operation string
	Retry     bool
	Needs     string // "cold 1, checkpoint"
}

// TryStep is one command of a try and what it did.
type TryStep struct {
	Run  string
	What string // "precondition cold 1", "operation restore"
	// Look are the description's fields a failure points at, the step's
	// own first ("precondition.cold", "base").
	Look     []string
	Argv     []string
	Exit     int
	Signal   string
	TimedOut bool
	Seconds  float64
	Output   string
	Log      string // the file holding the whole output
	HeldOpen []model.Holder
	Roles    []TryRole  // each role's first new process during the step
	Phases   []TryPhase // the operation's phases: those seen, in order, then the others
	Err      string     // why the step failed; "" when it ran
	// ListErr is why the recovery's list output could not be read as the
	// description says to read it ("" when it was, or for another step).
	ListErr string
	// Excused says why a failure here is expected of a description that
	// is right (a sweep's cleanup of what is not there): shown, not failed.
	Excused string
	Notes   []string
}

// Failed says whether the step failed unexcused or an operation phase
// went unseen.
func (s TryStep) Failed() bool {
	if s.Erred() {
		return true
	}
	for _, p := range s.Phases {
		if !p.Seen {
			return true
		}
	}
	return false
}

// Erred says whether the step failed unexcused, its phases aside.
func (s TryStep) Erred() bool { return s.Err != "" && s.Excused == "" }

// NeverSeen are the operation's phases whose evidence never showed while
// the step ran: a description fault (the phase's field is wrong). When the
// operation ended in an error first, its unseen phases are Unreached
// instead: the supervisor's answer says why, not their evidence.
func (s TryStep) NeverSeen() []TryPhase {
	if s.Err != "" {
		return nil
	}
	var out []TryPhase
	for _, p := range s.Phases {
		if !p.Seen {
			out = append(out, p)
		}
	}
	return out
}

// Unreached are the names of the phases an operation that ended in an
// error never reached.
func (s TryStep) Unreached() []string {
	if s.Err == "" {
		return nil
	}
	var out []string
	for _, p := range s.Phases {
		if !p.Seen {
			out = append(out, p.Name)
		}
	}
	return out
}

// TryRole is a role's first process that appeared during a step.
type TryRole struct {
	Role   string
	PID    int
	Comm   string
	Argv   []string
	Cgroup string
}

// TryPhase is one phase of the operation and whether its evidence was seen.
type TryPhase struct {
	Name     string
	Seen     bool
	At       float64 // seconds after the step's start
	Evidence string  // what showed it, or what was looked for
	Field    string  // the description's field its evidence is
}
