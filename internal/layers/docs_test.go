package layers

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"
)

// The documentation is checked here because this package already reads the
// module as a whole and touches nothing on the host: these tests read files
// only, and run in `make unit`.

// repo is the module's root, seen from this package's directory.
var repo = filepath.Join("..", "..")

// readmeMaxLines keeps README.md a front page; the manual lives in docs/.
const readmeMaxLines = 150

// docFiles returns the Markdown pages whose links are checked, relative to
// the repository: README.md, ARCHITECTURE.md and docs/*.md.
func docFiles(t *testing.T) []string {
	t.Helper()
	pages, err := filepath.Glob(filepath.Join(repo, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	out := []string{"README.md", "ARCHITECTURE.md"}
	for _, p := range pages {
		rel, err := filepath.Rel(repo, p)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, filepath.ToSlash(rel))
	}
	return out
}

func readLines(t *testing.T, rel string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repo, rel))
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	sc := bufio.NewScanner(strings.NewReader(string(b)))
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	return lines
}

var linkRE = regexp.MustCompile(`\[[^\]]*\]\(([^)\s]+)\)`)

// links returns the targets of the inline links of a page outside fenced
// code blocks, with their line numbers.
func links(lines []string) (targets []string, at []int) {
	fenced := false
	for i, l := range lines {
		if strings.HasPrefix(strings.TrimSpace(l), "```") {
			fenced = !fenced
			continue
		}
		if fenced {
			continue
		}
		for _, m := range linkRE.FindAllStringSubmatch(l, -1) {
			targets = append(targets, m[1])
			at = append(at, i+1)
		}
	}
	return targets, at
}

// anchors returns the heading anchors of a page as GitHub names them:
// lower case, letters, digits, '-' and '_' kept, spaces made '-', the rest
// dropped; a repeated heading gets -1, -2, ...
func anchors(lines []string) map[string]bool {
	out := map[string]bool{}
	seen := map[string]int{}
	fenced := false
	for _, l := range lines {
		if strings.HasPrefix(strings.TrimSpace(l), "```") {
			fenced = !fenced
			continue
		}
		if fenced || !strings.HasPrefix(l, "#") {
			continue
		}
		text := strings.TrimSpace(strings.TrimLeft(l, "#"))
		var b strings.Builder
		for _, r := range strings.ToLower(text) {
			switch {
			case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_':
				b.WriteRune(r)
			case r == ' ':
				b.WriteRune('-')
			}
		}
		a := b.String()
		if n := seen[a]; n > 0 {
			out[fmt.Sprintf("%s-%d", a, n)] = true
		} else {
			out[a] = true
		}
		seen[a]++
	}
	return out
}

// TestDocLinks: every relative link of README.md, ARCHITECTURE.md and
// docs/*.md names a file or directory of the repository, and an anchor
// into a Markdown page names one of its headings.
func TestDocLinks(t *testing.T) {
	for _, page := range docFiles(t) {
		lines := readLines(t, page)
		targets, at := links(lines)
		for i, target := range targets {
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			file, anchor, _ := strings.Cut(target, "#")
			rel := page
			if file != "" {
				rel = filepath.ToSlash(filepath.Join(filepath.Dir(page), file))
				if _, err := os.Stat(filepath.Join(repo, rel)); err != nil {
					t.Errorf("%s:%d: link %q: no such file %s", page, at[i], target, rel)
					continue
				}
			}
			if anchor != "" && strings.HasSuffix(rel, ".md") && !anchors(readLines(t, rel))[anchor] {
				t.Errorf("%s:%d: link %q: %s has no heading with anchor #%s", page, at[i], target, rel, anchor)
			}
		}
	}
}

// TestReadmeIsAFrontPage: README.md stays short and links every page of
// docs/, so none is left unreachable.
func TestReadmeIsAFrontPage(t *testing.T) {
	lines := readLines(t, "README.md")
	if len(lines) > readmeMaxLines {
		t.Errorf("README.md has %d lines, at most %d: move the detail to a page under docs/", len(lines), readmeMaxLines)
	}
	targets, _ := links(lines)
	for _, page := range docFiles(t)[2:] {
		if !slices.ContainsFunc(targets, func(l string) bool { f, _, _ := strings.Cut(l, "#"); return f == page }) {
			t.Errorf("README.md does not link %s: add it to the documentation list", page)
		}
	}
}

var codeRE = regexp.MustCompile("`([^`]+)`")

// TestArchitectureTable: the table "Who may import whom" of ARCHITECTURE.md
// says what rule and testOnly say, package by package. A row names one or
// more packages; its second cell what they may import ("nothing" when
// empty), its third what their own tests may import besides.
func TestArchitectureTable(t *testing.T) {
	lines := readLines(t, "ARCHITECTURE.md")
	start := slices.Index(lines, "## Who may import whom")
	if start < 0 {
		t.Fatal("ARCHITECTURE.md has no section \"## Who may import whom\"")
	}
	type row struct {
		line        int
		imp, tested []string
	}
	table := map[string]row{}
	rows := 0
	for i := start + 1; i < len(lines) && !strings.HasPrefix(lines[i], "## "); i++ {
		l := strings.TrimSpace(lines[i])
		if !strings.HasPrefix(l, "|") || strings.HasPrefix(l, "|---") {
			continue
		}
		cells := strings.Split(strings.Trim(l, "|"), "|")
		if len(cells) != 3 {
			t.Errorf("ARCHITECTURE.md:%d: want 3 cells (package, may import, its tests may also import), got %d", i+1, len(cells))
			continue
		}
		if rows++; rows == 1 {
			continue // the header
		}
		code := func(cell string) []string {
			var out []string
			for _, m := range codeRE.FindAllStringSubmatch(cell, -1) {
				out = append(out, m[1])
			}
			slices.Sort(out)
			return out
		}
		r := row{line: i + 1, imp: code(cells[1]), tested: code(cells[2])}
		for _, pkg := range code(cells[0]) {
			if first, dup := table[pkg]; dup {
				t.Errorf("ARCHITECTURE.md:%d: %s is already in the table at line %d", i+1, pkg, first.line)
			}
			table[pkg] = r
		}
	}
	sorted := func(s []string) []string { s = slices.Clone(s); slices.Sort(s); return s }
	for pkg, want := range rule {
		got, ok := table[pkg]
		if !ok {
			t.Errorf("ARCHITECTURE.md: no row for %s (the rule: %v)", pkg, sorted(want))
			continue
		}
		if !slices.Equal(got.imp, sorted(want)) {
			t.Errorf("ARCHITECTURE.md:%d: %s may import %v, the rule says %v", got.line, pkg, got.imp, sorted(want))
		}
		if !slices.Equal(got.tested, sorted(testOnly[pkg])) {
			t.Errorf("ARCHITECTURE.md:%d: %s's tests may also import %v, testOnly says %v", got.line, pkg, got.tested, sorted(testOnly[pkg]))
		}
	}
	for pkg, got := range table {
		if _, ok := rule[pkg]; ok {
			continue
		}
		extra, ok := testOnly[pkg]
		switch {
		case !ok:
			t.Errorf("ARCHITECTURE.md:%d: %s is in neither rule nor testOnly", got.line, pkg)
		case len(got.imp) > 0:
			t.Errorf("ARCHITECTURE.md:%d: %s has no rule, only a testOnly allowance: leave its second cell empty", got.line, pkg)
		case !slices.Equal(got.tested, sorted(extra)):
			t.Errorf("ARCHITECTURE.md:%d: %s's tests may also import %v, testOnly says %v", got.line, pkg, got.tested, sorted(extra))
		}
	}
	for pkg := range testOnly {
		if _, ok := table[pkg]; !ok {
			t.Errorf("ARCHITECTURE.md: no row for %s's test allowance %v", pkg, sorted(testOnly[pkg]))
		}
	}
}

// TestArchitectureSteps holds ARCHITECTURE.md's "One window" list to the
// code: its numbered steps name, in order, the steps attempt.execute runs
// and then checkAfter, as Runner.Run calls them.
func TestArchitectureSteps(t *testing.T) {
	src, err := os.ReadFile(filepath.Join(repo, "windows", "runner", "runner.go"))
	if err != nil {
		t.Fatal(err)
	}
	body := string(src)
	start := strings.Index(body, "func (x *attempt) execute() bool {")
	if start < 0 {
		t.Fatal("no attempt.execute in windows/runner/runner.go")
	}
	end := strings.Index(body[start:], "\n}\n")
	var code []string
	for _, m := range regexp.MustCompile(`x\.(\w+)\(\)`).FindAllStringSubmatch(body[start:start+end], -1) {
		if !slices.Contains(code, m[1]) && m[1] != "removeDecoys" && m[1] != "closeDriver" {
			code = append(code, m[1])
		}
	}
	if !strings.Contains(body, "x.checkAfter()") {
		t.Fatal("Runner.Run no longer calls checkAfter")
	}
	code = append(code, "checkAfter")

	doc, err := os.ReadFile(filepath.Join(repo, "ARCHITECTURE.md"))
	if err != nil {
		t.Fatal(err)
	}
	d := string(doc)
	i := strings.Index(d, "## One window\n")
	j := strings.Index(d[i+1:], "\n## ")
	if i < 0 || j < 0 {
		t.Fatal(`ARCHITECTURE.md has no "## One window" section`)
	}
	var listed []string
	for _, m := range regexp.MustCompile("(?m)^\\d+\\. `(\\w+)`").FindAllStringSubmatch(d[i:i+1+j], -1) {
		listed = append(listed, m[1])
	}
	if !slices.Equal(listed, code) {
		t.Errorf("ARCHITECTURE.md's steps are %q; Runner.Run runs %q", listed, code)
	}
}
