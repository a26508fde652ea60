package render_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"faultwin/criteria"
	"faultwin/internal/model"
	"faultwin/reports/decoded"
	"faultwin/reports/render"
	"faultwin/reports/rows"
	"faultwin/snapshots"
)

// explored makes rows of W3 killed at delays 10..60 ms: the first three
// land after criu_started, the rest after criu_setup_namespaces with CRIU
// alive, and the last one FAILs.
func explored(t *testing.T) []rows.Row {
	t.Helper()
	var rs []rows.Row
	for i, d := range []int{10, 20, 30, 40, 50, 60} {
		w := model.Window{ID: fmt.Sprintf("W3_%d", d), Family: "W3", Operation: "restore",
			Fault: model.Fault{Point: "restore.during_criu", DelayMS: d, Kill: model.KillSupervisor}}
		point, status := "restore.criu_started", model.StatusPass
		in := criteria.Input{Window: w}
		if i >= 3 {
			point = "restore.criu_setup_namespaces"
			in.AfterDeath.Processes = []snapshots.Process{{PID: 9, StartTime: 1, State: "S", Comm: "criu"}}
		}
		if i == 5 {
			status = model.StatusFail
		}
		in.Trace = []model.TracePoint{{Point: point}, {Point: "restore.during_criu", Fired: true}}
		b, err := json.Marshal(in)
		if err != nil {
			t.Fatal(err)
		}
		rs = append(rs, rows.Row{Window: w, Input: b, Status: status})
	}
	return rs
}

func TestKillMapInChromium(t *testing.T) {
	r := render.Build([]render.File{{Path: "explore.jsonl", Records: decoded.Of(explored(t)...)}}, false)
	path := filepath.Join(t.TempDir(), "map.html")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := render.HTML(f, r); err != nil {
		t.Fatal(err)
	}
	f.Close()
	dom := string(chromium(t, "file://"+path, "--dump-dom"))
	fig := dom[strings.Index(dom, `<figure class="killmap" data-family="W3"`):]
	fig = fig[:strings.Index(fig, "</figure>")]
	if n := strings.Count(fig, `<circle class="instant`); n != 6 {
		t.Errorf("%d instants drawn, want 6", n)
	}
	if n := strings.Count(fig, `class="boundary"`); n != 1 {
		t.Errorf("%d boundaries drawn, want 1", n)
	}
	for _, want := range []string{"after restore.criu_started", "after restore.criu_setup_namespaces, criu alive",
		"boundary 30..40 ms", `class="instant s-fail"`, "60 ms: after restore.criu_setup_namespaces, criu alive; 1 FAIL; at the death 0 live processes, 0 mounts of the run"} {
		if !strings.Contains(fig, want) {
			t.Errorf("kill map lacks %q", want)
		}
	}
}
