package expected

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"faultwin/criteria"
	"faultwin/internal/model"
	"faultwin/reports/decoded"
	"faultwin/reports/rows"
)

// row is a recorded row of window id whose criteria spell outcome
// ("FAIL P1 P3", "PASS"), taking secs of wall time.
func row(id, outcome string, secs float64) rows.Row {
	st, crit, _ := strings.Cut(outcome, " ")
	var rs []criteria.Result
	for _, c := range strings.Fields(crit) {
		rs = append(rs, criteria.Result{ID: c, Judged: true, Pass: false})
	}
	b, _ := json.Marshal(rs)
	t0 := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	return rows.Row{Window: model.Window{ID: id}, Status: st, Criteria: b, Hash: fmt.Sprintf("%s-%s-%v", id, outcome, secs),
		Run: rows.Run{Started: t0, Finished: t0.Add(time.Duration(secs * float64(time.Second)))}}
}

func repeat(id, outcome string, n int) []rows.Row {
	var out []rows.Row
	for i := 0; i < n; i++ {
		out = append(out, row(id, outcome, 2+float64(i)/10))
	}
	return out
}

func TestSmokeAccepts(t *testing.T) {
	e := Expectations{Windows: map[string]Seen{
		"PD2":    {Outcomes: map[string]int{"FAIL P3": 10}},
		"CS1_20": {Outcomes: map[string]int{"PASS": 10}},
		"PCL15":  {Outcomes: map[string]int{"PASS": 9, "INVALID F1": 1}},
		"PD1_20": {Outcomes: map[string]int{"PASS": 3}}, // too few rows to call stable
	}}
	for _, tc := range []struct {
		id, outcome string
		want        bool
	}{
		{"PD2", "FAIL P3", true},
		{"PD2", "FAIL P1 P3", true}, // its status: which criteria moved is drift's question
		{"PD2", "PASS", false},      // a status the soak never showed
		{"PD2", "INVALID F1", false},
		{"CS1_20", "PASS", true},
		{"CS1_20", "FAIL P1", false},
		{"PCL15", "INVALID F1", true}, // seen in its soak
		{"PCL15", "FAIL P3", false},   // never seen
		{"PD1_20", "PASS", true},
		{"PD1_20", "FAIL P3", false},
		{"PC9", "PASS", false}, // no expectation at all
	} {
		if got := e.SmokeAccepts(tc.id, model.ParseOutcome(tc.outcome)); got != tc.want {
			t.Errorf("SmokeAccepts(%s, %q) = %v, want %v", tc.id, tc.outcome, got, tc.want)
		}
	}
	// What the smoke says of an accepted outcome its soak never showed.
	if d := e.SmokeDifference("PD2", model.ParseOutcome("FAIL P1 P3")); !strings.Contains(d, `"FAIL P1 P3" was not among its soak's outcomes map[FAIL P3:10] (10 rows)`) {
		t.Errorf("SmokeDifference of a new outcome under a seen status: %q", d)
	}
	for _, o := range []string{"FAIL P3", "PASS"} {
		if d := e.SmokeDifference("PD2", model.ParseOutcome(o)); d != "" {
			t.Errorf("SmokeDifference(PD2, %q) = %q, want none (seen, or refused outright)", o, d)
		}
	}
}

// TestSmokeDrift: a status never seen is weighed as the drift check
// weighs it, and must come back: one run is run again, two in two fail.
func TestSmokeDrift(t *testing.T) {
	e := Expectations{Windows: map[string]Seen{
		"DT1":   {Outcomes: map[string]int{"FAIL P2 P7 U1": 10}},
		"PD2":   {Outcomes: map[string]int{"FAIL P3 P7": 20}},
		"PCL15": {Outcomes: map[string]int{"PASS": 9, "INVALID F1": 1}},
	}}
	for _, tc := range []struct {
		id       string
		outcomes []string
		drift    bool
		p        float64
	}{
		{"DT1", []string{"FAIL P2 P3 P7 U1"}, false, 1},  // its status: no question
		{"DT1", []string{"INVALID F1"}, false, 1.0 / 11}, // once in one: run again
		{"DT1", []string{"INVALID F1", "FAIL P2 P7 U1"}, false, 2.0 / 12},
		{"DT1", []string{"INVALID F1", "INVALID F1"}, true, 1.0 / 66},
		{"PD2", []string{"PASS"}, false, 1.0 / 21}, // never on one run alone
		{"PD2", []string{"PASS", "PASS"}, true, 1.0 / 231},
		{"PCL15", []string{"INVALID F1"}, false, 1}, // seen in its soak
		{"PC9", []string{"PASS"}, true, 0},          // no expectation
	} {
		p, drift := e.SmokeDrift(tc.id, parseAll(tc.outcomes))
		if drift != tc.drift || math.Abs(p-tc.p) > 1e-9 {
			t.Errorf("SmokeDrift(%s, %q) = %.4f, %v; want %.4f, %v", tc.id, tc.outcomes, p, drift, tc.p, tc.drift)
		}
	}
}

// TestSmokeNext: the smoke's loop, decided on outcomes: an accepted last
// run passes whatever came before, an unseen status runs again until it
// comes back at the drift check's level or SmokeRuns runs are spent.
func TestSmokeNext(t *testing.T) {
	e := Expectations{Windows: map[string]Seen{
		"DT1": {Outcomes: map[string]int{"FAIL P2 P7 U1": 10}},
		"S2":  {Outcomes: map[string]int{"FAIL P7": 2}}, // too few rows for three runs to decide (p = 1/10)
	}}
	for _, tc := range []struct {
		id       string
		outcomes []string
		want     SmokeStep
	}{
		{"DT1", []string{"FAIL P2 P3 P7 U1"}, SmokePass},
		{"DT1", []string{"INVALID F1"}, SmokeAgain},
		{"DT1", []string{"INVALID F1", "FAIL P2 P7 U1"}, SmokePass},
		{"DT1", []string{"INVALID F1", "INVALID F1"}, SmokeFail}, // p = 1/66
		{"S2", []string{"PASS", "PASS"}, SmokeAgain},             // p = 1/6
		{"S2", []string{"PASS", "PASS", "PASS"}, SmokeFail},      // SmokeRuns spent at p = 1/10
		{"S2", []string{"PASS", "PASS", "FAIL P7"}, SmokePass},
		{"NONE", []string{"PASS"}, SmokeFail}, // no expectation
	} {
		if got, p := e.SmokeNext(tc.id, parseAll(tc.outcomes)); got != tc.want {
			t.Errorf("SmokeNext(%s, %q) = %v (p = %.3f), want %v", tc.id, tc.outcomes, got, p, tc.want)
		}
	}
}

func TestFisherGreater(t *testing.T) {
	for _, tc := range []struct {
		a, n, b, m int
		want       float64
	}{
		{1, 1, 0, 10, 1.0 / 11},     // one new outcome in one run against ten soaked runs
		{2, 2, 0, 10, 1.0 / 66},     // twice in two runs
		{1, 1, 0, 20, 1.0 / 21},     // once against twenty
		{3, 3, 5, 10, 252.0 / 1287}, // a coin-flip outcome three times in three
		{0, 3, 5, 10, 1},            // never at least as high as nothing
	} {
		if got := FisherGreater(tc.a, tc.n, tc.b, tc.m); math.Abs(got-tc.want) > 1e-6 {
			t.Errorf("FisherGreater(%d/%d vs %d/%d) = %.7f, want %.7f", tc.a, tc.n, tc.b, tc.m, got, tc.want)
		}
	}
}

// TestDrift: a planted drift fails, a mix of outcomes the soak saw holds,
// and one run of a never-seen outcome is not yet a drift.
func TestDrift(t *testing.T) {
	e := Expectations{Windows: map[string]Seen{
		"CS1_20": {Outcomes: map[string]int{"PASS": 10}},
		"PC1_50": {Outcomes: map[string]int{"PASS": 8, "FAIL P3": 2}},
		"PRL12":  {Outcomes: map[string]int{"FAIL P2 P3": 10}},
	}}
	// Seen before: PC1_50 at 2 of 3 FAIL P3 (the soak had it 2 of 10),
	// CS1_20 passing, PRL12 as always.
	var held []rows.Row
	held = append(held, repeat("CS1_20", "PASS", 3)...)
	held = append(held, row("PC1_50", "PASS", 3), row("PC1_50", "FAIL P3", 3), row("PC1_50", "FAIL P3", 3.1))
	held = append(held, repeat("PRL12", "FAIL P2 P3", 3)...)
	shifts, unknown := Drift(e, decoded.Of(held...))
	for _, s := range shifts {
		if s.Drift {
			t.Errorf("a seen-before mix called drift: %s", s)
		}
	}
	if len(unknown) != 0 {
		t.Errorf("unknown %v", unknown)
	}
	// Planted: CS1_20 fails P1 in 3 of 3 (never in its soak), PRL12 now
	// passes 3 of 3.
	var planted []rows.Row
	planted = append(planted, repeat("CS1_20", "FAIL P1", 3)...)
	planted = append(planted, repeat("PRL12", "PASS", 3)...)
	planted = append(planted, row("PX9", "PASS", 1))
	shifts, unknown = Drift(e, decoded.Of(planted...))
	var drifted []string
	for _, s := range shifts {
		if s.Drift {
			drifted = append(drifted, s.Window+" "+s.Outcome)
			if len(s.Rows) != 3 {
				t.Errorf("%s: rows to look at %v, want the 3 that showed it", s, s.Rows)
			}
		}
	}
	if strings.Join(drifted, ", ") != "CS1_20 FAIL P1, PRL12 PASS" {
		t.Errorf("drifted %q, want CS1_20 FAIL P1 and PRL12 PASS", drifted)
	}
	if strings.Join(unknown, ",") != "PX9" {
		t.Errorf("unknown %v, want PX9", unknown)
	}
	// One run of a never-seen outcome: p = 1/11, not yet a drift.
	shifts, _ = Drift(e, decoded.Of(row("CS1_20", "FAIL P1", 2)))
	if len(shifts) != 1 || shifts[0].Drift || math.Abs(shifts[0].P-1.0/11) > 1e-9 {
		t.Errorf("one run: %v", shifts)
	}
}

func TestLearnAndSmoke(t *testing.T) {
	old := append(repeat("PD2", "FAIL P3", 10), repeat("PR4", "PASS", 10)...)
	old = append(old, repeat("PS2_30", "PASS", 6)...)
	old = append(old, repeat("PS2_30", "FAIL P3", 4)...)
	newer := append(repeat("PD2", "FAIL P3", 10), repeat("PD1_20", "PASS", 6)...)
	newer = append(newer, repeat("PD1_20", "FAIL P3", 4)...)
	newer = append(newer, repeat("PC1_50", "INVALID F1", 10)...)
	newer = append(newer, repeat("PS2_30", "FAIL P3", 10)...)
	e, missing := Learn("podman", []string{"PD1_20", "PD2", "PR4", "PC1_50", "PS2_30", "PS9"},
		map[string][]decoded.Record{"old.jsonl": decoded.Of(old...), "new.jsonl": decoded.Of(newer...)}, []string{"old.jsonl", "new.jsonl"})
	if got := e.Windows["PD2"]; strings.Join(got.From, ",") != "new.jsonl,old.jsonl" || got.Outcomes["FAIL P3"] != 20 || !got.Stable() {
		t.Errorf("PD2 learned %+v, want 20 FAIL P3 from both files", got)
	}
	if got := e.Windows["PR4"]; strings.Join(got.From, ",") != "old.jsonl" || !got.Stable() {
		t.Errorf("PR4 learned %+v, want the old file's rows (the newer has none)", got)
	}
	// Ten FAIL P3 in one soak, six PASS in another: not stable, though the
	// newer soak alone would say so.
	if got := e.Windows["PS2_30"]; got.Stable() || got.Outcomes["PASS"] != 6 || got.Outcomes["FAIL P3"] != 14 {
		t.Errorf("PS2_30 learned %+v, want both soaks pooled and not stable", got)
	}
	if e.Windows["PD1_20"].MedianS != 2.2 { // of 2.0..2.5 and 2.0..2.3
		t.Errorf("median %v, want 2.2", e.Windows["PD1_20"].MedianS)
	}
	if strings.Join(missing, ",") != "PS9" {
		t.Errorf("missing %v", missing)
	}
	ws := []model.Window{{ID: "PD1_20", Operation: "rm"}, {ID: "PD2", Operation: "rm"}, {ID: "PR4", Operation: "restore"}, {ID: "PC1_50", Operation: "checkpoint"}}
	// rm: PD2 (10 of 10) over PD1_20 (6 of 10); checkpoint: nothing
	// measured, so no smoke window, which Check then names.
	if got := strings.Join(ChooseSmoke(e, ws), ","); got != "PD2,PR4" {
		t.Errorf("smoke %s, want PD2,PR4", got)
	}
	// Equal shares: the window whose kill is tied to a phase is chosen over
	// the one killed some milliseconds in, though that one is quicker.
	e.Windows["PR1_250"] = Seen{Outcomes: map[string]int{"FAIL P2 P3": 10}, MedianS: 1}
	e.Windows["PRL12"] = Seen{Outcomes: map[string]int{"FAIL P2 P3": 10}, MedianS: 3}
	timed := model.Window{ID: "PR1_250", Operation: "stop", Fault: model.Fault{DelayMS: 250}}
	landing := model.Window{ID: "PRL12", Operation: "stop", Fault: model.Fault{DelayMS: 1, LandsIn: "runc"}}
	if got := strings.Join(ChooseSmoke(e, append(ws, timed, landing)), ","); got != "PD2,PR4,PRL12" {
		t.Errorf("smoke %s, want PD2,PR4,PRL12", got)
	}
	// No stable window for stop: the one whose soaks saw more of its
	// spread (20 rows over two soaks) over a likelier-looking one of 10.
	e.Windows["PS1_30"] = Seen{Outcomes: map[string]int{"PASS": 9, "FAIL P3": 1}}
	stops := []model.Window{{ID: "PS1_30", Operation: "stop"}, {ID: "PS2_30", Operation: "stop"}}
	if got := strings.Join(ChooseSmoke(e, stops), ","); got != "PS2_30" {
		t.Errorf("smoke %s, want PS2_30", got)
	}
	e.Smoke = ChooseSmoke(e, ws)
	if err := e.Check(ws); err == nil || !strings.Contains(err.Error(), "operation checkpoint has no smoke window") {
		t.Errorf("check: %v", err)
	}
}

func TestExpectationsFile(t *testing.T) {
	f := filepath.Join(t.TempDir(), "outcomes.yaml")
	e := Expectations{Supervisor: "podman", Smoke: []string{"W1"}, Windows: map[string]Seen{
		"W1":    {From: []string{"results/x.jsonl.gz"}, Outcomes: map[string]int{"PASS": 10}, MedianS: 2.1},
		"W3_30": {From: []string{"results/x.jsonl.gz", "results/y.jsonl.gz"}, Outcomes: map[string]int{"PASS": 7, "FAIL P1": 3}, MedianS: 3},
	}}
	if err := e.Write(f); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(f)
	if !strings.HasPrefix(string(b), "# Outcomes of each podman window") || !strings.Contains(string(b), "faultwin expect") {
		t.Errorf("written:\n%s", b)
	}
	back, err := ReadExpectations(f)
	if err != nil || back.Windows["W3_30"].Outcomes["FAIL P1"] != 3 || back.Smoke[0] != "W1" {
		t.Fatalf("read back %+v, %v", back, err)
	}
	if err := back.Check([]model.Window{{ID: "W1", Operation: "restore"}, {ID: "W2", Operation: "destroy"}}); err == nil ||
		!strings.Contains(err.Error(), "W2 has no recorded outcomes") || !strings.Contains(err.Error(), "W3_30 is not a registered window") ||
		!strings.Contains(err.Error(), "operation destroy has no smoke window") {
		t.Errorf("check: %v", err)
	}
	for bad, want := range map[string]string{
		"supervisor: x\nwindows: {W1: {from: [a], outcomes: {MAYBE: 1}}}\n":             `"MAYBE" does not start with PASS`,
		"supervisor: x\nwindows: {W1: {from: [a], outcomes: {PASS: 0}}}\n":              "count 0",
		"supervisor: x\nwindows: {W1: {from: [a], outcomes: {}}}\n":                     "windows.W1.outcomes: empty",
		"supervisor: x\nwindows: {W1: {from: [a], outcomes: {PASS: 1}}}\nsmoke: [W9]\n": "smoke: W9 has no outcomes",
		"W1: [PASS]\n": "field W1 not found",
	} {
		if err := os.WriteFile(f, []byte(bad), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := ReadExpectations(f); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", bad, err, want)
		}
	}
	if _, err := ReadExpectations(filepath.Join(t.TempDir(), "none.yaml")); err == nil || !strings.Contains(err.Error(), "faultwin expect") {
		t.Errorf("a missing file: %v", err)
	}
}

// TestControlsAreNotOutcomes: a control's rows are the baseline of an A/B
// soak, never its window's outcome: Learn and Drift pass over them.
func TestControlsAreNotOutcomes(t *testing.T) {
	control := func(rs []rows.Row) []rows.Row {
		for i := range rs {
			rs[i].Window.Fault.Disarmed = true
		}
		return rs
	}
	rs := append(repeat("CS1_20", "PASS", 10), control(repeat("CS1_20", "FAIL P7", 10))...)
	e, missing := Learn("containerd", []string{"CS1_20"}, map[string][]decoded.Record{"ab.jsonl": decoded.Of(rs...)}, []string{"ab.jsonl"})
	if len(missing) > 0 || e.Windows["CS1_20"].Outcomes["PASS"] != 10 || e.Windows["CS1_20"].N() != 10 {
		t.Fatalf("learned %+v (missing %v): the controls were counted", e.Windows["CS1_20"], missing)
	}
	if shifts, unknown := Drift(e, decoded.Of(control(repeat("CS1_20", "FAIL P7", 10))...)); len(shifts) > 0 || len(unknown) > 0 {
		t.Errorf("a control's failures read as the window's drift: %v %v", shifts, unknown)
	}
}

// A new supervisor's first outcomes go where no expected/ is yet.
func TestWriteMakesExpectedDir(t *testing.T) {
	file := filepath.Join(t.TempDir(), "windows", "mysup", "expected", "outcomes.yaml")
	e := Expectations{Supervisor: "mysup"}
	if err := e.Write(file); err != nil {
		t.Fatalf("write into a directory not made yet: %v", err)
	}
	if _, err := ReadExpectations(file); err != nil {
		t.Errorf("read back: %v", err)
	}
}

func parseAll(ss []string) []model.Outcome {
	var out []model.Outcome
	for _, s := range ss {
		out = append(out, model.ParseOutcome(s))
	}
	return out
}
