package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"faultwin/reports/review"
	"faultwin/reports/upstream"
)

// TestUpstreamPagesAgree regenerates every finding page under
// docs/findings, each written by `faultwin findings --upstream`, and fails
// when a page has no front matter (it is not generated, so nothing holds
// it to its rows), or a page and what it cites disagree: a count, a
// version or a host fact the rows no longer give, a transcript or rows
// file that is gone, or a cited rows file that does not replay as
// recorded.
func TestUpstreamPagesAgree(t *testing.T) {
	repo := filepath.Join("..", "..")
	pages, _ := filepath.Glob(filepath.Join(repo, "docs", "findings", "*.md"))
	cited := map[string]bool{}
	for _, p := range pages {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if !upstream.HasFrontMatter(b) {
			t.Errorf("%s has no front matter: every finding page is rendered by `faultwin findings --upstream %s --write` "+
				"from a front matter naming the rows and transcripts it counts (see docs/findings/runc-restore-delete-rootfs.md)",
				p, strings.TrimSuffix(filepath.Base(p), ".md"))
			continue
		}
		got, err := upstream.Render(repo, b)
		if err != nil {
			t.Errorf("%s: %v", p, err)
			continue
		}
		if !bytes.Equal(got, b) {
			t.Errorf("%s disagrees with what it cites: run `faultwin findings --upstream %s --write` and read the diff\n%s",
				p, strings.TrimSuffix(filepath.Base(p), ".md"), firstDiff(string(b), string(got)))
		}
		for _, f := range upstream.CitedRows(b) {
			cited[filepath.Join(repo, f)] = true
		}
	}
	if len(pages) == 0 {
		t.Fatalf("no finding page under %s", filepath.Join(repo, "docs", "findings"))
	}
	var paths []string
	for p := range cited {
		paths = append(paths, p)
	}
	for _, f := range review.ReplayFiles(paths, false) {
		if !f.OK() {
			t.Errorf("%s, cited by a finding page, does not replay as recorded (faultwin replay %s)", f.Path, f.Path)
		}
	}
}

// firstDiff shows the first line where two texts differ.
func firstDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < len(w) || i < len(g); i++ {
		var a, b string
		if i < len(w) {
			a = w[i]
		}
		if i < len(g) {
			b = g[i]
		}
		if a != b {
			return "line " + itoa(i+1) + ":\n  page:     " + a + "\n  rendered: " + b
		}
	}
	return ""
}

func itoa(i int) string { return strconv.Itoa(i) }
