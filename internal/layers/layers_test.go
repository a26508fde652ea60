package layers

import (
	"os/exec"
	"path"
	"slices"
	"strings"
	"testing"
)

// rule lists, for every package of the module, the project packages it may
// import (patterns: "x/..." is x and everything below it). A package missing
// from the table fails the test: a new package states its place first.
// There are no exemptions. Test files are held to it too, except that a
// package's own tests may import the packages testOnly lists for it.
var rule = map[string][]string{
	"internal/model":                {},
	"internal/pidkill":              {"internal/model"},
	"internal/gitcmd":               {},
	"internal/layers":               {},
	"internal/strictjson":           {},
	"internal/procstat":             {},
	"internal/hosttest":             {"internal/reexec"},
	"internal/reexec":               {},
	"snapshots":                     {"internal/model"},
	"snapshots/host":                {"internal/model", "internal/strictjson", "snapshots"},
	"criteria":                      {"internal/model", "snapshots"},
	"criteria/matchers":             {"criteria", "internal/model"},
	"drivers":                       {"internal/model"},
	"drivers/triggers":              {"internal/model", "internal/pidkill", "internal/procstat"},
	"drivers/reclaim":               {"criteria", "internal/model", "internal/pidkill", "internal/strictjson", "snapshots/..."},
	"drivers/doctor":                {"internal/model", "snapshots/host"},
	"drivers/hostview":              {"internal/model", "internal/procstat"},
	"drivers/refsup":                {"drivers", "internal/model", "internal/procstat", "internal/strictjson", "drivers/hostview", "drivers/triggers", "fixtures/refsup/..."},
	"drivers/described":             {"drivers", "internal/model", "internal/reexec", "drivers/hostview", "drivers/triggers"},
	"drivers/described/supervisors": {},
	"drivers/catalog":               {"drivers/...", "internal/model"},
	"reports/rows":                  {"internal/model", "internal/strictjson", "snapshots"},
	"reports/decoded":               {"criteria", "internal/model", "internal/strictjson", "reports/rows", "snapshots"},
	"reports/review":                {"criteria", "internal/model", "internal/strictjson", "reports/decoded", "reports/rows"},
	"reports/render":                {"criteria", "internal/model", "reports/decoded", "reports/findings", "reports/review", "reports/rows"},
	"reports/sigs":                  {"reports/rows"},
	"reports/findings":              {"criteria", "internal/model", "reports/decoded", "reports/rows"},
	"reports/upstream":              {"criteria", "internal/model", "reports/decoded", "snapshots"},
	"reports/replaytest":            {"criteria", "windows/definitions", "drivers/catalog", "internal/model", "internal/strictjson", "reports/rows", "snapshots"},
	"reports/render/promtest":       {},
	"windows/definitions":           {"internal/model"},
	"windows/registration":          {"windows/definitions", "internal/gitcmd", "internal/model"},
	"windows/expected":              {"internal/model", "reports/decoded", "reports/review", "reports/rows"},
	"windows/runner":                {"criteria", "windows/definitions", "drivers", "drivers/catalog", "drivers/reclaim", "internal/gitcmd", "internal/model", "windows/registration", "reports/rows", "snapshots/..."},
	"scripts/testsummary":           {},
	"scripts/schemas":               {"drivers/described", "reports/rows", "windows/definitions"},
	"scripts/bench":                 {"internal/model", "reports/rows", "snapshots/...", "fixtures/refsup/api", "fixtures/refsup/paths"},
	"scripts/loadpair":              {"internal/model", "reports/rows"},
	"scripts/neighbours":            {"snapshots/host"},
	"cmd/faultwin":                  {"criteria/...", "windows/definitions", "windows/expected", "drivers", "drivers/catalog", "drivers/doctor", "drivers/reclaim", "internal/model", "internal/reexec", "reports/...", "windows/runner", "snapshots/..."},
	"windows":                       {"criteria/...", "internal/model", "windows/runner", "windows/suite"},
	"windows/mutants":               {"criteria/...", "internal/model", "windows/runner", "snapshots/...", "windows/suite", "fixtures/refsup/bugs"},
	"windows/suite":                 {"drivers/catalog", "internal/model", "reports/review", "windows/expected", "windows/runner"},
	// The reference supervisor is the system under test: it speaks to the
	// harness only through its CLI and JSON, never through a shared package.
	"cmd/refsup":          {"fixtures/refsup/..."},
	"fixtures/refsup/...": {"fixtures/refsup/..."},
}

// testOnly lists what a package's own tests may import beyond its rule:
// the real thing a test drives (a real supervisor, the real catalog).
var testOnly = map[string][]string{
	// Every package's host tests mark themselves for the test tiers, and
	// read a process's stat, when they check one, with the one parser.
	"*":                    {"internal/hosttest", "internal/procstat"},
	"criteria":             {"criteria/matchers"},
	"reports/render":       {"reports/replaytest", "reports/render/promtest", "snapshots"},
	"reports/review":       {"reports/replaytest", "snapshots", "windows/definitions", "drivers/catalog", "reports/findings"},
	"windows/definitions":  {"drivers/refsup"},
	"windows/registration": {"drivers/refsup"},
	"windows/expected":     {"criteria"},
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
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}}|{{join .Imports \",\"}}|{{join .TestImports \",\"}},{{join .XTestImports \",\"}}", module+"/...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	n := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.SplitN(line, "|", 3)
		pkg := strings.TrimPrefix(f[0], module+"/")
		if len(patterns(pkg)) == 0 {
			t.Errorf("%s has no place in the import rule: add it to layers_test.go and ARCHITECTURE.md", pkg)
			continue
		}
		n++
		check := func(imports string, test bool) {
			for _, imp := range strings.Split(imports, ",") {
				p, ok := strings.CutPrefix(imp, module+"/")
				if !ok || p == pkg || allowed(pkg, p) || (test && (slices.Contains(testOnly[pkg], p) || slices.Contains(testOnly["*"], p))) {
					continue
				}
				kind := ""
				if test {
					kind = " in a test file"
				}
				t.Errorf("%s imports %s%s, which the rule does not allow", pkg, p, kind)
			}
		}
		check(f[1], false)
		if len(f) == 3 {
			check(f[2], true)
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
		{"criteria", "internal/model", true},
		{"criteria", "drivers", false},
		{"criteria", "snapshots/host", false},
		{"internal/model", "snapshots", false},
		{"fixtures/refsup/sweep", "fixtures/refsup/api", true},
		{"fixtures/refsup/sweep", "internal/model", false},
		{"cmd/refsup", "snapshots", false},
		{"windows/runner", "drivers/refsup", false},
		{"cmd/faultwin", "drivers/catalog", true},
		{"cmd/faultwin", "drivers/described", false},
		{"cmd/faultwin", "drivers/refsup", false},
		{"reports/rows", "windows/runner", false},
		{"reports/review", "windows/runner", false},
	} {
		if got := allowed(c.pkg, c.imp); got != c.want {
			t.Errorf("allowed(%s, %s) = %v, want %v", c.pkg, c.imp, got, c.want)
		}
	}
}
