package render_test

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"faultwin/criteria"
	"faultwin/internal/model"
	"faultwin/reports/decoded"
	"faultwin/reports/render"
	"faultwin/reports/replaytest"
	"faultwin/reports/rows"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden from the current output")

var t0 = time.Date(2026, 10, 24, 10, 33, 52, 0, time.UTC)

// written chains rows through the real Writer and returns them as read
// back, under the display name path.
func written(t *testing.T, path string, rs []rows.Row) render.File {
	t.Helper()
	return render.FromRows(path, writtenRows(t, rs))
}

// writtenRows chains rows through the real Writer and returns them as
// read back.
func writtenRows(t *testing.T, rs []rows.Row) []rows.Row {
	t.Helper()
	tmp := filepath.Join(t.TempDir(), "rows.jsonl")
	if _, err := replaytest.Write(tmp, rs...); err != nil {
		t.Fatal(err)
	}
	back, err := rows.Read(tmp)
	if err != nil {
		t.Fatal(err)
	}
	return back
}

func rowsOf(commit string, start time.Time, load float64, ins ...criteria.Input) []rows.Row {
	var out []rows.Row
	for i, in := range ins {
		out = append(out, replaytest.Row(in, replaytest.Prov{Commit: commit, Started: start.Add(time.Duration(i) * 7 * time.Second), Load: load + float64(i)/20}))
	}
	return out
}

// run1 and run3: W4_30's restorer survived in run 1
// and passed after the fix; W5 failed H1 in run 1.
func run1(t *testing.T) render.File {
	return written(t, "results/run1.jsonl", run1Rows())
}

func run1Rows() []rows.Row {
	pass := replaytest.Input(replaytest.W4Pass)
	return rowsOf("d25cf84aa", t0, 0.4,
		replaytest.Input(replaytest.W1Leftover),
		replaytest.As(pass, "W3_30"),
		replaytest.Input(replaytest.W4Survivor),
		replaytest.Input(replaytest.W5IPForward),
	)
}

func run3(t *testing.T) render.File {
	pass := replaytest.Input(replaytest.W4Pass)
	return written(t, "results/run3.jsonl", rowsOf("cc3a560bb", t0.Add(16*time.Minute), 0.7,
		replaytest.As(pass, "W3_30"),
		pass,
		replaytest.As(pass, "W4_80"),
	))
}

// soak is three passes of W3_30 and W4_30 in one file.
func soak(t *testing.T) render.File {
	pass := replaytest.Input(replaytest.W4Pass)
	var rs []rows.Row
	plan := [][]criteria.Input{
		{replaytest.As(pass, "W3_30"), pass},
		{replaytest.As(pass, "W3_30"), replaytest.Input(replaytest.W4Survivor)},
		{replaytest.As(replaytest.Input(replaytest.W3NotFired), "W3_30"), replaytest.Errored(pass, "snapshot after_sweep: reading /proc: too many open files")},
	}
	for i, p := range plan {
		rs = append(rs, rowsOf("8b3bfd2cc", t0.Add(time.Duration(i)*time.Minute), 1.5+float64(i), p...)...)
	}
	return written(t, "results/soak.jsonl", rs)
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run `go test ./reports/render -args -update` to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file; if the change is intended, rerun with -update and review the diff.\ngot:\n%s", path, got)
	}
}

func markdown(t *testing.T, r *render.Report) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := render.Markdown(&b, r); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestMarkdownCompare(t *testing.T) {
	r := render.Build([]render.File{run1(t), run3(t)}, true)
	if len(r.Problems) != 0 {
		t.Fatalf("genuine rows do not verify: %v", r.Problems)
	}
	got := markdown(t, r)
	golden(t, "compare.md", got)
	mustContain(t, string(got),
		"| W4_30 | FAIL: P1 (pid 4242 (start 1190518) criu argv=\"criu swrk 3…) | PASS |",
		"| W1 | INVALID: preflight: 2 leftovers of a faultwin run at preflight | – |",
		// one row each: no change the intervals support;
		// W1 and another ran in A only, W4_80 in B only
		"0 windows changed",
		"1 differ in their commonest verdict within the intervals, not counted",
		"2 ran only in A and 1 only in B, not compared",
	)
}

func TestMarkdownSoak(t *testing.T) {
	r := render.Build([]render.File{soak(t)}, false)
	if len(r.Runs) != 3 {
		t.Fatalf("%d runs, want one per pass (3)", len(r.Runs))
	}
	got := markdown(t, r)
	golden(t, "soak.md", got)
	mustContain(t, string(got),
		"| W3_30 | 2/2 | [0.34, 1.00] | 0 | 1 | 0 | - | 1.50 / 2.50 / 3.50 | 4.1s |",
		"| W4_30 | 1/2 | [0.09, 0.91] | 1 | 0 | 1 | P1 ×1 | 1.55 / 2.55 / 3.55 | 4.1s |",
		"### W4_30, run 3: ERROR",
	)
}

// TestMarkdownTampered: a report of a file whose chain was forged over an
// edited status must say so, beside the cell and at the top.
func TestMarkdownTampered(t *testing.T) {
	back := writtenRows(t, run1Rows())
	back[2].Status = model.StatusPass
	f := render.FromRows("results/run1.jsonl", replaytest.Reforge(back))
	r := render.Build([]render.File{f}, false)
	got := markdown(t, r)
	golden(t, "tampered.md", got)
	mustContain(t, string(got),
		"## Evidence that does not verify",
		"results/run1.jsonl row 3 (W4_30): status recorded PASS, recomputed FAIL",
		"PASS [replay disagrees]",
		"| `results/run1.jsonl` | 4 | ok | not checked | DISAGREES: 1 difference |",
	)
}

func TestCompareOnlyWithTwoFiles(t *testing.T) {
	if r := render.Build([]render.File{run1(t)}, true); r.Compare != nil {
		t.Error("a comparison needs two files")
	}
}

// mustContain reports every want that text lacks, with the text once.
func mustContain(t *testing.T, text string, wants ...string) {
	t.Helper()
	for _, want := range wants {
		if !strings.Contains(text, want) {
			t.Errorf("no %q in:\n%s", want, text)
		}
	}
}

// TestLandingsFromRecordedPodmanRows: the landing table of real rows (PR5
// after its F1 fix) groups them by the processes present at each kill, in
// both the Markdown and the HTML report, and refsup's armed windows have
// none.
func TestLandingsFromRecordedPodmanRows(t *testing.T) {
	f := render.Load([]string{filepath.Join("..", "..", "results", "podman", "pr5-8-4f1e754.jsonl.gz")})
	r := render.Build(f, false)
	if len(r.Problems) > 0 {
		t.Fatalf("problems: %v", r.Problems)
	}
	if len(r.Landings) != 1 || r.Landings[0].Window != "PR5" || r.Landings[0].Rows != 8 {
		t.Fatalf("landings %+v, want PR5's 8 rows", r.Landings)
	}
	md := string(markdown(t, r))
	mustContain(t, md, "## Where the external kills landed", "| PR5 | conmon ×2, criu, podman, runc | ")
	var html bytes.Buffer
	if err := render.HTML(&html, r); err != nil {
		t.Fatal(err)
	}
	mustContain(t, html.String(), `<summary>Where the external kills landed</summary>`,
		`<tr><th scope="row">PR5</th><td>conmon ×2, criu, podman, runc</td>`)
	if armed := render.Build([]render.File{soak(t)}, false); len(armed.Landings) != 0 {
		t.Errorf("armed refsup rows grouped as external landings: %+v", armed.Landings)
	}
}

// TestMarkdownAgainstControls: a supervisor whose windows ran controls
// gets each failure beside its control's, the kill-caused one said so.
func TestMarkdownAgainstControls(t *testing.T) {
	pass, survivor := replaytest.Input(replaytest.W4Pass), replaytest.Input(replaytest.W4Survivor)
	var rs []rows.Row
	for i := 0; i < 10; i++ {
		for _, r := range rowsOf("8b3bfd2cc", t0.Add(time.Duration(i)*time.Minute), 1.5, survivor, pass) {
			if len(rs)%2 == 1 {
				r.Window.Fault.Disarmed = true // the control: passes
			}
			rs = append(rs, r)
		}
	}
	got := string(markdown(t, render.Build([]render.File{{Path: "results/ab.jsonl", Records: decoded.Of(rs...)}}, false)))
	mustContain(t, got, "### Against the controls", "| W4_30 | P1 | ", "| 10/10 | 0/10 | +1.00 [+0.61, +1.00] | caused by the kill |")
}
