package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"faultwin/internal/hosttest"
)

// tutorial is the page a newcomer follows from an empty directory to a
// soak's rows; its sh blocks are what TestTutorialCommands runs.
const tutorial = "../../docs/describe-a-supervisor.md"

// tutorialBlocks are the page's ```sh blocks, in order.
func tutorialBlocks(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile(tutorial)
	if err != nil {
		t.Fatal(err)
	}
	var blocks []string
	var cur []string
	in := false
	for _, l := range strings.Split(string(b), "\n") {
		switch {
		case !in && l == "```sh":
			in, cur = true, nil
		case in && l == "```":
			in = false
			blocks = append(blocks, strings.Join(cur, "\n"))
		case in:
			cur = append(cur, l)
		}
	}
	if in {
		t.Fatalf("%s: an sh block is not closed", tutorial)
	}
	return blocks
}

// setsFW is the line of the page that says where the checkout is: the
// test says it instead.
var setsFW = regexp.MustCompile(`^FW=`)

// The page's commands name verbs that exist, and every step a newcomer
// needs is among them, in order: from an empty directory to expect.
func TestTutorialBlocks(t *testing.T) {
	blocks := tutorialBlocks(t)
	if len(blocks) < 8 {
		t.Fatalf("%d sh blocks in %s: the page's commands are its sh blocks", len(blocks), tutorial)
	}
	script := strings.Join(blocks, "\n")
	verb := regexp.MustCompile(`(?m)^faultwin ([a-z]+)`)
	for _, m := range verb.FindAllStringSubmatch(script, -1) {
		if _, ok := verbs()[m[1]]; !ok && m[1] != "help" {
			t.Errorf("the page runs faultwin %s, which is no verb", m[1])
		}
	}
	at := -1
	for _, step := range []string{"mkdir mysup", "git init", "faultwin lint mysup.yaml", "faultwin doctor", "faultwin try", "windows/mysup/rm.yaml",
		"faultwin run", "faultwin rows", "git commit", "faultwin soak", "faultwin findings", "faultwin expect"} {
		i := strings.Index(script, step)
		if i < 0 || i < at {
			t.Errorf("%q is missing from the page's commands, or comes before the step it needs", step)
		}
		at = max(at, i)
	}
	for _, b := range blocks {
		for _, l := range strings.Split(b, "\n") {
			if strings.HasPrefix(l, "sudo ") || strings.Contains(l, "bin/faultwin") {
				t.Errorf("%q: the page's commands run as root with faultwin on PATH, as it says", l)
			}
		}
	}
}

// Every command of the page, in order, from a directory outside the
// repository, as a newcomer types them: the worked example's description,
// lint, doctor, try, a window, a run, the commit, a soak with controls,
// findings and expect. The host is clean after it.
func TestTutorialCommands(t *testing.T) {
	hosttest.Need(t, "runs the page's worked example, a real supervisor")
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "bin", "faultwin")); err != nil {
		t.Fatalf("no bin/faultwin (make build): %v", err)
	}
	var lines []string
	for _, b := range tutorialBlocks(t) {
		for _, l := range strings.Split(b, "\n") {
			if !setsFW.MatchString(l) {
				lines = append(lines, l)
			}
		}
	}
	dir := t.TempDir()
	log := filepath.Join(dir, "tutorial.log")
	cmd := exec.Command("/bin/bash", "-c", "set -euo pipefail -x\n"+strings.Join(lines, "\n")+"\n")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "FW="+root, "GIT_AUTHOR_NAME=faultwin tutorial", "GIT_AUTHOR_EMAIL=tutorial@localhost",
		"GIT_COMMITTER_NAME=faultwin tutorial", "GIT_COMMITTER_EMAIL=tutorial@localhost")
	f, err := os.Create(log)
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = f, f
	err = cmd.Run()
	f.Close()
	out, _ := os.ReadFile(log)
	if err != nil {
		t.Fatalf("the page's commands stopped: %v\n%s", err, tail(string(out), 80))
	}
	// run and soak exit 1 on a FAIL and 2 on an INVALID, which the page
	// prints and goes on; 3 and up is the harness's error or a usage error.
	if m := regexp.MustCompile(`(?m)^(run|soak|summary): exit ([3-9]|[1-9][0-9]+)$`).FindString(string(out)); m != "" {
		t.Errorf("%s:\n%s", m, tail(string(out), 80))
	}
	for _, want := range []string{"mysup/windows/mysup/expected/outcomes.yaml", "mysup/out/first.jsonl"} {
		if _, err := os.Stat(filepath.Join(dir, want)); err != nil {
			t.Errorf("the page's commands made no %s: %v", want, err)
		}
	}
	if soaks, _ := filepath.Glob(filepath.Join(dir, "mysup/results/mysup/soak-3-*.jsonl")); len(soaks) != 1 {
		t.Errorf("soak rows: %v", soaks)
	}
	if out, code, err := runVerb(t, "hostcheck"); code != 0 {
		t.Errorf("host not clean after the page's commands: %v\n%s", err, out)
	}
	t.Logf("%s", tail(string(out), 40))
}

// tail is the last n lines of s.
func tail(s string, n int) string {
	l := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(l[max(0, len(l)-n):], "\n")
}
