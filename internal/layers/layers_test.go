package layers

import (
	"os/exec"
	"path"
	"strings"
	"testing"
)

// rule lists, for every package of the module, the project packages it may
// import (patterns: "x/..." is x and everything below it). A package missing
// from the table fails the test: a new package states its place first.
// There are no exemptions; test files are not held to it.
var rule = map[string][]string{
	"model":               {},
	"snapshots":           {"model"},
	"snapshots/host":      {"model", "snapshots"},
	"criteria":            {"model", "snapshots"},
	"criteria/matchers":   {"criteria", "model"},
	"definitions":         {"model"},
	"drivers":             {"model"},
	"drivers/refsup":      {"drivers", "model", "triggers", "fixtures/refsup/..."},
	"drivers/catalog":     {"drivers/...", "model", "supervisors"},
	"drivers/described":   {"model", "triggers"},
	"supervisors":         {},
	"reclaim":             {"criteria", "model", "snapshots/..."},
	"rows":                {"model", "snapshots"},
	"registration":        {"definitions", "internal/gitcmd", "model"},
	"review":              {"criteria", "model", "rows"},
	"review/render":       {"criteria", "model", "review", "rows"},
	"review/replaytest":   {"criteria", "definitions", "drivers/catalog", "model", "rows", "snapshots"},
	"runner":              {"criteria", "definitions", "drivers/...", "internal/gitcmd", "model", "reclaim", "registration", "rows", "snapshots/..."},
	"doctor":              {"model", "snapshots/host"},
	"triggers":            {"model"},
	"internal/gitcmd":     {},
	"internal/layers":     {},
	"scripts/testsummary": {},
	"cmd/faultwin":        {"criteria/...", "definitions", "doctor", "drivers/...", "model", "reclaim", "review/...", "rows", "runner", "snapshots/..."},
	"windows":             {"criteria/...", "model", "runner", "windows/suite"},
	"windows/mutants":     {"criteria/...", "model", "runner", "snapshots/...", "windows/suite", "fixtures/refsup/bugs"},
	"windows/suite":       {},
	"windows/podman":      {"criteria/...", "model", "runner", "windows/suite"},
	// The reference supervisor is the system under test: it speaks to the
	// harness only through its CLI and JSON, never through a shared package.
	"cmd/refsup":          {"fixtures/refsup/..."},
	"fixtures/refsup/...": {"fixtures/refsup/..."},
}

const module = "faultwin"

func allowed(pkg, imp string) bool {
	for _, p := range patterns(pkg) {
		for _, a := range p {
			if a == imp || (strings.HasSuffix(a, "/...") && (imp == strings.TrimSuffix(a, "/...") || strings.HasPrefix(imp, strings.TrimSuffix(a, "...")))) {
				return true
			}
		}
	}
	return false
}

// patterns returns the rule entries that apply to pkg: its own, or a
// "dir/..." entry above it.
func patterns(pkg string) [][]string {
	var out [][]string
	if a, ok := rule[pkg]; ok {
		out = append(out, a)
	}
	for d := pkg; d != "." && d != "/"; d = path.Dir(d) {
		if a, ok := rule[d+"/..."]; ok {
			out = append(out, a)
		}
	}
	return out
}

func TestImportRule(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}}|{{join .Imports \",\"}}", module+"/...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	n := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		full, imports, _ := strings.Cut(line, "|")
		pkg := strings.TrimPrefix(full, module+"/")
		if len(patterns(pkg)) == 0 {
			t.Errorf("%s has no place in the import rule: add it to layers_test.go and ARCHITECTURE.md", pkg)
			continue
		}
		n++
		for _, imp := range strings.Split(imports, ",") {
			if !strings.HasPrefix(imp, module+"/") {
				continue
			}
			if p := strings.TrimPrefix(imp, module+"/"); !allowed(pkg, p) {
				t.Errorf("%s imports %s, which the rule does not allow", pkg, p)
			}
		}
	}
	if n < 20 {
		t.Fatalf("go list showed %d packages; the module has more", n)
	}
}

// TestRuleCatchesAViolation: the checker itself must be able to fail.
func TestRuleCatchesAViolation(t *testing.T) {
	for _, c := range []struct {
		pkg, imp string
		want     bool
	}{
		{"criteria", "model", true},
		{"criteria", "drivers", false},
		{"criteria", "snapshots/host", false},
		{"model", "snapshots", false},
		{"fixtures/refsup/sweep", "fixtures/refsup/api", true},
		{"fixtures/refsup/sweep", "model", false},
		{"cmd/refsup", "snapshots", false},
		{"runner", "drivers/refsup", true},
		{"rows", "runner", false},
		{"review", "runner", false},
	} {
		if got := allowed(c.pkg, c.imp); got != c.want {
			t.Errorf("allowed(%s, %s) = %v, want %v", c.pkg, c.imp, got, c.want)
		}
	}
}
