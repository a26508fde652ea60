package model

import (
	"fmt"
	"strconv"
	"time"
)

// What a user expects the retry of an interrupted operation to leave.
const (
	// ExpectContinue: the workload runs on from its memory (a restore, a
	// checkpoint then its restore, a supervisor that died idle).
	ExpectContinue = "continue"
	// ExpectAbsent: the workload is gone and nothing of it runs (a removal).
	ExpectAbsent = "absent"
	// ExpectRuns: the workload runs again, a fresh start allowed (a stop,
	// then a start).
	ExpectRuns = "runs"
)

// AftermathGraded is the aftermath version from which a loss is false
// whether or not a call reported it, and the interrupted operation's own
// call is judged by U2.
const AftermathGraded = 2

// AftermathExpert is the version from which a loss says which expert
// steps were tried (or that none is declared), and a workload only they
// brought back is stuck.
const AftermathExpert = 3

// What the death cost the user, as U1 grades it (AftermathGraded on).
const (
	GradeKept      = "kept"      // the workload went on by itself: it ran on from its memory through the death
	GradeRecovered = "recovered" // the user's recovery through the supervisor brought it back
	// GradeStuck: only an expert step outside the supervisor's normal
	// interface (a description's recovery.expert) brought it back.
	GradeStuck = "stuck"
	GradeLost  = "lost" // nothing the user did, not even an expert step, brought it back
)

// Workload states as a user reads them from the supervisor, and as the host
// shows them.
const (
	StateRunning = "running"
	StateStopped = "stopped"
	StateAbsent  = "absent"
	// StatePaused: reported paused, or on the host every live process of
	// it frozen by its cgroup's freezer: it has processes and runs nothing.
	StatePaused = "paused"
)

// Aftermath is what the death cost the user: after the death and before
// the destructive sweep, the harness does what a user does (looks, lets the
// supervisor clean up its own workload, retries the operation), records
// every call, and reads the host at each look. U1..U3 judge it.
type Aftermath struct {
	Supervisor string `json:"supervisor"`
	Operation  string `json:"operation"`
	Target     string `json:"target"` // the workload the user goes on with after the retry
	// Origin is the workload whose state Target must continue (for a
	// restore, the one that was checkpointed).
	Origin string `json:"origin,omitempty"`
	Expect string `json:"expect,omitempty"` // what the retry should leave (Expect*)
	// BoundMS: a call that has not returned after it is a hang.
	BoundMS int `json:"bound_ms"`
	// Before is each workload's identity read before the trigger (a
	// checkpointed one: just before its checkpoint).
	Before []Workload `json:"before"`
	Calls  []UserCall `json:"calls"`
	Looks  []Look     `json:"looks"`
	After  []Workload `json:"after"` // identities once the retry is over
	// Interrupted is the operation's own call, as its user made it, which
	// the death interrupted (recorded from AftermathGraded on): one still
	// running at its bound hung, as a recovery call that does.
	Interrupted *UserCall `json:"interrupted,omitempty"`
	// Rescues are the expert steps tried, in order, once the user's
	// recovery left the workload lost; the first that brought it back
	// ends them (it is a bug report's workaround).
	Rescues []Rescue `json:"rescues,omitempty"`
	// Manifests are the files the user keeps, listed before the trigger
	// (AftermathFiles on): the workload's as its image gives them, and
	// the checkpoint's.
	Manifests []Manifest `json:"manifests,omitempty"`
	// Checkpoints are the checkpoint's manifests compared with what is on
	// the host once the recovery is over; CheckpointKept says the
	// supervisor keeps a checkpoint after a restore that succeeded (so a
	// file of it missing then is damage, not the restore consuming it).
	Checkpoints    []FilesCheck `json:"checkpoints,omitempty"`
	CheckpointKept bool         `json:"checkpoint_kept,omitempty"`
	// Version is the aftermath's judgement: AftermathGraded and later grade
	// what the death cost (U1 is false for any loss, whatever the
	// supervisor said). Rows recorded before it have none and are judged
	// as they were.
	Version int `json:"version,omitempty"`
	// NotApplicable names, per criterion, why it does not apply to this
	// window; such a criterion is judged as holding, with the reason.
	NotApplicable map[string]string `json:"not_applicable,omitempty"`
	Err           string            `json:"err,omitempty"`
}

// Rescue is one expert step tried after the user's recovery: its own
// calls, then the operation's retry again, then the target read.
type Rescue struct {
	Step string `json:"step"` // its name in the description
	Desc string `json:"desc,omitempty"`
	// Calls are the indexes into Aftermath.Calls of its calls.
	Calls  []int    `json:"calls"`
	Target string   `json:"target"`
	After  Workload `json:"after"`
}

// Loss says what the user lost when target is left as after, judged
// against what the retry should leave; "" is nothing. ok is false when
// the workload's identity before the trigger, needed to tell, was not
// read, or when its counter did not move while it was starved of CPU
// (Workload.Starved): whether it runs on is then not known.
func (a *Aftermath) Loss(target string, after Workload) (lost string, ok bool) {
	switch a.Expect {
	case ExpectContinue:
		b, found := a.BeforeOf(a.Origin)
		if !found || b.Boot == "" {
			return "", false
		}
		starved := after.Starved() != ""
		switch {
		case target == "":
			return "no workload came out of the retry", true
		case !after.Running() && !starved:
			return target + " does not run on: " + after.Text(), true
		case after.Boot != b.Boot:
			return target + " booted afresh: boot nonce " + b.Boot + " before, " + after.Boot + " after (its memory is gone)", true
		case after.Marker != b.Marker:
			return target + " is another workload: marker " + b.Marker + " before, " + after.Marker + " after", true
		case after.Counter < b.Counter:
			return target + " went back: counter " + strconv.Itoa(b.Counter) + " before, " + strconv.Itoa(after.Counter) + " after", true
		case after.Files != nil && len(after.Files.Damage) > 0:
			return target + "'s files are damaged: " + DamageText(after.Files.Damage, 5), true
		case starved:
			// what it holds is its own; whether it runs is not known
			return "", false
		}
	case ExpectAbsent:
		if after.Running() || len(after.PIDs) > 0 {
			return target + " still runs after its removal: pids " + fmt.Sprint(after.PIDs), true
		}
	case ExpectRuns:
		starved := after.Starved() != ""
		if !after.Running() && !starved {
			return target + " does not run again: " + after.Text(), true
		}
		if after.Files != nil && len(after.Files.Damage) > 0 {
			return target + "'s files are damaged: " + DamageText(after.Files.Damage, 5), true
		}
		if starved {
			return "", false
		}
	default:
		return "", false
	}
	return "", true
}

// BeforeOf is the named workload's identity read before the trigger.
func (a *Aftermath) BeforeOf(name string) (Workload, bool) {
	for _, w := range a.Before {
		if w.Name == name {
			return w, true
		}
	}
	return Workload{}, false
}

// Text is the identity as a line of evidence.
func (w Workload) Text() string {
	if w.Err != "" {
		return "unreadable (" + w.Err + ")"
	}
	if w.Counter2 == 0 {
		return "boot " + w.Boot + ", counter " + strconv.Itoa(w.Counter) // read once
	}
	s := "boot " + w.Boot + ", counter " + strconv.Itoa(w.Counter) + " then " + strconv.Itoa(w.Counter2)
	if w.Progress != nil {
		s += " (" + w.Progress.Text() + ")"
	}
	return s
}

// Workload is one workload's identity, read from the host: its payload
// writes "<counter> <marker> <boot>" from memory to a file in its root.
type Workload struct {
	Name     string    `json:"name"`
	PIDs     []int     `json:"pids,omitempty"` // its live processes when read
	Marker   string    `json:"marker,omitempty"`
	Boot     string    `json:"boot,omitempty"`
	Counter  int       `json:"counter"`
	Counter2 int       `json:"counter2"` // read again a moment later
	Taken    time.Time `json:"taken"`
	Err      string    `json:"err,omitempty"`
	// Files is its root as it sees it compared with its image's manifest
	// (AftermathFiles on; after the trigger only).
	Files *FilesCheck `json:"files,omitempty"`
	// Progress is how Counter2 was awaited (after the trigger only; rows
	// before it read Counter2 a fixed 300 ms after Counter).
	Progress *Progress `json:"progress,omitempty"`
}

// Running reports whether w was read from a payload that counts.
func (w Workload) Running() bool { return w.Err == "" && w.Boot != "" && w.Counter2 > w.Counter }

// UserCall is one call a user makes after the crash.
type UserCall struct {
	Step     string   `json:"step"` // look, cleanup, retry
	What     string   `json:"what"`
	Argv     []string `json:"argv,omitempty"`
	Exit     int      `json:"exit"`
	Signal   string   `json:"signal,omitempty"`
	TimedOut bool     `json:"timed_out,omitempty"`
	MS       float64  `json:"ms"`
	// BoundMS, when set, is this call's own bound, in place of the
	// aftermath's: a call the supervisor documents as waiting longer (a
	// restore that waits for its workload) hangs only after it.
	BoundMS int    `json:"bound_ms,omitempty"`
	Output  string `json:"output"`
	// Stdout is the call's standard output alone, recorded when it also
	// wrote to stderr (Output holds both, in order): a list is read from
	// it, so a warning on stderr is not taken for part of the view.
	Stdout *string `json:"stdout,omitempty"`
	// Stuck lists, for a call that hung, the processes it left waiting
	// when the bound passed: its own and the run's others.
	Stuck []StuckProc `json:"stuck,omitempty"`
	// HeldOpen lists the processes that still held the call's stdout or
	// stderr once it exited; the call is over at its exit all the same.
	HeldOpen []Holder `json:"held_open,omitempty"`
}

// ListOutput is what a list's view is read from: its standard output.
func (c UserCall) ListOutput() string {
	if c.Stdout != nil {
		return *c.Stdout
	}
	return c.Output
}

// Failed reports whether the call did not succeed.
func (c UserCall) Failed() bool { return c.Exit != 0 || c.Signal != "" || c.TimedOut }

// StuckProc is one process seen when a call hung.
type StuckProc struct {
	PID   int    `json:"pid"`
	PPID  int    `json:"ppid"`
	Comm  string `json:"comm"`
	State string `json:"state"`
	Wchan string `json:"wchan,omitempty"`
	Argv  string `json:"argv,omitempty"`
	Own   bool   `json:"own"` // the call's own process or a descendant
}

// Look is one list call and the host read around it: each workload as the
// supervisor reported it, and as the host showed it just before and just
// after the call.
type Look struct {
	When      string         `json:"when"` // after_death, after_retry
	Call      int            `json:"call"` // index into Calls
	Reported  []Reported     `json:"reported"`
	HostPre   []HostWorkload `json:"host_pre"`
	HostPost  []HostWorkload `json:"host_post"`
	ParseErr  string         `json:"parse_err,omitempty"`
	Unmatched []string       `json:"unmatched,omitempty"` // output lines the parser did not read
}

// Still reports whether the host held still during the look: no workload
// read both before and after the call changed between running and not.
func (l Look) Still() bool {
	pre := map[string]string{}
	for _, h := range l.HostPre {
		pre[h.Name] = h.State()
	}
	for _, h := range l.HostPost {
		if s, ok := pre[h.Name]; ok && s != h.State() {
			return false
		}
	}
	return true
}

// Reported is one workload as the supervisor's list names it.
type Reported struct {
	Name  string `json:"name"`
	State string `json:"state"` // State*; "" when the raw state maps to none
	Raw   string `json:"raw"`   // the supervisor's own word
}

// HostWorkload is one workload as the host shows it: its live (not
// zombie) processes.
type HostWorkload struct {
	Name  string   `json:"name"`
	PIDs  []int    `json:"pids"`
	Comms []string `json:"comms,omitempty"`
	// Frozen: every live process of it is in a frozen cgroup.
	Frozen bool `json:"frozen,omitempty"`
}

// State is the host's state of the workload: running, paused (all of it
// frozen) or stopped.
func (h HostWorkload) State() string {
	switch {
	case len(h.PIDs) > 0 && h.Frozen:
		return StatePaused
	case len(h.PIDs) > 0:
		return StateRunning
	}
	return StateStopped
}

// Holder is a process that kept a call's stdout or stderr open after the
// call's own process exited (a tool that daemonises a monitor and leaves
// it the pipes): the call returned at its exit all the same.
type Holder struct {
	PID  int    `json:"pid"`
	Comm string `json:"comm"`
}
