package layers

import (
	"bufio"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// describedNames are the supervisors described as data: the name: of each
// drivers/described/supervisors/*.yaml.
func describedNames(t *testing.T) []string {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(repo, "drivers", "described", "supervisors", "*.yaml"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no supervisor descriptions: %v", err)
	}
	var names []string
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		m := regexp.MustCompile(`(?m)^name: *(\S+)`).FindSubmatch(b)
		if m == nil {
			t.Fatalf("%s: no name", p)
		}
		names = append(names, string(m[1]))
	}
	return names
}

// A supervisor described as data is added by a description, a folder of
// windows and its learned outcomes: neither the Makefile's rules nor the
// CLI's code may know one by name. The Makefile's comments and the CLI's
// help may name one as an example; a recipe, a variable, or a string the
// CLI compares or builds a path from may not.
func TestNoSupervisorByName(t *testing.T) {
	names := describedNames(t)
	word := regexp.MustCompile(`\b(` + strings.Join(names, "|") + `)\b`)
	dir := regexp.MustCompile(`windows/(` + strings.Join(names, "|") + `)\b`)

	f, err := os.Open(filepath.Join(repo, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if code, _, _ := strings.Cut(line, "#"); word.MatchString(code) {
			t.Errorf("Makefile:%d names a supervisor: %s", n, strings.TrimSpace(line))
		}
	}

	files, err := filepath.Glob(filepath.Join(repo, "cmd", "faultwin", "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(file, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			s, err := strconv.Unquote(lit.Value)
			if err != nil {
				return true
			}
			if slices.Contains(names, s) || dir.MatchString(s) {
				t.Errorf("%s: the CLI knows a supervisor by name: %q", fset.Position(lit.Pos()), s)
			}
			return true
		})
	}
}

// goNamed are the supervisors Go code names: refsup, which the repository
// ships, and those described before the format could hold everything they
// needed (their tests and a few comments name them). A supervisor
// described after them is written from the tutorial alone, and no Go file,
// tests included, names it: what it needed that the format lacked was
// added to the format.
var goNamed = []string{"refsup", "podman", "containerd", "containerd-cri"}

func TestLaterSupervisorsAreDataOnly(t *testing.T) {
	var later []string
	for _, n := range describedNames(t) {
		if !slices.Contains(goNamed, n) {
			later = append(later, regexp.QuoteMeta(n))
		}
	}
	if len(later) == 0 {
		t.Fatal("every described supervisor is one Go code may name: nothing to check")
	}
	// the name and its own binaries' (a daemon's name with a d)
	word := regexp.MustCompile(`(?i)\b(` + strings.Join(later, "|") + `)d?\b`)
	err := filepath.WalkDir(repo, func(p string, e os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if e.IsDir() && (e.Name() == ".git" || e.Name() == "results" || e.Name() == "out") {
			return filepath.SkipDir
		}
		if e.IsDir() || !strings.HasSuffix(p, ".go") {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for i, line := range strings.Split(string(b), "\n") {
			if m := word.FindString(line); m != "" {
				rel, _ := filepath.Rel(repo, p)
				t.Errorf("%s:%d names %q, a supervisor described as data only: grow the format instead", rel, i+1, m)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
