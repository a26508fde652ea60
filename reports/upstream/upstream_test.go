package upstream

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const root = "../.."

// page is a minimal page citing a checked-in transcript; body is its form.
func page(form string) []byte {
	return []byte(`---
finding: t
project: o/p
tracker: https://example.org/new
route: public tracker
title: a title
transcripts:
  - name: tr
    path: docs/findings/transcripts/runc-restore-delete-rootfs-debian-1.1.5.txt
    label: a run
    versions: "runc:"
form:
` + form + `---

<!-- hand-written below: faultwin findings --upstream keeps it as it is -->
kept as it is
`)
}

func TestRenderFillsCountsAndKeepsTheTail(t *testing.T) {
	out, err := Render(root, page("  - label: Received\n    text: \"reproduced in {{tr}} runs\"\n    gen: [transcripts, versions, host-kernel]\n"))
	if err != nil {
		t.Fatal(err)
	}
	s := string(out)
	for _, want := range []string{"reproduced in 10 of 10 runs", "| **10/10** |", "runc version 1.1.5+ds1", "Linux vm 6.18.44", "\nkept as it is\n"} {
		if !strings.Contains(s, want) {
			t.Errorf("rendered page lacks %q", want)
		}
	}
	again, err := Render(root, out)
	if err != nil || string(again) != s {
		t.Errorf("rendering a rendered page changed it (err %v)", err)
	}
}

func TestRenderRefuses(t *testing.T) {
	for name, form := range map[string]string{
		"a count by hand":     "  - label: X\n    text: reproduced 10 of 10 times\n",
		"a k/N by hand":       "  - label: X\n    text: reproduced 10/10\n",
		"a criterion id":      "  - label: X\n    text: U1 graded it\n",
		"the harness's words": "  - label: X\n    text: the rows show it\n",
		"an unknown count":    "  - label: X\n    text: \"{{nope}}\"\n",
		"an unknown part":     "  - label: X\n    gen: [nope]\n",
	} {
		if _, err := Render(root, page(form)); err == nil {
			t.Errorf("%s: rendered", name)
		}
	}
	gone := strings.Replace(string(page("  - label: X\n    gen: [figures]\n")), "transcripts:", `figures:
  - name: f
    file: results/podman/no-such-file.jsonl.gz
    label: gone
    windows: [{id: PRL22, what: x}]
    columns: [{name: c, label: c}]
transcripts:`, 1)
	if _, err := Render(root, []byte(gone)); err == nil || !strings.Contains(err.Error(), "no-such-file") {
		t.Errorf("a figure citing a file that is gone rendered (err %v)", err)
	}
	noWindow := strings.Replace(gone, "no-such-file", "soak-10-a73a452", 1)
	noWindow = strings.Replace(noWindow, "PRL22", "NOPE9", 1)
	if _, err := Render(root, []byte(noWindow)); err == nil || !strings.Contains(err.Error(), "NOPE9") {
		t.Errorf("a figure citing a window its file does not have rendered (err %v)", err)
	}
}

// TestFigureCountsMoreFiles: a figure's more: files are counted with its
// file as one (a soak's passes written to files of their own), and one of
// them gone is an error naming it.
func TestFigureCountsMoreFiles(t *testing.T) {
	fig := func(more string) []byte {
		return []byte(strings.Replace(string(page("  - label: X\n    gen: [figures]\n")), "transcripts:", `figures:
  - name: f
    file: results/podman/soak-10-a73a452.jsonl.gz
    driver: podman
`+more+`    label: counted
    windows: [{id: PRL22, what: x}]
    columns: [{name: c, label: c}]
transcripts:`, 1))
	}
	one, err := Render(root, fig(""))
	if err != nil {
		t.Fatal(err)
	}
	two, err := Render(root, fig("    more: [results/podman/soak-10-a73a452.jsonl.gz]\n"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(one), "| x | 10/10 |") || !strings.Contains(string(two), "| x | 20/20 |") {
		t.Errorf("the same file counted once and twice:\n%s\n%s", one, two)
	}
	if _, err := Render(root, fig("    more: [results/podman/no-such-pass.jsonl.gz]\n")); err == nil || !strings.Contains(err.Error(), "no-such-pass") {
		t.Errorf("a more: file that is gone rendered (err %v)", err)
	}
}

// TestTranscriptShowsTheFirstRunThatReproduced: when a script run once per
// run did not reproduce on its first run, the excerpt shows the first run
// that did as well.
func TestTranscriptShowsTheFirstRunThatReproduced(t *testing.T) {
	dir := t.TempDir()
	tr := "$ for i in $(seq 3); do s.sh; done\n# host: Linux h; Debian; cgroup v2\nversions:\n  tool 1.0\n" +
		"NOT REPRODUCED: missed\nrun 1: exit 1\nwhat it waited on\nREPRODUCED: caught\nrun 2: exit 0\nREPRODUCED: again\nrun 3: exit 0\nreproduced 2/3 (could not set up: 0)\n"
	if err := os.WriteFile(filepath.Join(dir, "t.txt"), []byte(tr), 0o644); err != nil {
		t.Fatal(err)
	}
	pg := strings.Replace(string(page("  - label: X\n    gen: [transcripts]\n")), "docs/findings/transcripts/runc-restore-delete-rootfs-debian-1.1.5.txt", "t.txt", 1)
	pg = strings.Replace(pg, `versions: "runc:"`, `versions: "versions:"`, 1)
	out, err := Render(dir, []byte(pg))
	if err != nil {
		t.Fatal(err)
	}
	want := "versions:\n  tool 1.0\nNOT REPRODUCED: missed\nrun 1: exit 1\n...\nwhat it waited on\nREPRODUCED: caught\nrun 2: exit 0\n...\nreproduced 2/3"
	if !strings.Contains(string(out), want) {
		t.Errorf("the excerpt lacks the first run that reproduced; want\n%s\nin\n%s", want, out)
	}
}

// TestSameAsPrintsVersionsOnce: a transcript run with the same tools as an
// earlier one (same_as) does not print its versions a second time.
func TestSameAsPrintsVersionsOnce(t *testing.T) {
	pg := strings.Replace(string(page("  - label: X\n    gen: [transcripts, versions]\n")), "form:", `  - name: again
    path: docs/findings/transcripts/runc-restore-delete-rootfs-debian-1.1.5.txt
    label: the same again
    same_as: tr
form:`, 1)
	out, err := Render(root, []byte(pg))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(out), ", as the script printed it:"); n != 1 {
		t.Errorf("versions printed %d times, want once:\n%s", n, out)
	}
	bad := strings.Replace(pg, "same_as: tr", "same_as: nope", 1)
	if _, err := Render(root, []byte(bad)); err == nil || !strings.Contains(err.Error(), "nope") {
		t.Errorf("same_as naming no transcript rendered (err %v)", err)
	}
}
