package suite

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// toyWindow is one window of a throwaway supervisor's folder. Its driver
// is refsup (a real catalog driver, so the loader checks it as any other);
// the folder, not the driver, makes the suite.
const toyWindow = `id: TOY1
operation: destroy
point: destroy.after_kill
precondition: {cold: 1}
criteria: [F1, P1]
description: >
  A throwaway supervisor's only window, to show a folder of windows and
  its learned outcomes are a suite with no code.
`

const toyOutcomes = `supervisor: toy
windows:
    TOY1:
        from: [results/toy/soak.jsonl.gz]
        outcomes:
            PASS: 10
        median_s: 1.0
smoke: [TOY1]
`

// plantToy writes windows/toy/ under a temp windows dir.
func plantToy(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	toy := filepath.Join(dir, "toy")
	if err := os.MkdirAll(filepath.Join(toy, "expected"), 0o755); err != nil {
		t.Fatal(err)
	}
	for path, text := range map[string]string{
		filepath.Join(toy, "toy.yaml"):            toyWindow,
		filepath.Join(toy, ExpectedFile):          toyOutcomes,
		filepath.Join(dir, "notasuite", "x.yaml"): toyWindow, // no learned outcomes: not a suite
	} {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// A supervisor added by data alone (a folder of windows and its learned
// outcomes) is discovered with its windows and expectations; a folder
// without learned outcomes is not a suite.
func TestDiscoverAddsASupervisorByData(t *testing.T) {
	ss, err := Discover(plantToy(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(ss) != 1 || ss[0].Name != "toy" || len(ss[0].Registered) != 1 || ss[0].Registered[0].ID != "TOY1" {
		t.Fatalf("discovered %+v", ss)
	}
	if err := ss[0].Expected.Check(ss[0].Registered); err != nil {
		t.Errorf("its outcomes do not cover its windows: %v", err)
	}
}

// ...and the one suite, ./windows, finds its specs, labelled with its
// name: a dry run (nothing runs, no root needed) lists them.
func TestTheSuiteFindsADataOnlySupervisor(t *testing.T) {
	dir := plantToy(t)
	_, here, _, _ := runtime.Caller(0)
	windows := filepath.Join(filepath.Dir(here), "..")
	cmd := exec.Command("go", "test", "-count=1", "-vet=off", "-v", ".", "-args", "-ginkgo.dry-run", "-ginkgo.v", "-ginkgo.label-filter=toy")
	cmd.Dir = windows
	cmd.Env = append(os.Environ(), "FAULTWIN_DESCRIBED_DIR="+dir)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go test ./windows (dry run): %v\n%s", err, out)
	}
	for _, want := range []string{"toy windows", "TOY1", "has recorded outcomes for every registered window"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the dry run does not list %q:\n%s", want, out)
		}
	}
	if strings.Contains(string(out), "podman windows") || strings.Contains(string(out), "notasuite") {
		t.Errorf("the dry run lists more than the toy supervisor:\n%s", out)
	}
}
