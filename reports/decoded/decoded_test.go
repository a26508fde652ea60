package decoded

import (
	"encoding/json"
	"strings"
	"testing"

	"faultwin/criteria"
	"faultwin/internal/model"
	"faultwin/reports/rows"
	"faultwin/snapshots"
)

// An old row's U1 names its workaround in its summary only: its record
// has it in the field, as a new row records it.
func TestOldSpellingsReadIntoFields(t *testing.T) {
	old := `[{"id":"U1","pass":false,"judged":true,"summary":"stuck: fw1 does not run on: unreadable; only the expert step delete-runc-state brought it back"},` +
		`{"id":"P1","pass":false,"judged":true,"summary":"stuck: x; only the expert step no brought it back"}]`
	rec, _ := Decode(rows.Row{Criteria: json.RawMessage(old), Input: json.RawMessage(`{}`)})
	if rec.ResultsErr != nil || len(rec.Results) != 2 {
		t.Fatalf("results %+v, %v", rec.Results, rec.ResultsErr)
	}
	if got := rec.Results[0].Workaround; got != "delete-runc-state" {
		t.Errorf("U1 workaround %q, want delete-runc-state", got)
	}
	if got := rec.Results[1].Workaround; got != "" {
		t.Errorf("P1 given a workaround %q: only U1's summary names one", got)
	}
	recorded := `[{"id":"U1","pass":false,"judged":true,"summary":"stuck: fw1; only the expert step a brought it back","workaround":"b"}]`
	if rec, _ := Decode(rows.Row{Criteria: json.RawMessage(recorded)}); rec.Results[0].Workaround != "b" {
		t.Errorf("a recorded workaround was read again from the summary: %q", rec.Results[0].Workaround)
	}
}

// A record is decoded once and holds none of the row's JSON; criteria the
// strict decode refuses are still read, as encoding/json reads them, with
// the strict decode's error kept for the replay.
func TestDecodeOnce(t *testing.T) {
	w := model.Window{ID: "PR5", Fault: model.Fault{Point: "restore.op"}}
	in := criteria.Input{Window: w, Trace: []model.TracePoint{{Point: "phase a"}, {Point: "restore.op", Fired: true, Note: "x"}}}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	r := rows.Row{Window: w, Input: b, Criteria: json.RawMessage(`[{"id":"P1","pass":true,"judged":true,"summary":"s","extra":1}]`),
		Logs: map[string]string{"a.log": "text"}, Durations: map[string]float64{"prepare": 1}, Reclaim: &model.Reclaim{}}
	rec, full := Decode(r)
	if rec.Input != nil || rec.Criteria != nil || rec.Logs != nil {
		t.Errorf("the record keeps the row's JSON or logs: %d, %d, %d bytes", len(rec.Input), len(rec.Criteria), len(rec.Logs))
	}
	if rec.Durations != nil || rec.Reclaim != nil {
		t.Errorf("the record keeps what no reader of records reads: durations %v, reclaim %v", rec.Durations, rec.Reclaim)
	}
	if full == nil || full.Window.ID != "PR5" || rec.InputErr != nil {
		t.Fatalf("whole input %v, err %v", full, rec.InputErr)
	}
	if rec.ResultsErr == nil || !strings.Contains(rec.ResultsErr.Error(), "extra") || len(rec.Results) != 1 || !rec.Results[0].Holds() {
		t.Errorf("criteria with a field the strict decode refuses: %+v, %v", rec.Results, rec.ResultsErr)
	}
	// An untimed window keeps the trace points where the kill landed only.
	if rec.Parts == nil || len(rec.Parts.Trace) != 1 || !rec.Parts.Trace[0].Fired || rec.Parts.AfterDeath != nil {
		t.Errorf("parts %+v", rec.Parts)
	}
	r.Input = json.RawMessage(`{"window":{"id":"PR5"},"unknown":true}`)
	if rec, full := Decode(r); full != nil || rec.InputErr == nil || rec.Parts == nil {
		t.Errorf("an input the strict decode refuses: whole %v, err %v, parts %v (want them read leniently)", full, rec.InputErr, rec.Parts)
	}
}

// A timed window's record keeps what its kill map reads of the snapshot
// after the death, counted as the kill map counts it, and not the
// snapshot: a live criu (not a decoy's, not a zombie), the run's live
// processes and its mounts under the state dir.
func TestAfterDeathCounted(t *testing.T) {
	w := model.Window{ID: "W3_30", Family: "W3", Fault: model.Fault{Point: "restore.during_criu", DelayMS: 30}}
	in := criteria.Input{Window: w, Scope: model.NewScope("/s", "r1")}
	in.AfterDeath.Processes = []snapshots.Process{
		{PID: 9, StartTime: 1, State: "S", Comm: "criu", RunEnv: "r1"},
		{PID: 10, StartTime: 1, State: "Z", Comm: "sh", RunEnv: "r1"},
		{PID: 11, StartTime: 1, State: "S", Comm: "criu", Decoy: true},
	}
	in.AfterDeath.Mounts = []snapshots.Mount{{MountPoint: "/s/r1/sessions/s2/root"}, {MountPoint: "/s/r10/x"}, {MountPoint: "/s/r1/d", Decoy: true}}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	rec, _ := Decode(rows.Row{Window: w, Input: b})
	if rec.Parts == nil || rec.Parts.AfterDeath == nil {
		t.Fatalf("a timed window's record keeps no counts after the death: %+v", rec.Parts)
	}
	if got, want := *rec.Parts.AfterDeath, (AfterDeath{CRIUAlive: true, Alive: 1, Mounted: 1}); got != want {
		t.Errorf("after the death %+v, want %+v", got, want)
	}
	in.AfterDeath.Processes = in.AfterDeath.Processes[1:]
	b, _ = json.Marshal(in)
	if rec, _ := Decode(rows.Row{Window: w, Input: b}); rec.Parts.AfterDeath.CRIUAlive {
		t.Errorf("a decoy's criu or a zombie counted as a live criu: %+v", *rec.Parts.AfterDeath)
	}
}

// A timed window's record keeps the trace points passed before the kill
// landed and every point that fired or never fired: what its kill map
// and the landings read, not the points after.
func TestTimedTraceKept(t *testing.T) {
	w := model.Window{ID: "W3_30", Family: "W3", Fault: model.Fault{Point: "restore.during_criu", DelayMS: 30}}
	in := criteria.Input{Window: w, Trace: []model.TracePoint{{Point: "a"}, {Point: "b"}, {Point: "c", Fired: true},
		{Point: "d"}, {Point: "e", Note: model.NotFiredNote("stopped")}, {Point: "f"}}}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	rec, _ := Decode(rows.Row{Window: w, Input: b})
	var got []string
	for _, tp := range rec.Parts.Trace {
		got = append(got, tp.Point)
	}
	if strings.Join(got, " ") != "a b c e" {
		t.Errorf("kept trace points %v, want a b c e", got)
	}
}
