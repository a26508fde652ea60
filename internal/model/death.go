package model

import (
	"encoding/json"
	"time"
)

// PID identifies a process across PID reuse: a pid alone can be recycled, the
// pair (pid, start time in clock ticks since boot) cannot within one boot.
type PID struct {
	PID       int    `json:"pid"`
	StartTime uint64 `json:"start"`
}

// TracePoint is one line of a supervisor's fault trace: every point it passed,
// in order, written durably before any kill.
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
	// Victims are the processes an external trigger killed, in kill order.
	// When set, the fault landed on them and the supervisor itself may have
	// lived on (a killed criu or conmon): F1 judges their deaths.
	Victims []Victim `json:"victims,omitempty"`
	// Landing is where an external kill landed among the phases of the
	// operation its driver observes; nil where the driver declares none.
	Landing *Landing `json:"landing,omitempty"`
}

// Landing is the phases an external trigger saw the operation enter before
// its kill, and the one the kill landed in.
type Landing struct {
	// Phase is the latest phase, in the operation's declared order, entered
	// before the kill.
	Phase string `json:"phase"`
	// Seen are the phases entered up to the kill, in the order they were
	// entered; a phase entered twice is listed once.
	Seen []PhaseSeen `json:"seen"`
}

// PhaseSeen is one phase and when it was entered.
type PhaseSeen struct {
	Name string    `json:"name"`
	At   time.Time `json:"at"`
	// Evidence is what showed it ("criu pid 123 holds /x/checkpoint").
	Evidence string `json:"evidence,omitempty"`
}

// Victim is one process an external trigger killed: by (pid, start) through
// a pidfd, never by name, and whether it was seen gone afterwards.
type Victim struct {
	Role string `json:"role"` // "criu", "conmon", "podman", the driver's role name
	PID
	Comm     string    `json:"comm"`
	KilledAt time.Time `json:"killed_at"`
	// Gone is set once the process was seen exited (its pidfd readable)
	// within the driver's bound after the kill.
	Gone bool   `json:"gone"`
	Err  string `json:"err,omitempty"` // why it could not be killed or confirmed
	// Exited is set when the process was already exiting (Z or X) as its
	// kill came: it died on its own between the trigger's look and the
	// kill, so it is not this fault's victim.
	Exited bool `json:"exited,omitempty"`
}

// Killed is one process a sweep killed, with why it was judged owned.
type Killed struct {
	PID
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
	CgroupsRemoved  []string        `json:"cgroups_removed,omitempty"`
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
		len(r.CgroupsRemoved) == 0 && !r.LedgerRemoved
}

// Reclaim is what the harness's last resort removed after a described
// supervisor's window, so the next window finds a clean host. It runs after
// every judged snapshot, is kept in the row beside the verdict and is never
// counted as the supervisor's own sweep.
type Reclaim struct {
	// Thawed are the run's frozen cgroups thawed before its processes were
	// killed, each with what froze it: "<dir> (FROZEN)" (v1 freezer.state),
	// "<dir> (cgroup.freeze 1)" (v2). Absent in rows before it was kept.
	Thawed          []string `json:"thawed,omitempty"`
	Killed          []Killed `json:"killed,omitempty"`
	Unmounted       []string `json:"unmounted,omitempty"`
	FilesRemoved    []string `json:"files_removed,omitempty"`
	LinksDeleted    []string `json:"links_deleted,omitempty"`
	RulesDeleted    []string `json:"rules_deleted,omitempty"`
	ChainsDeleted   []string `json:"chains_deleted,omitempty"`
	TablesDeleted   []string `json:"tables_deleted,omitempty"`
	CgroupsRemoved  []string `json:"cgroups_removed,omitempty"`
	SysctlsRestored []string `json:"sysctls_restored,omitempty"`
	Errors          []string `json:"errors,omitempty"`
}

// Empty reports whether the last resort found nothing to do.
func (r Reclaim) Empty() bool {
	return len(r.Thawed)+len(r.Killed)+len(r.Unmounted)+len(r.FilesRemoved)+len(r.LinksDeleted)+len(r.RulesDeleted)+
		len(r.ChainsDeleted)+len(r.TablesDeleted)+len(r.CgroupsRemoved)+len(r.SysctlsRestored) == 0
}
