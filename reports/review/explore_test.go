package review

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"faultwin/criteria"
	"faultwin/drivers/catalog"
	"faultwin/internal/model"
	"faultwin/reports/decoded"
	"faultwin/reports/rows"
	"faultwin/snapshots"
	"faultwin/windows/definitions"
)

// kill builds the row of one kill of W3 at d ms that landed after point,
// with or without a live criu at the death.
func kill(t *testing.T, d int, point string, criu bool, status string) rows.Row {
	t.Helper()
	w := model.Window{ID: "W3_x", Family: "W3", Operation: "restore",
		Fault:        model.Fault{Point: "restore.during_criu", DelayMS: d, Kill: model.KillSupervisor},
		Precondition: model.Precondition{Cold: 1, Checkpoint: true}, Criteria: []string{model.F1, model.P1}}
	in := criteria.Input{Window: w, Scope: model.NewScope("/s", "r1"), Trace: []model.TracePoint{
		{Point: "restore.before_overlay", Time: time.Unix(1, 0)},
		{Point: point, Time: time.Unix(2, 0)},
		{Point: "restore.during_criu", Time: time.Unix(3, 0), Fired: true},
	}}
	if criu {
		in.AfterDeath.Processes = []snapshots.Process{{PID: 9, StartTime: 1, State: "S", Comm: "criu", RunEnv: "r1"}}
		in.AfterDeath.Mounts = []snapshots.Mount{{MountPoint: "/s/r1/sessions/s2/root"}, {MountPoint: "/s/r10/x"}}
	}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	return rows.Row{Window: w, Input: b, Status: status}
}

// An external kill is classed by the phase it landed in, not by the last
// trace point (appearances and phases are listed by kind, not by time).
func TestOutcomeOfLanding(t *testing.T) {
	w := model.Window{ID: "PR1_50", Family: "PR1", Driver: "podman", Operation: "restore",
		Fault: model.Fault{Point: "restore.op", DelayMS: 50}, Criteria: []string{model.F1}}
	in := criteria.Input{Window: w, Trace: []model.TracePoint{
		{Point: "phase prepare"}, {Point: "phase runc"}, {Point: "phase conmon"}, {Point: "restore.op", Fired: true}},
		Death: model.Death{Landing: &model.Landing{Phase: "runc", Seen: []model.PhaseSeen{{Name: "prepare"}, {Name: "runc"}, {Name: "conmon"}}}}}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	o, err := OutcomeOf(decoded.Of(rows.Row{Window: w, Input: b, Status: model.StatusPass})[0])
	if err != nil || o.Class() != "after phase runc" {
		t.Fatalf("class %q (%v), want after phase runc", o.Class(), err)
	}
	in.Death.Landing = nil
	in.Trace = []model.TracePoint{{Point: "appeared conmon"}, {Point: "restore.op", Note: model.NotFiredNote("stopped before the trigger fired")}}
	b, _ = json.Marshal(in)
	if o, _ := OutcomeOf(decoded.Of(rows.Row{Window: w, Input: b, Status: model.StatusInvalid})[0]); o.Class() != "after the operation's end (no kill)" {
		t.Fatalf("a trigger that never fired is classed %q", o.Class())
	}
}

func TestMapKills(t *testing.T) {
	rs := []rows.Row{
		kill(t, 10, "restore.criu_started", false, model.StatusPass),
		kill(t, 20, "restore.criu_started", false, model.StatusPass),
		kill(t, 40, "restore.criu_setup_namespaces", true, model.StatusFail),
		kill(t, 30, "restore.criu_setup_namespaces", true, model.StatusFail),
		kill(t, 30, "restore.criu_started", false, model.StatusPass),
		kill(t, 30, "restore.criu_setup_namespaces", true, model.StatusFail),
		kill(t, 90, "restore.after_criu", false, model.StatusPass),
		{Window: model.Window{ID: "W1", Family: "W1"}, Status: model.StatusPass}, // not timed: left out
	}
	maps, errs := MapKills(decoded.Of(rs...))
	if len(errs) != 0 || len(maps) != 1 {
		t.Fatalf("maps %d, errs %v", len(maps), errs)
	}
	m := maps[0]
	if len(m.Instants) != 5 {
		t.Fatalf("instants: %+v", m.Instants)
	}
	if got := m.Instants[2]; got.DelayMS != 30 || got.Class != "after restore.criu_setup_namespaces, criu alive" || got.Statuses[model.StatusFail] != 2 {
		t.Errorf("30 ms: %+v (the majority of three kills decides)", got)
	}
	want := []Boundary{
		{From: 20, To: 30, Before: "after restore.criu_started", After: "after restore.criu_setup_namespaces, criu alive", ResolvedWithinMS: 10},
		{From: 40, To: 90, Before: "after restore.criu_setup_namespaces, criu alive", After: "after restore.after_criu", ResolvedWithinMS: 50},
	}
	if len(m.Boundaries) != len(want) {
		t.Fatalf("boundaries %+v", m.Boundaries)
	}
	for i := range want {
		if m.Boundaries[i] != want[i] {
			t.Errorf("boundary %d: %+v, want %+v", i, m.Boundaries[i], want[i])
		}
	}
	if k := m.Instants[3].Kills[0]; k.Alive != 1 || k.Mounted != 1 {
		t.Errorf("40 ms: %d alive, %d mounted; want the criu of the run and its one mount (not r10's)", k.Alive, k.Mounted)
	}
	if c := MajorityClass([]Outcome{{Landed: "a"}, {Landed: "b"}}); !strings.HasPrefix(c, "mixed: ") {
		t.Errorf("a 1:1 split is %q, want mixed", c)
	}
}

// The candidate is a definition the loader accepts, with one instance per
// class.
func TestCandidateLoads(t *testing.T) {
	rs := []rows.Row{
		kill(t, 10, "restore.criu_started", false, model.StatusPass),
		kill(t, 20, "restore.criu_started", false, model.StatusPass),
		kill(t, 30, "restore.criu_setup_namespaces", true, model.StatusFail),
		kill(t, 90, "restore.after_criu", false, model.StatusPass),
		kill(t, 100, "restore.after_criu", false, model.StatusPass),
		kill(t, 110, "restore.after_criu", false, model.StatusPass),
	}
	maps, _ := MapKills(decoded.Of(rs...))
	base := rs[0].Window
	base.Criteria = []string{model.F1, model.O1, model.P1}
	text := Candidate(maps[0], base, "W3X")
	ws, err := definitions.ParseFile("windows/candidate.yaml", []byte(text), catalog.Specs())
	if err != nil {
		t.Fatalf("candidate does not load: %v\n%s", err, text)
	}
	var delays []int
	for _, w := range ws {
		delays = append(delays, w.Fault.DelayMS)
	}
	if len(delays) != 3 || delays[0] != 10 && delays[0] != 20 || delays[1] != 30 || delays[2] != 100 {
		t.Errorf("candidate delays %v, want one per class (10|20, 30, 100):\n%s", delays, text)
	}
}
