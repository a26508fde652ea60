// Package drivers holds the contract the runner speaks to a supervisor under
// test. Implementations live in subpackages (drivers/refsup first). The types
// here are plain data, stored in every row and read back by replay.
package drivers

import (
	"context"
	"encoding/json"
	"strconv"
	"time"

	"faultwin/snapshots"
)

// Scope is what a supervisor run owns, as the driver reports it. Criteria
// judge "of the run" from it; never from names or substrings.
type Scope struct {
	Run         string `json:"run"`         // "r3f9a0c1d"
	Tag         string `json:"tag"`         // exact argv tag value: "faultwin:<run>"
	EnvKey      string `json:"env_key"`     // "FAULTWIN_RUN": set on every process it starts
	StateRoot   string `json:"state_root"`  // parent of every run's state dir
	StateDir    string `json:"state_dir"`   // <StateRoot>/<Run>
	LinkPrefix  string `json:"link_prefix"` // "dvh"
	Table       string `json:"table"`       // nft table of the run, "faultwin_<run>"
	TableFamily string `json:"table_family"`
	Displays    []int  `json:"displays,omitempty"` // X11 displays the run made
	Ledger      string `json:"ledger"`             // the ledger file's path
}

// Precondition is what must exist before the armed operation starts.
type Precondition struct {
	Cold        int  `yaml:"cold" json:"cold"`                 // cold sessions
	Restored    int  `yaml:"restored" json:"restored"`         // sessions restored from a checkpoint
	Checkpoint  bool `yaml:"checkpoint" json:"checkpoint"`     // a checkpoint of a cold session on disk
	Display     bool `yaml:"display" json:"display"`           // sessions get Xvfb + openbox
	FailRestore bool `yaml:"fail_restore" json:"fail_restore"` // the restore is made to fail (W13)
}

// Fault is the armed kill: a named point, optionally delayed after CRIU starts,
// and who is killed first.
type Fault struct {
	Point   string `json:"point"`              // "restore.after_overlay"
	DelayMS int    `json:"delay_ms,omitempty"` // timed variant: ms after CRIU starts
	Kill    string `json:"kill"`               // "supervisor" or "criu_first"
}

// Env renders the fault the way FAULTWIN_FAULT_AT spells it.
func (f Fault) Env() string {
	s := f.Point
	if f.DelayMS > 0 {
		s += "+" + strconv.Itoa(f.DelayMS)
	}
	if f.Kill == "criu_first" {
		s += "!criu"
	}
	return s
}

// TracePoint is one line of a supervisor's fault trace: every point it passed,
// in order, fsync'd before any kill.
type TracePoint struct {
	Point string    `json:"point"`
	Time  time.Time `json:"t"`
	PID   int       `json:"pid"`
	Fired bool      `json:"fired,omitempty"` // this is where the armed kill landed
	Note  string    `json:"note,omitempty"`  // e.g. "criu pid 123 killed first"
}

// Death is how the supervisor ended after the trigger.
type Death struct {
	Signaled bool   `json:"signaled"`
	Signal   string `json:"signal,omitempty"`
	ExitCode int    `json:"exit_code"`
	Reaped   bool   `json:"reaped"`
	// OpErr is the operation's own result when it completed without dying.
	OpErr string `json:"op_err,omitempty"`
	Note  string `json:"note,omitempty"`
}

// Killed is one process a sweep killed, with why it was judged owned.
type Killed struct {
	snapshots.PID
	Comm string `json:"comm"`
	Why  string `json:"why"` // "argv tag", "env tag", "cwd under state dir", ...
}

// Refusal is a ledger entry the sweep would not act on.
type Refusal struct {
	Entry string `json:"entry"`
	Why   string `json:"why"`
}

// SweepReport is what the supervisor's sweep says it did. Second-sweep
// reports must be empty (P6).
type SweepReport struct {
	Run             string          `json:"run"`
	Passes          int             `json:"passes"`
	Killed          []Killed        `json:"killed"`
	Unmounted       []string        `json:"unmounted"`
	LinksDeleted    []string        `json:"links_deleted"`
	TablesDeleted   []string        `json:"tables_deleted"`
	FilesRemoved    []string        `json:"files_removed"`
	SysctlsRestored []string        `json:"sysctls_restored"`
	LedgerRemoved   bool            `json:"ledger_removed"`
	Survivors       []Killed        `json:"survivors"`
	Refused         []Refusal       `json:"refused"`
	Errors          []string        `json:"errors"`
	Raw             json.RawMessage `json:"raw,omitempty"` // the supervisor's own output
}

// Empty reports whether the sweep changed nothing.
func (r SweepReport) Empty() bool {
	return len(r.Killed) == 0 && len(r.Unmounted) == 0 && len(r.LinksDeleted) == 0 &&
		len(r.TablesDeleted) == 0 && len(r.FilesRemoved) == 0 && len(r.SysctlsRestored) == 0 &&
		!r.LedgerRemoved
}

// Driver runs one supervisor lifetime for one window. The runner calls, in
// order: Prepare, Arm, Trigger, Reap, Trace, Logs, Sweep (twice), Close.
type Driver interface {
	// Name is the supervisor's name in rows ("refsup").
	Name() string
	// Prepare starts a fresh supervisor for run (an id the runner chose, so
	// decoys named after it exist before the supervisor does) and builds pre.
	Prepare(ctx context.Context, run string, pre Precondition) (Scope, error)
	// Arm arms f for the next operation only.
	Arm(ctx context.Context, f Fault) error
	// Trigger starts op ("restore", "checkpoint", "destroy", "sweep", "idle")
	// and returns once the supervisor died or the operation returned.
	Trigger(ctx context.Context, op string) error
	// Reap waits for the supervisor process to be gone and reaped.
	Reap(ctx context.Context) (Death, error)
	// Trace reads the fault trace; it must be called before any sweep.
	Trace() ([]TracePoint, error)
	// LedgeredMounts returns the mount points the run's ledger records, read
	// before any sweep (O1 compares them with the mounts really there).
	LedgeredMounts() ([]string, error)
	// Logs returns the supervisor's and CRIU's logs by name, before any sweep.
	Logs() map[string]string
	// Sweep runs the supervisor's own sweep of the run.
	Sweep(ctx context.Context) (SweepReport, error)
	// Close releases what the driver itself holds (never run resources).
	Close() error
}
