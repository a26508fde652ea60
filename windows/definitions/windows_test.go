package definitions

import (
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"faultwin/internal/model"
)

// TestRegisteredWindows pins the registered set: the instances of W1..W16,
// the orphan scenario and the recovery windows WH1..WH5 and WS1..WS4, in
// natural order, with their points and kills.
func TestRegisteredWindows(t *testing.T) {
	ws, err := Load("../refsup", testSpecs)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, w := range ws {
		got = append(got, w.ID+" "+w.Operation+" "+w.Fault.String())
	}
	want := []string{
		"W1 restore restore.before_overlay",
		"W2 restore restore.after_overlay",
		"W3_30 restore restore.during_criu+30",
		"W3_80 restore restore.during_criu+80",
		"W3_150 restore restore.during_criu+150",
		"W3_250 restore restore.during_criu+250",
		"W4_30 restore restore.during_criu+30!criu",
		"W4_80 restore restore.during_criu+80!criu",
		"W4_150 restore restore.during_criu+150!criu",
		"W4_250 restore restore.during_criu+250!criu",
		"W5 restore restore.after_criu",
		"W6 restore restore.after_register",
		"W7 restore restore.mid_reseed",
		"W8 checkpoint checkpoint.after_dump",
		"W9 checkpoint checkpoint.after_root_unmount",
		"W10 checkpoint checkpoint.after_layer_bind",
		"W11 destroy destroy.after_kill",
		"W12 destroy destroy.after_root_unmount",
		"W13 restore restore.failed_teardown",
		"W14 sweep sweep.after_kill",
		"W15 sweep sweep.after_unmount",
		"W16 sweep sweep.after_links",
		"ORPHAN idle idle.kill",
		"W1X_5 restore restore.ext_start+5",
		"W3C_10 restore restore.ext_criu_only+10",
		"W3C_20 restore restore.ext_criu_only+20",
		"W3X_30 restore restore.ext_criu+30",
		"W3X_80 restore restore.ext_criu+80",
		"W3X_150 restore restore.ext_criu+150",
		"W3X_250 restore restore.ext_criu+250",
		"W4R restore restore.criu_setup_namespaces!criu",
		"W4X_10 restore restore.ext_criu_first+10",
		"W4X_25 restore restore.ext_criu_first+25",
		"W8L checkpoint checkpoint.after_dump",
		"WH1 hibernate hibernate.before_dump",
		"WH2_30 hibernate hibernate.during_criu+30!hold",
		"WH3_30 hibernate hibernate.during_criu+30!criu",
		"WH4 hibernate hibernate.after_images",
		"WH4D hibernate hibernate.after_images",
		"WH5 hibernate hibernate.after_images",
		"WS1 save save.before_dump",
		"WS2_30 save save.during_criu+30!hold",
		"WS3_30 save save.during_criu+30!criu",
		"WS4 save save.after_images",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("instances:\n got %q\nwant %q", got, want)
	}
	// every window lists every criterion it can have: recovery windows the
	// settle's R1..R4 too
	shutdown := slices.DeleteFunc(slices.Clone(model.CriterionIDs), func(id string) bool { return strings.HasPrefix(id, "R") })
	for _, w := range ws {
		want := shutdown
		if model.IsRecovery(w.Operation) {
			want = model.CriterionIDs
		}
		if !slices.Equal(w.Criteria, want) {
			t.Errorf("%s: criteria %v, want all of %v", w.ID, w.Criteria, want)
		}
		if len(strings.Fields(w.Description)) < 20 {
			t.Errorf("%s: description too short to say what the window proves", w.ID)
		}
		if !strings.HasPrefix(w.File, "windows/") || !strings.HasSuffix(w.File, ".yaml") || w.Line < 1 {
			t.Errorf("%s: defined at %s:%d", w.ID, w.File, w.Line)
		}
		if w.Hash != model.HashSource(w.Source) || len(w.Hash) != 64 {
			t.Errorf("%s: hash %s does not match its source", w.ID, w.Hash)
		}
		pre := w.Precondition
		switch w.Operation {
		case "restore":
			if pre.Cold != 1 || !pre.Checkpoint || pre.Restored != 0 {
				t.Errorf("%s: precondition %+v", w.ID, pre)
			}
			if pre.FailRestore != (w.Family == "W13") {
				t.Errorf("%s: fail_restore %v", w.ID, pre.FailRestore)
			}
		case "checkpoint", "destroy":
			if pre.Cold != 1 {
				t.Errorf("%s: precondition %+v", w.ID, pre)
			}
		case "sweep":
			if pre.Cold != 1 || pre.Restored != 1 || !pre.Checkpoint {
				t.Errorf("%s: precondition %+v", w.ID, pre)
			}
		case "idle":
			if pre.Cold != 1 || pre.Restored != 2 || !pre.Checkpoint {
				t.Errorf("%s: precondition %+v", w.ID, pre)
			}
		case model.OpHibernate, model.OpSave:
			if pre.Cold != 2 || pre.Restored != 0 || pre.Checkpoint || !slices.Contains(w.Labels, "recovery") {
				t.Errorf("%s: precondition %+v, labels %v", w.ID, pre, w.Labels)
			}
			if (w.SecondDeath != "") != (w.Family == "WH5") {
				t.Errorf("%s: second death %q", w.ID, w.SecondDeath)
			}
		}
		wantKill := "supervisor"
		switch w.Family {
		case "W4", "W4R", "WH3", "WS3":
			wantKill = "criu_first"
		case "WH2", "WS2":
			wantKill = "criu_held"
		}
		if w.Fault.Kill != wantKill {
			t.Errorf("%s: kill %s", w.ID, w.Fault.Kill)
		}
	}
}

// TestCanonicalSourceReloads checks that Source is itself a definition that
// loads back to the same instances with the same hash.
func TestCanonicalSourceReloads(t *testing.T) {
	ws, err := Load("../refsup", testSpecs)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range ws {
		again, err := ParseFile("canon.yaml", []byte(w.Source), testSpecs)
		if err != nil {
			t.Fatalf("%s: canonical source does not load: %v\n%s", w.ID, err, w.Source)
		}
		i := slices.IndexFunc(again, func(a model.Window) bool { return a.ID == w.ID })
		if i < 0 {
			t.Fatalf("%s: missing after reload", w.ID)
		}
		a := again[i]
		a.File, a.Line = w.File, w.Line
		if a.Hash != w.Hash || a.Source != w.Source || a.Description != w.Description || a.Fault != w.Fault {
			t.Errorf("%s: reload differs:\n%+v\n%+v", w.ID, a, w)
		}
	}
}

const hashFixture = `id: W3
operation: restore
point: restore.during_criu
delays_ms: [30, 80]
precondition: {cold: 1, checkpoint: true}
criteria: [F1, P1]
description: a timed restore window
`

// The canonical form of hashFixture, and its hash, pinned: if either moves,
// every registered definition would read as unregistered.
const (
	hashFixtureSource = `id: W3
operation: restore
point: restore.during_criu
delays_ms: [30, 80]
kill: supervisor
precondition: {cold: 1, restored: 0, checkpoint: true, display: false, fail_restore: false}
criteria: [F1, P1]
description: "a timed restore window"
`
)

func hashOf(t *testing.T, text string) string {
	t.Helper()
	ws, err := ParseFile("x.yaml", []byte(text), testSpecs)
	if err != nil {
		t.Fatal(err)
	}
	return ws[0].Hash
}

func TestHashStability(t *testing.T) {
	ws, err := ParseFile("x.yaml", []byte(hashFixture), testSpecs)
	if err != nil {
		t.Fatal(err)
	}
	if ws[0].Source != hashFixtureSource {
		t.Fatalf("canonical source:\n%s\nwant\n%s", ws[0].Source, hashFixtureSource)
	}
	base := ws[0].Hash
	if base != model.HashSource(hashFixtureSource) || ws[1].Hash != base {
		t.Fatalf("instances of one family must share the family hash")
	}
	same := map[string]string{
		"comments and spacing": "# a comment\n" + strings.ReplaceAll(hashFixture, ": ", ":   ") + "\n",
		"key order":            "description: a timed restore window\n" + strings.Replace(hashFixture, "description: a timed restore window\n", "", 1),
		"defaults written":     strings.Replace(hashFixture, "{cold: 1, checkpoint: true}", "{cold: 1, restored: 0, checkpoint: true, display: false}", 1) + "kill: supervisor\n",
		"list order":           strings.Replace(strings.Replace(hashFixture, "[30, 80]", "[80, 30]", 1), "[F1, P1]", "[P1, F1]", 1),
		"block style":          strings.Replace(hashFixture, "delays_ms: [30, 80]", "delays_ms:\n  - 30\n  - 80", 1),
		"folded description":   strings.Replace(hashFixture, "description: a timed restore window", "description: >\n  a timed\n  restore   window\n", 1),
	}
	for name, text := range same {
		if h := hashOf(t, text); h != base {
			t.Errorf("%s changed the hash", name)
		}
	}
	differ := map[string]string{
		"delay":       strings.Replace(hashFixture, "[30, 80]", "[30, 81]", 1),
		"kill":        hashFixture + "kill: criu_first\n",
		"criteria":    strings.Replace(hashFixture, "[F1, P1]", "[F1, P1, P2]", 1),
		"display":     strings.Replace(hashFixture, "checkpoint: true}", "checkpoint: true, display: true}", 1),
		"description": strings.Replace(hashFixture, "a timed restore window", "a timed restore", 1),
		"label":       hashFixture + "labels: [timed]\n",
	}
	for name, text := range differ {
		if h := hashOf(t, text); h == base {
			t.Errorf("changing the %s kept the hash", name)
		}
	}
}

func TestParseFileKeepsValidFamilies(t *testing.T) {
	text := hashFixture + "---\nid: W9\noperation: nope\n"
	ws, err := ParseFile("x.yaml", []byte(text), testSpecs)
	if err == nil || len(ws) != 2 || ws[0].ID != "W3_30" {
		t.Fatalf("got %d windows, err %v", len(ws), err)
	}
}

func TestLoadFileNames(t *testing.T) {
	ws, err := LoadFS(fstest.MapFS{"defs/x.yaml": {Data: []byte("\n\n" + hashFixture)}}, "defs", testSpecs)
	if err != nil {
		t.Fatal(err)
	}
	if ws[0].File != "defs/x.yaml" || ws[0].Line != 3 {
		t.Fatalf("defined at %s:%d", ws[0].File, ws[0].Line)
	}
}

func TestCompareIDs(t *testing.T) {
	ids := []string{"ORPHAN", "W10", "W3_250", "W2", "W3_30", "W16", "W1", "ALPHA", "W3_150", "W4_30"}
	slices.SortFunc(ids, model.CompareIDs)
	want := []string{"W1", "W2", "W3_30", "W3_150", "W3_250", "W4_30", "W10", "W16", "ALPHA", "ORPHAN"}
	if !slices.Equal(ids, want) {
		t.Fatalf("got %v", ids)
	}
}
