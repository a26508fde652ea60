package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"faultwin/windows/expected"
)

// TestExpectationsAreLearned: every described suite's expected outcomes
// are what `faultwin expect` learns from the soaks the file names, never a
// hand-kept list: learning them again from those files gives the same file.
func TestExpectationsAreLearned(t *testing.T) {
	files, err := filepath.Glob("../../windows/*/expected/outcomes.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no described suite's expected outcomes (%v)", err)
	}
	for _, f := range files {
		suite := filepath.Dir(filepath.Dir(f))
		t.Run(filepath.Base(suite), func(t *testing.T) {
			checked, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			e, err := expected.ReadExpectations(f)
			if err != nil {
				t.Fatal(err)
			}
			var sources []string
			for _, s := range e.Windows {
				for _, src := range s.From {
					if !slices.Contains(sources, src) {
						sources = append(sources, src)
					}
				}
			}
			slices.Sort(sources)
			dir := t.TempDir()
			copyTree(t, suite, filepath.Join(dir, "suite"))
			args := []string{"expect", "--windows", filepath.Join(dir, "suite"), "--name", filepath.Base(suite)}
			wd, _ := os.Getwd()
			t.Cleanup(func() { _ = os.Chdir(wd) })
			if err := os.Chdir("../.."); err != nil {
				t.Fatal(err)
			}
			out, code, err := runVerb(t, append(args, sources...)...)
			if code != 0 {
				t.Fatalf("expect: exit %d (%v)\n%s", code, err, out)
			}
			learned, err := os.ReadFile(filepath.Join(dir, "suite", "expected", "outcomes.yaml"))
			if err != nil {
				t.Fatal(err)
			}
			if string(learned) != string(checked) {
				t.Errorf("%s is not what faultwin expect learns from %s: learn it again (bin/faultwin expect --windows %s %s)",
					f, strings.Join(sources, " "), strings.TrimPrefix(suite, "../../"), strings.Join(sources, " "))
			}
		})
	}
}

// copyTree copies the suite's window definitions (and nothing under
// expected/) so expect writes beside a copy, not over the checked-in file.
func copyTree(t *testing.T, from, to string) {
	t.Helper()
	copyYAML(t, from, to)
	if err := os.MkdirAll(filepath.Join(to, "expected"), 0o755); err != nil {
		t.Fatal(err)
	}
}
