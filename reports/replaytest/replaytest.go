// Package replaytest builds rows the way the runner does, from recorded
// criteria inputs and a frozen copy of the restore window definitions, so
// replay, summary and rendering tests judge real criteria output rather
// than hand-written verdicts that could drift from criteria.Evaluate.
package replaytest

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"time"

	"faultwin/criteria"
	"faultwin/drivers/catalog"
	"faultwin/internal/model"
	"faultwin/internal/strictjson"
	"faultwin/reports/rows"
	"faultwin/snapshots"
	"faultwin/windows/definitions"
)

//go:embed testdata/*.json testdata/windows.yaml
var data embed.FS

// Inputs recorded from the criteria's tests, by name.
const (
	W4Pass         = "w4_30_pass"                   // W4_30, PASS
	W4Survivor     = "w4_30_criu_restorer_survived" // W4_30, FAIL: P1
	W1Leftover     = "preflight_leftover_restorer"  // W1, INVALID: preflight
	W3NotFired     = "w3_250_fault_not_fired"       // W3_250, INVALID: F1
	W5IPForward    = "w5_ip_forward_left_on"        // W5, FAIL: H1
	W2Unledgered   = "w2_unledgered_overlay"        // W2, FAIL: O1
	windowsFixture = "testdata/windows.yaml"
)

// Window returns the fixture's window instance id ("W3_30").
func Window(id string) model.Window {
	b, err := data.ReadFile(windowsFixture)
	if err != nil {
		panic(err)
	}
	ws, err := definitions.ParseFile("windows/restore.yaml", b, catalog.Specs())
	if err != nil {
		panic(err)
	}
	for _, w := range ws {
		if w.ID == id {
			return w
		}
	}
	panic("replaytest: no window " + id)
}

// Input returns the recorded input name with its window replaced by the
// fixture's definition of the same instance (the recorded one carries no
// source, so its hash could not verify).
func Input(name string) criteria.Input {
	b, err := data.ReadFile("testdata/" + name + ".json")
	if err != nil {
		panic(err)
	}
	var in criteria.Input
	if err := strictjson.Decode(b, &in, "input"); err != nil {
		panic(fmt.Sprintf("replaytest: %s: %v", name, err))
	}
	in.Window = Window(in.Window.ID)
	return in
}

// As returns the input retargeted at another window instance of the same
// point (a W4_30 pass judged as a W3_30 pass, say).
func As(in criteria.Input, id string) criteria.Input {
	in.Window = Window(id)
	return in
}

// Errored returns the input as if the harness broke while capturing.
func Errored(in criteria.Input, msg string) criteria.Input {
	in.HarnessErr = msg
	return in
}

// Prov is the provenance a fixture row records.
type Prov struct {
	Commit  string
	Started time.Time
	Load    float64 // 1-minute load average before the window
}

// Row judges in with criteria.Evaluate and returns the row the runner would
// write for it (Prev and Hash are set by Writer.Append).
func Row(in criteria.Input, p Prov) rows.Row {
	v := criteria.Evaluate(in)
	inJSON, err := json.Marshal(in)
	if err != nil {
		panic(err)
	}
	crit, err := json.Marshal(v.Results)
	if err != nil {
		panic(err)
	}
	r := rows.Row{
		Schema:       rows.Schema,
		Window:       in.Window,
		Registration: rows.Registration{Commit: "b9f8a67", Registered: true},
		Run:          rows.Run{Commit: p.Commit, Started: p.Started.UTC(), Finished: p.Started.Add(4100 * time.Millisecond).UTC()},
		Host: snapshots.Host{Kernel: "6.18.0", Arch: "amd64", CgroupVersion: "v1", CRIUVersion: "4.2.1", Cores: 8, MemBytes: 16 << 30,
			LoadBefore: [3]float64{p.Load, p.Load, p.Load}, LoadAfter: [3]float64{p.Load + 0.1, p.Load, p.Load}},
		Driver:    "refsup",
		Scope:     in.Scope,
		Input:     inJSON,
		Status:    v.Status,
		Reason:    v.Reason,
		Criteria:  crit,
		Durations: map[string]float64{"prepare": 812.5, "sweep1": 40.25},
	}
	r.SetLog("refsup.log", "restore started\nkilled at "+in.Window.Fault.String()+"\n")
	return r
}

// Write appends rows to path through rows.Writer and returns them as
// written (chained and hashed).
func Write(path string, rs ...rows.Row) ([]rows.Row, error) {
	w, err := rows.Open(path)
	if err != nil {
		return nil, err
	}
	defer w.Close()
	out := make([]rows.Row, 0, len(rs))
	for _, r := range rs {
		if err := w.Append(&r); err != nil {
			return out, err
		}
		out = append(out, r)
	}
	return out, nil
}

// Reforge rechains rows the way a tamperer who edited them would: every
// Prev and Hash recomputed, so the chain verifies and only a re-judgement
// can tell.
func Reforge(rs []rows.Row) []rows.Row {
	out := make([]rows.Row, len(rs))
	prev := ""
	for i, r := range rs {
		r.Prev = prev
		h, err := rows.ComputeHash(r)
		if err != nil {
			panic(err)
		}
		r.Hash = h
		out[i] = r
		prev = h
	}
	return out
}

// Lines encodes rows as a JSONL file's bytes, exactly as written.
func Lines(rs []rows.Row) []byte {
	var b bytes.Buffer
	for _, r := range rs {
		line, err := json.Marshal(r)
		if err != nil {
			panic(err)
		}
		b.Write(line)
		b.WriteByte('\n')
	}
	return b.Bytes()
}
