package render_test

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"faultwin/internal/model"
	"faultwin/reports/decoded"
	"faultwin/reports/render"
	"faultwin/reports/replaytest"
	"faultwin/reports/rows"
)

// section is the Markdown from the level-2 heading line up to the next
// level-2 heading, or the end; "" when md has no such heading.
func section(md, heading string) string {
	i := strings.Index(md, "\n"+heading+"\n")
	if i < 0 {
		return ""
	}
	rest := md[i+1+len(heading):]
	if j := strings.Index(rest, "\n## "); j >= 0 {
		rest = rest[:j]
	}
	return heading + rest
}

func htmlOf(t *testing.T, r *render.Report) string {
	t.Helper()
	var b bytes.Buffer
	if err := render.HTML(&b, r); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// mustLack reports every bad that text holds.
func mustLack(t *testing.T, what, text string, bads ...string) {
	t.Helper()
	for _, bad := range bads {
		if strings.Contains(text, bad) {
			t.Errorf("%s holds %q:\n%s", what, bad, text)
		}
	}
}

// A mutant's file from before run.bugs is named after its bug switch: its
// rows are shown as that bug's, apart from the supervisors, with their
// FAIL marked expected and kept out of the supervisors' counts.
func TestMutantNamedByItsFile(t *testing.T) {
	plain := written(t, "results/windows.jsonl", rowsOf("583a9fa", t0, 0.4, replaytest.As(replaytest.Input(replaytest.W4Pass), "W3_30")))
	survivor := rowsOf("583a9fa", t0.Add(time.Hour), 0.5, replaytest.Input(replaytest.W4Survivor))
	if len(survivor[0].Run.Bugs) != 0 {
		t.Fatal("the fixture records run.bugs; this test is of rows without it")
	}
	mutant := written(t, "results/mutants/leak-cgroup.jsonl", survivor)
	r := render.Build([]render.File{plain, mutant}, false)
	if len(r.Problems) != 0 {
		t.Fatalf("genuine rows do not verify: %v", r.Problems)
	}
	md := string(markdown(t, r))
	mustContain(t, md,
		"| refsup | 1 | 1 | 1 | 1 | 0 | 0 | 0 |",
		"| mutants (bugs planted on purpose) | 1 | 1 | 1 | 0 | 1 expected (bugs planted) | 0 | 0 |",
		"### W4_30, run 2: FAIL (expected: bug switch leak-cgroup)",
		"Mutant: bug switch leak-cgroup, named by its file (the row predates run.bugs).",
	)
	mutants := section(md, "## Mutants (bugs planted on purpose)")
	mustContain(t, mutants,
		render.MutantsRule,
		"| Window | Run 2 |",
		"| W4_30 | bug switch leak-cgroup: expected FAIL: P1 (pid 4242",
		"### Summary of `results/mutants/leak-cgroup.jsonl`: bug switch leak-cgroup, named by its file (the row predates run.bugs)",
	)
	refsup := section(md, "## Supervisor: refsup")
	mustContain(t, refsup, "| Window | Run 1 |", "| W3_30 | PASS |", "### Summary of `results/windows.jsonl`")
	mustLack(t, "the refsup section", refsup, "leak-cgroup", "W4_30", "Run 2")

	html := htmlOf(t, r)
	mustContain(t, html,
		`<a class="sq s-fail expected" href="#d-2-W4_30" data-window="W4_30" data-run="2" title=`,
		`(expected: bug switch leak-cgroup)</summary>`,
		`<h2 id="h-group-2">Mutants (bugs planted on purpose) <span class="tot">`,
		`<td>1 expected (bugs planted)</td>`,
	)

	// The same rows anywhere but directly in a mutants directory are a
	// supervisor's, FAIL and all.
	elsewhere := render.Build([]render.File{written(t, "results/leak-cgroup.jsonl", survivor)}, false)
	md = string(markdown(t, elsewhere))
	mustContain(t, md, "| refsup | 1 | 1 | 1 | 0 | 1 | 0 | 0 |", "| W4_30 | FAIL: P1 (pid 4242")
	mustLack(t, "a report of results/leak-cgroup.jsonl", md, "bug switch", "Mutants", "expected")
}

// MutantOf: run.bugs wins over the file's name; the name counts only in
// a directory named mutants, and only a rows file's name.
func TestMutantOf(t *testing.T) {
	bare := rows.Row{Window: model.Window{ID: "W11"}}
	recorded := rows.Row{Window: model.Window{ID: "W11"}, Run: rows.Run{Bugs: []string{"leave-table", "leak-cgroup"}}}
	for _, c := range []struct {
		path string
		row  rows.Row
		ok   bool
		want string
	}{
		{"results/mutants/leak-cgroup.jsonl", bare, true, "bug switch leak-cgroup, named by its file (the row predates run.bugs)"},
		{"out/mutants/list-hangs.jsonl.gz", bare, true, "bug switch list-hangs, named by its file (the row predates run.bugs)"},
		{"results/mutants/control.jsonl", bare, true, "control (no bug), named by its file"},
		{"results/mutants/leak-cgroup.jsonl", recorded, true, "bug switch leave-table,leak-cgroup, recorded in run.bugs"},
		{"results/windows.jsonl", recorded, true, "bug switch leave-table,leak-cgroup, recorded in run.bugs"},
		{"results/leak-cgroup.jsonl", bare, false, ""},
		{"results/mutants/old/leak-cgroup.jsonl", bare, false, ""},
		{"results/mutants/notes.txt", bare, false, ""},
	} {
		m, ok := render.MutantOf(c.path, decoded.Of(c.row)[0])
		if ok != c.ok || (ok && m.Origin() != c.want) {
			t.Errorf("MutantOf(%s, bugs %v) = %q %v, want %q %v", c.path, c.row.Run.Bugs, m.Origin(), ok, c.want, c.ok)
		}
	}
}

// The control run (mutants/control.jsonl) is shown as control, in the
// mutants' group; its FAIL is not called expected, nor counted as a
// supervisor's.
func TestControlFileIsControl(t *testing.T) {
	f := written(t, "results/mutants/control.jsonl", rowsOf("583a9fa", t0, 0.6,
		replaytest.Input(replaytest.W4Survivor), replaytest.As(replaytest.Input(replaytest.W4Pass), "W3_30")))
	r := render.Build([]render.File{f}, false)
	md := string(markdown(t, r))
	mustContain(t, md,
		"| mutants (bugs planted on purpose) | 1 | 1 | 2 | 1 | 1 of control runs | 0 | 0 |",
		"| W4_30 | control (no bug): FAIL: P1 (pid 4242",
		"| W3_30 | control (no bug): PASS |",
		"### Summary of `results/mutants/control.jsonl`: control (no bug), named by its file",
		"### W4_30, run 1: FAIL (control (no bug))",
	)
	mustLack(t, "a control run's report", md, "| bug switch", ": bug switch", "expected FAIL", "(expected:", "## Supervisor:")
	if len(r.Groups) != 1 || !r.Groups[0].Mutants || r.Groups[0].Expected != 0 || r.Groups[0].ControlFails != 1 {
		t.Errorf("groups %+v, want the mutants alone with one control FAIL", r.Groups[0])
	}
	mustLack(t, "a control run's page", htmlOf(t, r), `s-fail expected`)
}

// Rows of two drivers are two groups, each under its own heading with its
// own verdict table and summaries, in the order of their names; a window
// both ran is shown in each under its own runs.
func TestGroupsBySupervisor(t *testing.T) {
	pass := replaytest.Input(replaytest.W4Pass)
	ref := written(t, "results/windows.jsonl", rowsOf("583a9fa", t0, 0.4, replaytest.As(pass, "W3_30"), pass))
	pod := rowsOf("5cffb9b", t0.Add(time.Hour), 0.8, replaytest.As(pass, "W3_30"), replaytest.Input(replaytest.W5IPForward))
	for i := range pod {
		pod[i].Driver = "podman"
	}
	podman := written(t, "results/podman/soak.jsonl", pod)
	r := render.Build([]render.File{ref, podman}, false)
	if len(r.Problems) != 0 {
		t.Fatalf("rows do not verify: %v", r.Problems)
	}
	md := string(markdown(t, r))
	mustContain(t, md,
		"| podman | 1 | 1 | 2 | 1 | 1 | 0 | 0 |",
		"| refsup | 1 | 1 | 2 | 2 | 0 | 0 | 0 |",
	)
	mustLack(t, "a report without mutants", md, "mutants", render.MutantsHeadline)
	if p, s := strings.Index(md, "## Supervisor: podman"), strings.Index(md, "## Supervisor: refsup"); p < 0 || s < p {
		t.Errorf("supervisor headings at %d (podman) and %d (refsup), want both, podman first", p, s)
	}
	podmanMD := section(md, "## Supervisor: podman")
	mustContain(t, podmanMD, "| Window | Run 2 |", "| W3_30 | PASS |", "| W5 | FAIL: H1", "### Summary of `results/podman/soak.jsonl`")
	mustLack(t, "the podman section", podmanMD, "Run 1", "W4_30", "results/windows.jsonl")
	refsupMD := section(md, "## Supervisor: refsup")
	mustContain(t, refsupMD, "| Window | Run 1 |", "| W3_30 | PASS |", "| W4_30 | PASS |", "### Summary of `results/windows.jsonl`")
	mustLack(t, "the refsup section", refsupMD, "Run 2", "W5", "results/podman/soak.jsonl")

	html := htmlOf(t, r)
	mustContain(t, html,
		`<h2 id="h-group-1">Supervisor: podman <span class="tot">`,
		`<table class="heatmap" id="heatmap-1" data-group="podman" data-cells="2">`,
		`<h2 id="h-group-2">Supervisor: refsup <span class="tot">`,
		`<table class="heatmap" id="heatmap-2" data-group="refsup" data-cells="2">`,
		`<summary>Per-file summaries: Supervisor: podman</summary>`,
		`<summary>Per-file summaries: Supervisor: refsup</summary>`,
	)
	// A supervisor's section comes before the files and runs tables.
	if i, j := strings.Index(html, `id="h-group-1"`), strings.Index(html, `<summary>Files (`); i < 0 || j < i {
		t.Errorf("the files table (at %d) comes before the first supervisor (at %d)", j, i)
	}
	// Each map holds its own runs only: podman's W3_30 is run 2.
	podMap := html[strings.Index(html, `id="heatmap-1"`):strings.Index(html, `id="heatmap-2"`)]
	mustContain(t, podMap, `data-window="W3_30" data-run="2"`, `data-window="W5" data-run="2"`)
	mustLack(t, "podman's map", podMap, `data-run="1"`)
}

// A row cut short at preflight records no driver: its window's driver,
// else the default, names its supervisor.
func TestSupervisorOfARowWithoutDriver(t *testing.T) {
	for _, c := range []struct {
		row  rows.Row
		want string
	}{
		{rows.Row{Driver: "podman", Window: model.Window{Driver: "podman"}}, "podman"},
		{rows.Row{Window: model.Window{Driver: "containerd"}}, "containerd"},
		{rows.Row{}, model.DefaultDriver},
	} {
		if got := decoded.Of(c.row)[0].Supervisor(); got != c.want {
			t.Errorf("Supervisor(driver %q, window's %q) = %q, want %q", c.row.Driver, c.row.Window.Driver, got, c.want)
		}
	}
}

// A run holding a mutant's row and a plain one (a buggy row's cascade, or
// a file of mixed runs) shows each cell under its own group only.
func TestMixedRunSplitsByGroup(t *testing.T) {
	pass := replaytest.Input(replaytest.W4Pass)
	rs := rowsOf("583a9fa", t0, 0.4, replaytest.Input(replaytest.W4Survivor), replaytest.As(pass, "W3_30"))
	rs[0].Run.Bugs = []string{"leave-table"}
	r := render.Build([]render.File{written(t, "results/mixed.jsonl", rs)}, false)
	if len(r.Runs) != 1 || len(r.Groups) != 2 {
		t.Fatalf("%d runs, %d groups; want 1 run split into refsup and mutants", len(r.Runs), len(r.Groups))
	}
	md := string(markdown(t, r))
	refsup, mutants := section(md, "## Supervisor: refsup"), section(md, "## Mutants (bugs planted on purpose)")
	mustContain(t, refsup, "| W3_30 | PASS |")
	mustLack(t, "the refsup section", refsup, "W4_30", "leave-table")
	mustContain(t, mutants, "| W4_30 | bug switch leave-table: expected FAIL: P1", "### Summary of `results/mixed.jsonl`: bug switch leave-table, recorded in run.bugs")
	mustLack(t, "the mutants section", mutants, "W3_30")
}
