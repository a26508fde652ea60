package model

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"
)

// Window is one registered window instance (W3 at 30 ms is "W3_30").
type Window struct {
	ID           string       `json:"id"`     // instance id: "W3_30"
	Family       string       `json:"family"` // definition id: "W3"
	Driver       string       `json:"driver,omitempty"`
	Operation    string       `json:"operation"` // one of the driver's operations
	Fault        Fault        `json:"fault"`
	Precondition Precondition `json:"precondition"`
	Criteria     []string     `json:"criteria"`         // in CriterionIDs order
	Labels       []string     `json:"labels,omitempty"` // sorted extra labels for selecting windows
	// SecondDeath is a point of the restarted supervisor's settle where it
	// is killed again (recovery windows only); a third start settles.
	SecondDeath string `json:"second_death,omitempty"`
	Description string `json:"description"` // one paragraph, whitespace folded
	File        string `json:"file"`        // where it was defined, relative to the repo
	Line        int    `json:"line"`
	// Source is the family's definition in canonical YAML (fixed key order,
	// defaults written out, no comments), so that reformatting a file or
	// editing a comment does not change it but any change of meaning does.
	// Hash is its hex sha256: the definition hash that registration compares.
	Source string `json:"source"`
	Hash   string `json:"hash"`
}

// Timed reports whether the instance is a timed variant of its point.
func (w Window) Timed() bool { return w.Fault.DelayMS > 0 }

// SourceHash recomputes the hash of w.Source; a row whose Hash differs from
// it carries a definition that was altered after loading.
func (w Window) SourceHash() string { return HashSource(w.Source) }

// HashSource is the definition hash: hex sha256 of a canonical source.
func HashSource(src string) string {
	sum := sha256.Sum256([]byte(src))
	return hex.EncodeToString(sum[:])
}

// SelectionLabels returns the labels windows are selected by (ginkgo labels
// and --label-filter): "window", the instance, the family, the operation,
// the driver, the kind of fault and the window's own labels.
func (w Window) SelectionLabels() []string {
	l := []string{"window", w.ID, w.Operation}
	if w.Family != w.ID {
		l = append(l, w.Family)
	}
	if w.Driver != "" && w.Driver != DefaultDriver {
		l = append(l, w.Driver)
	}
	if w.Fault.DelayMS > 0 {
		l = append(l, "timed")
	}
	if w.Fault.Kill == KillCRIUFirst {
		l = append(l, "criu-first")
	}
	if w.Fault.Kill == KillCRIUHeld {
		l = append(l, "criu-held")
	}
	if w.Precondition.Display {
		l = append(l, "display")
	}
	if w.Fault.LandsIn != "" {
		// the phase the window must land in: select "restore && criu_restoring"
		l = append(l, w.Fault.LandsIn)
	}
	return append(l, w.Labels...)
}

// DefaultDriver is the driver of a window that names none.
const DefaultDriver = "refsup"

// Kill values: who the armed fault kills.
const (
	KillSupervisor = "supervisor" // the supervisor only (the default)
	KillCRIUFirst  = "criu_first" // CRIU's top process, then the supervisor
	// KillCRIUHeld stops CRIU's top process (SIGSTOP) and kills the
	// supervisor: CRIU is left alive, and the harness lets it go on once
	// the restarted supervisor settles.
	KillCRIUHeld = "criu_held"
)

// Precondition is what must exist before the armed operation starts.
type Precondition struct {
	Cold        int  `yaml:"cold" json:"cold"`                 // cold sessions
	Restored    int  `yaml:"restored" json:"restored"`         // sessions restored from a checkpoint
	Checkpoint  bool `yaml:"checkpoint" json:"checkpoint"`     // a checkpoint of a cold session on disk
	Display     bool `yaml:"display" json:"display"`           // sessions get Xvfb + openbox
	FailRestore bool `yaml:"fail_restore" json:"fail_restore"` // the restore is made to fail (W13)
	// NetworkLock is how CRIU locks the session's network while it dumps:
	// "" (skip, the default) or NetworkLockNftables, which makes CRIU create
	// an nft table of its own inside the session's network namespace.
	NetworkLock string `yaml:"network_lock" json:"network_lock,omitempty"`
}

// NetworkLockNftables is the one network lock a window may ask for.
const NetworkLockNftables = "nftables"

// Fault is the armed kill: a named point, optionally delayed after CRIU
// starts, and who is killed first.
type Fault struct {
	Point   string `json:"point"`              // "restore.after_overlay"
	DelayMS int    `json:"delay_ms,omitempty"` // timed variant: ms after CRIU starts
	Kill    string `json:"kill"`               // KillSupervisor or KillCRIUFirst
	// LandsIn is the phase of the operation, as the driver observes it from
	// outside, where the kill must land; F1 fails when it landed elsewhere.
	LandsIn string `json:"lands_in,omitempty"`
	// Disarmed makes the window a control: the same precondition,
	// operation, aftermath, sweeps and criteria, with the trigger watching
	// and recording where it would have fired, and nothing killed. What a
	// control fails, the supervisor fails without the fault.
	Disarmed bool `json:"disarmed,omitempty"`
}

// The notes of a fired point whose kill names CRIU (criu_first,
// criu_held) but found no CRIU running at the instant: CRIU had already
// finished, so the fault landed after the instant the window names.
const (
	NoteNoCRIUToKill = "no criu process was running to kill first"
	NoteNoCRIUToHold = "no criu process was running to hold"
)

// ControlNote starts the note of a disarmed trigger's point: it would
// have fired there, and killed nothing.
const ControlNote = "control: would have fired here, nothing killed"

// String spells f as `<point>[+<ms>][!criu|!hold]`.
func (f Fault) String() string {
	s := f.Point
	if f.DelayMS > 0 {
		s += "+" + strconv.Itoa(f.DelayMS)
	}
	if f.Kill == KillCRIUFirst {
		s += "!criu"
	}
	if f.Kill == KillCRIUHeld {
		s += "!hold"
	}
	return s
}

// CompareIDs orders window ids naturally: W-numbered families by number
// (W2 before W10), then any other family by name, then an instance by delay
// (W3_30 before W3_150).
func CompareIDs(a, b string) int {
	fa, da := splitInstance(a)
	fb, db := splitInstance(b)
	if c := compareFamilies(fa, fb); c != 0 {
		return c
	}
	return da - db
}

func splitInstance(id string) (family string, delay int) {
	f, d, ok := strings.Cut(id, "_")
	if !ok {
		return id, 0
	}
	n, err := strconv.Atoi(d)
	if err != nil {
		return id, 0
	}
	return f, n
}

func compareFamilies(a, b string) int {
	na, oka := wNumber(a)
	nb, okb := wNumber(b)
	switch {
	case oka && okb:
		return na - nb
	case oka:
		return -1
	case okb:
		return 1
	}
	return strings.Compare(a, b)
}

// wNumber returns n for an id of the form W<n>.
func wNumber(id string) (int, bool) {
	if len(id) < 2 || len(id) > 8 || id[0] != 'W' || id[1] == '0' {
		return 0, false
	}
	for _, c := range id[1:] {
		if c < '0' || c > '9' {
			return 0, false
		}
	}
	n, err := strconv.Atoi(id[1:])
	return n, err == nil && n > 0
}
