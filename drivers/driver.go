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
