// Package def holds window definitions as data and their loader. It has no
// host access: a parsed window is identical on every machine.
package def

import "faultwin/drivers"

// Window is one registered window instance (W3 at 30 ms is "W3_30").
type Window struct {
	ID           string               `json:"id"`        // instance id: "W3_30"
	Family       string               `json:"family"`    // definition id: "W3"
	Operation    string               `json:"operation"` // restore, checkpoint, destroy, sweep, idle
	Fault        drivers.Fault        `json:"fault"`
	Precondition drivers.Precondition `json:"precondition"`
	Criteria     []string             `json:"criteria"` // "F1", "O1", "P1".."P6", "H1"
	Description  string               `json:"description"`
	File         string               `json:"file"` // where it was defined, relative to the repo
	Line         int                  `json:"line"`
	// Source is the family's YAML document exactly as written; its sha256 is
	// the definition hash that registration compares.
	Source string `json:"source"`
	Hash   string `json:"hash"`
}
