package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"faultwin/drivers/catalog"
)

// lint reads files only: every shipped description, window file and
// learned outcomes file passes it.
func TestLintShippedFiles(t *testing.T) {
	out, code, err := runVerb(t, "lint", "../../drivers/described/supervisors", "../../drivers/described/variants", "../../windows")
	if code != 0 || !strings.Contains(out, "no problem") {
		t.Fatalf("exit %d (%v):\n%s", code, err, out)
	}
	// The small description lint's tests break on purpose (testdata/lint).
	if out, code, err := runVerb(t, "lint", "testdata/lint/supervisors/demo.yaml"); code != 0 {
		t.Errorf("the tutorial's example: exit %d (%v):\n%s", code, err, out)
	}
}

// On a corpus broken on purpose: every problem of every file at once,
// each as FILE:LINE: FIELD: PROBLEM; a value of the wrong type and the
// meaning of the rest of its description together; a window on a
// description given beside it (not installed) checked against it.
func TestLintBrokenCorpus(t *testing.T) {
	out, code, err := runVerb(t, "lint", "testdata/lint")
	if code != exitFail || err == nil || !strings.Contains(err.Error(), "lint: 5 problems in 4 files") {
		t.Fatalf("exit %d (%v):\n%s", code, err, out)
	}
	located := regexp.MustCompile(`^testdata/lint/\S+\.yaml:[1-9]\d*: \S+`)
	var lines []string
	for _, l := range outLines(out) {
		if !located.MatchString(l) {
			t.Errorf("a problem without file, line and field: %q", l)
		}
		lines = append(lines, l)
	}
	for _, want := range []string{
		"testdata/lint/supervisors/broken.yaml:4: timeout_ms: `30s` is a string, and this field takes a whole number",
		`testdata/lint/supervisors/broken.yaml:22: points[0].watch: "helpr" is not a role`,
		"testdata/lint/windows/demo.yaml:5: lands_in: stop.helper kills at an event of the operation",
		"testdata/lint/windows/demo.yaml:15: colour: unknown field",
		"testdata/lint/windows/expected/outcomes.yaml:2: cannot unmarshal !!seq",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("lint does not say %q:\n%s", want, strings.Join(lines, "\n"))
		}
	}
	if _, code, _ := runVerb(t, "lint", "testdata/no-such-dir"); code != exitUsage {
		t.Errorf("a missing path: exit %d, want %d", code, exitUsage)
	}
}

// hostcheck refuses a user's description that does not load instead of
// judging the host without what it claims (the catalog loads once per
// process, so the check runs in a child with FAULTWIN_SUPERVISORS set).
func TestHostcheckRefusesABrokenDescription(t *testing.T) {
	if os.Getenv("FAULTWIN_TEST_CHILD") == "hostcheck" {
		out, code, _ := runVerb(t, "hostcheck", "--state-root", t.TempDir())
		fmt.Printf("CODE %d\n%s", code, out)
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestHostcheckRefusesABrokenDescription$", "-test.v")
	cmd.Env = append(os.Environ(), "FAULTWIN_TEST_CHILD=hostcheck", catalog.EnvDirs+"=testdata/lint/supervisors/broken.yaml")
	out, _ := cmd.CombinedOutput()
	if !strings.Contains(string(out), "CODE 1\n") || !strings.Contains(string(out), "broken.yaml:4: timeout_ms: `30s` is a string") {
		t.Errorf("hostcheck with a broken description:\n%s", out)
	}
}

// --supervisor FILE loads a description for one call, as
// FAULTWIN_SUPERVISORS does, and only for that call: the tutorial's
// commands need no environment.
func TestSupervisorFlag(t *testing.T) {
	out, code, _ := runVerb(t, "hostcheck", "--supervisor", "testdata/lint/supervisors/broken.yaml", "--state-root", t.TempDir())
	if code != 1 || !strings.Contains(out, "broken.yaml:4: timeout_ms: `30s` is a string") {
		t.Errorf("hostcheck --supervisor broken.yaml: exit %d:\n%s", code, out)
	}
	out, _, _ = runVerb(t, "doctor", "--supervisor", "testdata/lint/supervisors/demo.yaml")
	if !strings.Contains(out, "MISSING demo ") {
		t.Errorf("doctor --supervisor demo.yaml does not check demo's binary:\n%s", out)
	}
	out, _, _ = runVerb(t, "doctor")
	if strings.Contains(out, "demo") {
		t.Errorf("the description of an earlier call is still loaded:\n%s", out)
	}
	if _, code, err := runVerb(t, "lint", "--supervisor", "testdata/no-such.yaml", "testdata/lint/supervisors/demo.yaml"); code != exitUsage || !strings.Contains(fmt.Sprint(err), "--supervisor testdata/no-such.yaml") {
		t.Errorf("a missing description: exit %d (%v), want %d naming it", code, err, exitUsage)
	}
}

// A .yml file below a directory lint checks is a problem, not skipped:
// every loader reads *.yaml only, so the run would never see it.
func TestLintRefusesYml(t *testing.T) {
	dir := t.TempDir()
	src, err := os.ReadFile("testdata/lint/supervisors/demo.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dir+"/demo.yaml", src, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dir+"/more.yml", []byte("windows: []\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, code, _ := runVerb(t, "lint", dir)
	if code != exitFail || !strings.Contains(out, dir+"/more.yml:1: document: every loader reads *.yaml files only") || !strings.Contains(out, "rename it to more.yaml") {
		t.Errorf("lint DIR with a .yml file: exit %d:\n%s", code, out)
	}
}

// A window family id is unique across every supervisor's windows: rows of
// several supervisors are merged, reported and replayed together by id.
func TestLintRefusesAFamilyIdOfAnotherDirectory(t *testing.T) {
	files, err := filepath.Glob("../../windows/refsup/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no refsup window files: %v", err)
	}
	src, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	for _, d := range []string{"a", "b"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, d, "w.yaml"), src, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out, code, _ := runVerb(t, "lint", filepath.Join(root, "a"), filepath.Join(root, "b"))
	want := regexp.MustCompile(regexp.QuoteMeta(filepath.Join(root, "b", "w.yaml")) + `:\d+: id: "[A-Z0-9]+" is already the id of a window family in ` + regexp.QuoteMeta(filepath.Join(root, "a", "w.yaml")))
	if code != exitFail || !want.MatchString(out) {
		t.Errorf("the same family in two directories: exit %d:\n%s", code, out)
	}
	if out, code, _ := runVerb(t, "lint", filepath.Join(root, "a")); code != 0 {
		t.Errorf("one directory alone: exit %d:\n%s", code, out)
	}
}
