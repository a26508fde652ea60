package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"faultwin/drivers/catalog"
	"faultwin/reports/review"
	"faultwin/windows/definitions"
)

// TestExploreMapsW3 explores a small part of W3 on the real supervisor:
// every kill is a row that replays, the output names the classes, and the
// candidate is a definition the loader accepts.
func TestExploreMapsW3(t *testing.T) {
	_, refsup := builtBinaries(t)
	dir := t.TempDir()
	results, cand := filepath.Join(dir, "explore.jsonl"), filepath.Join(dir, "W3X.yaml")
	out, code, err := runVerb(t, "explore", "--windows", "../../windows/refsup", "--family", "W3", "--from", "10", "--to", "90",
		"--step", "40", "--resolution", "20", "--max-kills", "8", "--refsup", refsup, "--logs", filepath.Join(dir, "logs"),
		"--results", results, "--candidate", cand)
	if code != 0 {
		t.Fatalf("explore: exit %d %v\n%s", code, err, out)
	}
	for _, want := range []string{"[  1] W3_10", "W3_50", "W3_90", "class  after restore."} {
		if !strings.Contains(out, want) {
			t.Errorf("explore output lacks %q:\n%s", want, out)
		}
	}
	f := review.ReplayFile(results)
	if !f.OK() || len(f.Records) < 3 {
		t.Fatalf("explore rows do not replay (%d rows): chain %v, diffs %v, seal %+v", len(f.Records), f.Chain, f.Diffs, f.Seal)
	}
	b, err := os.ReadFile(cand)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := definitions.ParseFile("windows/W3X.yaml", b, catalog.Specs()); err != nil {
		t.Fatalf("candidate does not load: %v\n%s", err, b)
	}
	if _, code, _ := runVerb(t, "explore", "--family", "W1", "--windows", "../../windows/refsup", "--refsup", refsup); code == 0 {
		t.Error("exploring W1, which has no timed point, was accepted")
	}
}
