// Package def holds window definitions as data and their loader. It has no
// host access beyond reading the definition files: a parsed window is
// identical on every machine, so a row can be re-judged anywhere.
//
// A definition is one YAML document (several may share a file, split by
// ---) in windows/*.yaml:
//
//	id: W3                          # family id: capitals and digits
//	operation: restore              # restore, checkpoint, destroy, sweep, idle
//	point: restore.during_criu      # a key of Points, passed by that operation
//	delays_ms: [30, 80, 150, 250]   # timed points only: one instance per delay
//	kill: supervisor                # or criu_first where CRIU runs; default supervisor
//	precondition: {cold: 1, restored: 0, checkpoint: true, display: false, fail_restore: false}
//	criteria: [F1, O1, P1, P2, P3, P4, P5, P6, H1]   # must include F1
//	labels: [timed]                 # optional extra selection labels
//	description: what the window proves, in one paragraph
//
// Required: id, operation, point, precondition, criteria, description.
// Unknown or repeated fields, aliases and values out of range are errors.
package def

import "faultwin/drivers"

// Window is one registered window instance (W3 at 30 ms is "W3_30").
type Window struct {
	ID           string               `json:"id"`        // instance id: "W3_30"
	Family       string               `json:"family"`    // definition id: "W3"
	Operation    string               `json:"operation"` // restore, checkpoint, destroy, sweep, idle
	Fault        drivers.Fault        `json:"fault"`
	Precondition drivers.Precondition `json:"precondition"`
	Criteria     []string             `json:"criteria"`         // in Criteria order: "F1", "O1", "P1".."P6", "H1"
	Labels       []string             `json:"labels,omitempty"` // sorted extra labels for selecting windows
	Description  string               `json:"description"`      // one paragraph, whitespace folded
	File         string               `json:"file"`             // where it was defined, relative to the repo
	Line         int                  `json:"line"`
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
