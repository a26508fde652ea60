// Package rows writes and reads the harness's evidence: one JSON row per
// window run, appended to a JSONL file and chained by hash, so a reviewer
// can re-judge every row without root and can tell if any row was edited,
// removed or reordered. It keeps its own types free of the criteria package:
// the criteria's input and results are stored as raw JSON, so a row stays
// readable whatever shape the criteria take next.
package rows

import (
	"cmp"
	"encoding/json"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"faultwin/internal/model"
	"faultwin/snapshots"
)

// Schema is the row layout this package writes and reads.
const Schema = 1

// LogLimit is how much of each log a row keeps: the last 16 KiB, where the
// death and the sweep are (a CRIU log at its verbose level runs to hundreds
// of KiB; its tail names the failure). It keeps a 20-pass soak of every
// window near 15 MB. A cut log is listed in Row.LogsTruncated.
const LogLimit = 16 << 10

// Row is one window run. Its JSON encoding, with Hash empty, is what Hash is
// the sha256 of: encoding/json's output for this struct (fields in declared
// order, map keys sorted, no insignificant space).
type Row struct {
	Schema       int            `json:"schema"`
	Window       model.Window   `json:"window"`
	Registration Registration   `json:"registration"`
	Run          Run            `json:"run"`
	Host         snapshots.Host `json:"host"`
	Driver       string         `json:"driver"` // "refsup"
	Scope        model.Scope    `json:"scope"`
	// Input is the criteria's input as JSON: snapshots, sweep reports,
	// fault trace, death, decoys. Replay re-judges it.
	Input    json.RawMessage `json:"input"`
	Status   string          `json:"status"` // PASS, FAIL, INVALID, ERROR
	Reason   string          `json:"reason,omitempty"`
	Criteria json.RawMessage `json:"criteria"` // every criterion with its evidence
	// Logs are the supervisor's and CRIU's logs by name, each cut to its
	// last LogLimit bytes; LogsTruncated gives the original size in bytes of
	// each log that was cut.
	Logs          map[string]string  `json:"logs"`
	LogsTruncated map[string]int     `json:"logs_truncated,omitempty"`
	Durations     map[string]float64 `json:"durations_ms"` // milliseconds per step
	// Reclaim is what the harness's last resort removed after a described
	// supervisor's sweeps: kept beside the verdict, never judged as the
	// supervisor's sweep.
	Reclaim *model.Reclaim `json:"reclaim,omitempty"`
	// Prev is the Hash of the row before this one in its file ("" for the
	// first); Hash is this row's own. Writer.Append sets both.
	Prev string `json:"prev"`
	Hash string `json:"hash"`
}

// Supervisor is the driver that ran the row: its recorded driver, else
// its window's, else the default a definition that names none gets (a row
// cut short at preflight records no driver of its own). Every reader that
// groups rows by supervisor asks this.
func (r Row) Supervisor() string { return cmp.Or(r.Driver, r.Window.Driver, model.DefaultDriver) }

// Registration says which commit registered the window's definition and
// whether the definition run is still that one; Registered false is shown
// as "unregistered".
type Registration struct {
	Commit     string `json:"commit"`
	Registered bool   `json:"registered"`
}

// Run is the provenance of the harness that produced the row.
type Run struct {
	Commit   string    `json:"commit"`
	Dirty    bool      `json:"dirty"` // the work tree had uncommitted changes
	Started  time.Time `json:"started"`
	Finished time.Time `json:"finished"`
	// Bugs are the known-bug switches the supervisor ran with: a row of a
	// mutant run, whose FAIL is the bug planted on purpose.
	Bugs []string `json:"bugs,omitempty"`
}

// SetLog stores a log under name, cut to its last LogLimit bytes at a UTF-8
// boundary. Invalid UTF-8 is replaced first, since JSON could not carry it
// and a replaced byte would otherwise break the row's hash on re-reading.
func (r *Row) SetLog(name, text string) {
	if r.Logs == nil {
		r.Logs = map[string]string{}
	}
	text = strings.ToValidUTF8(text, "\uFFFD")
	if len(text) > LogLimit {
		if r.LogsTruncated == nil {
			r.LogsTruncated = map[string]int{}
		}
		r.LogsTruncated[name] = len(text)
		cut := len(text) - LogLimit
		for cut < len(text) && !utf8.RuneStart(text[cut]) {
			cut++
		}
		text = text[cut:]
	}
	r.Logs[name] = text
}

// capLogs applies SetLog's rules to logs set directly in the map.
func (r *Row) capLogs() {
	for name, text := range r.Logs {
		if len(text) > LogLimit || !utf8.ValidString(text) {
			r.SetLog(name, text)
		}
	}
}

// check refuses a row that must not be written: one a replay could not
// trust or could not re-judge.
func (r *Row) check() error {
	switch {
	case r.Schema != Schema:
		return fmt.Errorf("schema %d, this faultwin writes %d", r.Schema, Schema)
	case r.Window.ID == "":
		return fmt.Errorf("no window id")
	case r.Window.Hash != r.Window.SourceHash():
		return fmt.Errorf("window %s: hash does not match its source (load windows with definitions.Load)", r.Window.ID)
	case !model.ValidStatus(r.Status):
		return fmt.Errorf("window %s: status %q is not one of %s", r.Window.ID, r.Status, strings.Join(model.Statuses, ", "))
	}
	return nil
}
