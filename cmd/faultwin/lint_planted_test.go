package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// expectation is what a planted case says its verb must print: the
// "# lint: ..." or "# doctor: ..." line of the file that holds the
// mistake, its parts (split at " … ") in order on one line of output.
type expectation struct {
	verb  string
	parts []string
}

var expectLine = regexp.MustCompile(`(?m)^# (lint|doctor): (.+)$`)

// plantedExpectation reads the one expectation of case dir or file.
func plantedExpectation(t *testing.T, c string) expectation {
	t.Helper()
	var found []expectation
	err := filepath.WalkDir(c, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for _, m := range expectLine.FindAllStringSubmatch(string(b), -1) {
			found = append(found, expectation{m[1], strings.Split(m[2], " … ")})
		}
		return nil
	})
	if err != nil || len(found) != 1 {
		t.Fatalf("%s: %d expectations (%v): give exactly one # lint: or # doctor: line", c, len(found), err)
	}
	return found[0]
}

// inOrder reports whether one line of out holds every part, in order.
func inOrder(out string, parts []string) bool {
	for _, l := range outLines(out) {
		rest, ok := l, true
		for _, p := range parts {
			i := strings.Index(rest, p)
			if i < 0 {
				ok = false
				break
			}
			rest = rest[i+len(p):]
		}
		if ok {
			return true
		}
	}
	return false
}

// The planted-mistake corpus (testdata/planted): one file or directory per
// mistake a newcomer made describing a supervisor, each saying what lint
// (or, for what only the host can tell, doctor) prints for it, file, line
// and field included. Each case is one mistake: lint finds one problem in
// it, and the control it is made from passes.
func TestLintPlantedCorpus(t *testing.T) {
	const dir = "testdata/planted"
	entries, err := os.ReadDir(dir)
	if err != nil || len(entries) < 30 {
		t.Fatalf("%d cases in %s (%v)", len(entries), dir, err)
	}
	if out, code, err := runVerb(t, "lint", dir+"/00-control"); code != 0 {
		t.Fatalf("the control is refused: exit %d (%v):\n%s", code, err, out)
	}
	for _, e := range entries {
		if e.Name() == "00-control" {
			continue
		}
		c := filepath.Join(dir, e.Name())
		t.Run(e.Name(), func(t *testing.T) {
			want := plantedExpectation(t, c)
			var out string
			var code int
			switch want.verb {
			case "lint":
				want.parts[0] = dir + "/" + want.parts[0]
				out, code, err = runVerb(t, "lint", c)
				if err == nil || !strings.Contains(err.Error(), "lint: 1 problems in") {
					t.Errorf("not one problem (%v): the case plants more than one mistake, or lint missed it", err)
				}
			case "doctor":
				out, code, _ = runVerb(t, "doctor", "--supervisor", c)
				if _, lcode, lerr := runVerb(t, "lint", c); lcode != 0 {
					t.Errorf("lint refuses a case only the host can tell: %v", lerr)
				}
			}
			if code == 0 || !inOrder(out, want.parts) {
				t.Errorf("%s exit %d, want a line with %q:\n%s", want.verb, code, strings.Join(want.parts, " … "), out)
			}
		})
	}
}
