// Package decoded decodes a row's recorded criteria and keeps, beside a
// row read from a file, the parts of its input a report reads, so that
// the replay's one strict decode serves every reader after it: the
// findings, the landings, the kill maps, the summaries and the cells.
// Each reader still decodes for itself a row this package holds nothing
// for (a row built in memory, or one whose input the replay could not
// decode), exactly as it did.
package decoded

import (
	"encoding/json"

	"faultwin/criteria"
	"faultwin/internal/strictjson"
	"faultwin/reports/rows"
)

type resultsKey struct{}

type results struct {
	rs  []criteria.Result
	err error
}

// Results returns r's recorded criteria decoded strictly, as the replay
// compares them, decoded once per row read from a file. Callers share the
// slice and must not change it.
func Results(r rows.Row) ([]criteria.Result, error) {
	v := rows.Memo(r, resultsKey{}, func() results {
		var rs []criteria.Result
		err := strictjson.Decode(r.Criteria, &rs, "value")
		return results{rs, err}
	})
	return v.rs, v.err
}

// LenientResults returns what json.Unmarshal(r.Criteria, &rs) gives, the
// way readers other than the replay decode criteria: the strict decode's
// when it succeeds (the same values), else json.Unmarshal's own.
func LenientResults(r rows.Row) ([]criteria.Result, error) {
	if rs, err := Results(r); err == nil {
		return rs, nil
	}
	var rs []criteria.Result
	err := json.Unmarshal(r.Criteria, &rs)
	return rs, err
}

type inputKey struct{}

// Keep keeps the parts of in, r's input as the replay decoded it
// strictly, that the report reads: its scope, decoys, trace, death and the
// snapshot after the death. A strict decode that succeeded gives the
// values json.Unmarshal gives into any part of criteria.Input.
func Keep(r rows.Row, in *criteria.Input) {
	part := criteria.Input{Scope: in.Scope, Decoys: in.Decoys, Trace: in.Trace, Death: in.Death, AfterDeath: in.AfterDeath}
	rows.Memo(r, inputKey{}, func() *criteria.Input { return &part })
}

// Input returns the parts of r's input Keep kept, or nil when it kept
// none: the caller decodes r.Input itself then. Only Scope, Decoys, Trace,
// Death and AfterDeath are set; callers must not change them.
func Input(r rows.Row) *criteria.Input {
	in, _ := rows.Recall[*criteria.Input](r, inputKey{})
	return in
}

// Release drops r's Input when Keep kept its parts: every reader that
// reads r through this package finds them without it. A row whose input
// the replay could not decode keeps it, for its readers to decode.
func Release(r *rows.Row) {
	if Input(*r) != nil {
		r.DropInput()
	}
}

// Lighten drops, from rows that were verified and replayed, what only that
// needed: every row's logs, and its input where Keep kept its parts (see
// Release). A report or a replay summary of many soaks then holds no
// snapshot or CRIU log it will not read again.
func Lighten(rs []rows.Row) {
	for i := range rs {
		rs[i].Logs, rs[i].LogsTruncated = nil, nil
		Release(&rs[i])
	}
}
