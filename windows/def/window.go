// Package def holds window definitions as data and their loader. It has no
// host access beyond reading the definition files: a parsed window is
// identical on every machine, so a row can be re-judged anywhere.
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
