package model

import (
	"slices"
	"strings"
)

// Point is a fault point a driver publishes: where its supervisor can be
// killed, and what a window must say to arm it there.
type Point struct {
	Name      string `json:"name"`      // "restore.after_overlay"
	Operation string `json:"operation"` // the only operation that passes it
	// Timed points are armed with a delay after CRIU starts (delays_ms).
	Timed bool `json:"timed,omitempty"`
	// CRIU is set where CRIU runs at the point, so killing CRIU's top
	// process first (kill: criu_first) means something.
	CRIU bool `json:"criu,omitempty"`
	// FailRestore points are reached only by a restore made to fail, and a
	// restore made to fail reaches no other point a window may name.
	FailRestore bool   `json:"fail_restore,omitempty"`
	Desc        string `json:"desc,omitempty"`
	// External points are instants seen from outside the supervisor: the
	// clock starts when the Watch role appears ("operation": when the
	// operation starts), runs the window's delay, and the Kill roles are
	// SIGKILLed in order. Empty for points compiled into the supervisor.
	Watch string   `json:"watch,omitempty"`
	Kill  []string `json:"kill,omitempty"`
	// Phase, for an external point whose clock starts when the operation
	// enters a phase, names it (Watch is then PhaseWatch).
	Phase string `json:"phase,omitempty"`
	// Earliest, for an external point, is the first phase a kill at it can
	// land in: the phase it watches, or the one its watched role's
	// appearance enters (a window naming an earlier one contradicts it).
	Earliest string `json:"earliest,omitempty"`
}

// External reports whether p is an external trigger point.
func (p Point) External() bool { return p.Watch != "" }

// WatchOperation is the Watch of an external point whose clock starts with
// the operation itself; as a Kill role it names the operation's process.
const WatchOperation = "operation"

// PhaseWatch is the Watch of an external point whose clock starts when the
// operation enters its Phase.
const PhaseWatch = "phase"

// AnyPhase is the Phase of an external point whose clock starts at the
// phase the window names in lands_in.
const AnyPhase = "*"

// HostNames is what a supervisor makes under host-global names, as globs
// (path.Match), for the snapshots to see and the criteria to judge. See
// snapshots.Roots for how each is used.
type HostNames struct {
	Links  []string
	Netns  []string
	Chains []string
	// Sockets are unix socket paths the supervisor binds under host-global
	// names (containerd's shims under /run/containerd/s); one no process
	// listens on is a leftover.
	Sockets []string
	// State are globs of the entries where the supervisor keeps a
	// workload's state (runc's state dir of a container, a shim's fifos,
	// refsup's sessions); "{state}" in one stands for a run's state dir.
	// An entry of the run left after the sweeps is a leftover (P7).
	State  []string
	Shared []string // finding-key globs kept by design for all runs
}

// DriverSpec is what a driver publishes about its supervisor, so the loader
// can check a window against the driver it names without knowing any driver.
type DriverSpec struct {
	Name       string   // "refsup"
	Operations []string // operations a window can interrupt
	Points     []Point  // every point a window may name
	// Phases are, per operation, the phases the driver observes from
	// outside, in order: what a window's lands_in may name.
	Phases map[string][]string
	// Precondition says what op needs that pre lacks ("" when nothing), and
	// how to fix it: the armed operation must have something to act on.
	Precondition func(op string, pre Precondition) (problem, fix string)
	// Names are the supervisor's host-global names (none for refsup, whose
	// names follow the run naming rules).
	Names HostNames
	// Ledger: the driver records, in its run's state dir, a ledger of the
	// mounts it makes (refsup's), which O1 and P4 judge; a supervisor
	// described as data keeps none faultwin can read.
	Ledger bool
	// Unjudged are the criteria its windows are not judged by unless
	// their definitions add them: every other one of CriterionIDs is
	// (DefaultCriteria), so a new general criterion reaches every window
	// without a change to any window's file.
	Unjudged []string
	// Source is where the spec was described ("drivers/described/supervisors/podman.yaml"),
	// empty for a driver written in Go.
	Source string
}

// Point returns the point named name.
func (d DriverSpec) Point(name string) (Point, bool) {
	for _, p := range d.Points {
		if p.Name == name {
			return p, true
		}
	}
	return Point{}, false
}

// DefaultCriteria are the criteria a window of d interrupting op is judged
// by when its definition lists none, in CriterionIDs order: all but d's
// Unjudged, and the settle's R1..R4 only for a recovery operation.
func (d DriverSpec) DefaultCriteria(op string) []string {
	var out []string
	for _, c := range CriterionIDs {
		if slices.Contains(d.Unjudged, c) || (strings.HasPrefix(c, "R") && !IsRecovery(op)) {
			continue
		}
		out = append(out, c)
	}
	return out
}
