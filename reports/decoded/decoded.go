// Package decoded is the one reader of rows above the row store: a row's
// input and recorded criteria are decoded once, strictly as the replay
// judges them, and every reader after it (the findings, landings, kill
// maps, summaries, grades, drift, cells and Prometheus) takes the typed
// Record instead of decoding the row's JSON again.
package decoded

import (
	"encoding/json"

	"faultwin/criteria"
	"faultwin/internal/model"
	"faultwin/internal/strictjson"
	"faultwin/reports/rows"
	"faultwin/snapshots"
)

// Record is one row decoded once. Its Row keeps the provenance, the
// window, the verdict as recorded and the host facts; the input's JSON,
// the recorded criteria's JSON and the logs are not kept (a report reads
// none of them again, and they are most of a row's bytes), nor the steps'
// durations and what the harness's last resort removed (no reader above
// the store reads them: a row read through rows keeps them).
type Record struct {
	rows.Row
	// Results are the recorded criteria: decoded strictly, or, for an
	// old row the strict decode refuses (ResultsErr), as encoding/json
	// decodes them; nil when neither can. Readers share them and must
	// not change them.
	Results    []criteria.Result
	ResultsErr error
	// Parts are the parts of the input a report reads, decoded
	// strictly, or as encoding/json decodes them for an old row the
	// strict decode refuses (InputErr); nil when neither can.
	Parts    *Parts
	InputErr error
}

// Parts are what the report's views read of a row's input: the run's
// scope, the decoys and the death; of the trace, the points that fired
// and those of a trigger that never fired (where an external kill
// landed). A timed window's kill map reads the points passed before the
// kill too, and what the snapshot after the death showed of the run, which
// only its records keep.
type Parts struct {
	Scope      model.Scope
	Decoys     snapshots.Decoys
	Trace      []model.TracePoint
	Death      model.Death
	AfterDeath *AfterDeath
}

// AfterDeath is what a kill map reads of the snapshot taken right after
// the death, counted when the row is decoded: the snapshot itself (the
// run's processes and mounts) is not kept.
type AfterDeath struct {
	// CRIUAlive: a criu process (not a decoy, not a zombie) was alive.
	CRIUAlive bool
	// Alive counts the run's live processes (criteria.OfRun, zombies
	// not counted), Mounted the mounts under its state dir (decoys not
	// counted).
	Alive, Mounted int
}

// afterDeath counts what a kill map reads of a, the snapshot after the
// death of the run sc with decoys d.
func afterDeath(a snapshots.Snapshot, sc model.Scope, d snapshots.Decoys) *AfterDeath {
	var o AfterDeath
	for _, p := range a.Processes {
		if p.Comm == model.CRIUComm && !p.Zombie() && !p.Decoy {
			o.CRIUAlive = true
		}
	}
	for _, ow := range criteria.OfRun(a, sc, d) {
		if !ow.Process.Zombie() {
			o.Alive++
		}
	}
	for _, m := range a.Mounts {
		if !m.Decoy && sc.StateDir != "" && model.Within(m.MountPoint, sc.StateDir) {
			o.Mounted++
		}
	}
	return &o
}

// Decode decodes r once: it returns its Record, and the whole input as
// the strict decode gives it (nil when it does not decode strictly), for
// the replay to judge before it is dropped.
func Decode(r rows.Row) (Record, *criteria.Input) { return decode(r, true) }

// decode is Decode; without parts, the record's Parts are left nil (a
// reader that only judges, and keeps no record, reads none of them).
func decode(r rows.Row, withParts bool) (Record, *criteria.Input) {
	rec := Record{Row: r}
	rec.Input, rec.Criteria, rec.Logs, rec.LogsTruncated = nil, nil, nil, nil
	rec.Durations, rec.Reclaim = nil, nil
	rec.Results, rec.ResultsErr = Results(r)
	var in criteria.Input
	full := &in
	if err := strictjson.Decode(r.Input, &in, "value"); err != nil {
		rec.InputErr, full = err, nil
		in = criteria.Input{}
		if json.Unmarshal(r.Input, &in) != nil {
			return rec, nil
		}
	}
	if withParts {
		rec.Parts = parts(r, &in)
	}
	return rec, full
}

// Results decodes r's recorded criteria alone: strictly, or, when the
// strict decode refuses them (its error is strictErr), as encoding/json
// decodes them; nil when neither can. A fact an older row spelt only in
// prose is read into its field (compat.go).
func Results(r rows.Row) (rs []criteria.Result, strictErr error) {
	if strictErr = strictjson.Decode(r.Criteria, &rs, "value"); strictErr != nil {
		rs = nil
		if json.Unmarshal(r.Criteria, &rs) != nil {
			return nil, strictErr
		}
	}
	upgrade(rs)
	return rs, strictErr
}

// Of decodes rows held in memory (a test's, a merge's).
func Of(rs ...rows.Row) []Record {
	out := make([]Record, len(rs))
	for i, r := range rs {
		out[i], _ = Decode(r)
	}
	return out
}

func parts(r rows.Row, in *criteria.Input) *Parts {
	p := &Parts{Scope: in.Scope, Decoys: in.Decoys, Death: in.Death}
	timed := r.Window.Fault.DelayMS > 0
	if timed {
		// What the kill map reads of it, counted now: the snapshot's
		// processes and mounts are most of what a record would hold.
		p.AfterDeath = afterDeath(in.AfterDeath, in.Scope, in.Decoys)
	}
	// Where an external kill landed reads the points that fired and
	// those of a trigger that never fired; a timed window's kill map
	// reads the points passed before the first of them too.
	passing := timed
	for _, tp := range in.Trace {
		landed := tp.Fired || model.NotFired(tp.Note)
		if landed || passing {
			p.Trace = append(p.Trace, tp)
		}
		passing = passing && !landed
	}
	return p
}

// File is one rows file read once: its records in file order and what
// its chain and seals say.
type File struct {
	Path    string
	Records []Record
	Lines   []int // Lines[i] is the 1-based line of Records[i]
	ReadErr error // the file did not read to its end; Records hold what came before
	Chain   error // Contents.Verify's error
	Seal    rows.Sealing
}

// Read reads path, verifies its chain and seals, and decodes each row
// once. each, when set, is given each record with the whole input as
// Decode returns it, before the input is dropped: the replay judges
// there. A file's rows are held while it is read and verified; each
// row's input, logs and JSON go as soon as it is decoded, so a reader
// of many files holds one file's bytes at a time.
func Read(path string, each func(i int, rec *Record, in *criteria.Input)) File {
	c, err := rows.ReadContents(path)
	return fromContents(c, err, each, true, true)
}

// ReadToJudge is Read for a reader that judges each row in each and keeps
// no record past it (a replay that prints counts): the records' Parts are
// not read (nil), whatever the input.
func ReadToJudge(path string, each func(i int, rec *Record, in *criteria.Input)) File {
	c, err := rows.ReadContents(path)
	return fromContents(c, err, each, true, false)
}

// FromContents is Read over a file already read, whose rows the caller
// keeps (a merge writes them again).
func FromContents(c *rows.Contents, readErr error, each func(i int, rec *Record, in *criteria.Input)) File {
	return fromContents(c, readErr, each, false, true)
}

func fromContents(c *rows.Contents, readErr error, each func(int, *Record, *criteria.Input), drop, withParts bool) File {
	f := File{Path: c.Path, ReadErr: readErr, Chain: c.Verify(), Seal: c.Sealing(), Lines: c.RowLines}
	f.Records = make([]Record, len(c.Rows))
	// A soak's rows of one window carry the same definition, and most of
	// their criteria the same summaries and many the same evidence: the
	// records share one copy of each.
	var same interner = map[string]string{}
	for i, r := range c.Rows {
		r.Window.Source = same.of(r.Window.Source)
		rec, in := decode(r, withParts)
		for j := range rec.Results {
			res := &rec.Results[j]
			res.Summary = same.of(res.Summary)
			for k, e := range res.Evidence {
				res.Evidence[k] = same.of(e)
			}
		}
		if each != nil {
			each(i, &rec, in)
		}
		f.Records[i] = rec
		if drop {
			c.Rows[i] = rows.Row{}
		}
	}
	return f
}

// interner hands out one copy of each string it is given.
type interner map[string]string

func (m interner) of(s string) string {
	if t, ok := m[s]; ok {
		return t
	}
	m[s] = s
	return s
}
