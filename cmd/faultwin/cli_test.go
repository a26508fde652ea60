package main

import (
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"strings"
	"testing"
)

// Every verb: -h and --help print its usage (synopsis, what it does, its
// flags) to stdout and succeed; so does `faultwin help VERB`.
func TestEveryVerbHelp(t *testing.T) {
	for name := range verbs() {
		for _, args := range [][]string{{name, "-h"}, {name, "--help"}, {"help", name}} {
			out, code, err := runVerb(t, args...)
			if code != 0 || err != nil {
				t.Errorf("%v: exit %d (%v), want 0", args, code, err)
			}
			if !strings.HasPrefix(out, "usage: faultwin "+name) {
				t.Errorf("%v: usage does not start with its synopsis:\n%s", args, out)
			}
			if !strings.Contains(out, "Exit status") || !strings.Contains(out, "64") {
				t.Errorf("%v: usage does not give the exit status:\n%s", args, out)
			}
			// More than the synopsis: what the verb does.
			if lines := strings.Count(strings.TrimSpace(out), "\n"); lines < 5 {
				t.Errorf("%v: %d lines of usage:\n%s", args, lines+1, out)
			}
			if name != "replay" && name != "compact" && name != "lint" && !regexp.MustCompile(`(?m)^Flags:\n  -`).MatchString(out) {
				t.Errorf("%v: no flags listed:\n%s", args, out)
			}
		}
	}
}

// A usage error exits 64, apart from FAIL (1), INVALID (2) and ERROR (3),
// names the verb and says where its usage is.
func TestEveryVerbBadFlag(t *testing.T) {
	for name := range verbs() {
		out, code, err := runVerb(t, name, "--no-such-flag")
		if code != exitUsage || err == nil {
			t.Fatalf("%s --no-such-flag: exit %d (%v), want %d", name, code, err, exitUsage)
		}
		if msg := err.Error(); !strings.HasPrefix(msg, name+": ") || !strings.Contains(msg, "no-such-flag") || !strings.HasSuffix(msg, "run `faultwin "+name+" -h`") {
			t.Errorf("%s: message %q", name, msg)
		}
		if out != "" {
			t.Errorf("%s: a usage error printed to stdout:\n%s", name, out)
		}
	}
}

func TestUsageErrors(t *testing.T) {
	dir := t.TempDir()
	rowsFile, _ := fixtureFile(t, dir, "run.jsonl", passIn("W3_30"))
	for _, args := range [][]string{
		{},
		{"frobnicate"},
		{"help", "frobnicate"},
		{"help", "run", "soak"},
		{"run", "extra"},
		{"run", "--windows", filepath.Join(dir, "none")},
		{"run", "--windows", "../../windows/refsup", "--label-filter", "(("},
		{"soak", "-n", "x"},
		{"soak", "-n", "0"},
		{"soak", "extra"},
		{"soak", "--shard", "3/2"},
		{"explore"},
		{"explore", "--family", "W3", "--from", "0"},
		{"explore", "--family", "NOPE", "--windows", "../../windows/refsup"},
		{"doctor", "extra"},
		{"hostcheck", "extra"},
		{"sweep", "extra"},
		{"replay"},
		{"report", "--format", "pdf", rowsFile},
		{"report", "--compare", rowsFile},
		{"seal", rowsFile},
		{"seal", "--unfinished", rowsFile},
		{"seal", "--unfinished", "--reason", "x"},
		{"merge"},
		{"sign", rowsFile},
		{"sign", "--key", "k"},
		{"replay", "--require-signed", rowsFile},
		{"merge", "--require-signed", rowsFile},
		{"compact", rowsFile},
		{"rows"},
		{"rows", "--status", "flaky", rowsFile},
		{"rows", "--criterion", "Z9", rowsFile},
		{"soak", "--prom", "x.prom"},
		{"soak", "--summary", "--prom", "-", rowsFile},
		{"merge", "--prom", "-", rowsFile},
		{"report", "--format", "md", "--out", filepath.Join(dir, "r.html"), rowsFile},
	} {
		_, code, err := runVerb(t, args...)
		if code != exitUsage {
			t.Errorf("%q: exit %d (%v), want %d", args, code, err, exitUsage)
			continue
		}
		want := "run `faultwin -h`"
		if len(args) > 0 && args[0] != "help" && verbs()[args[0]].run != nil {
			want = "run `faultwin " + args[0] + " -h`"
		}
		if !strings.HasSuffix(err.Error(), want) {
			t.Errorf("%q: %q does not end in %q", args, err, want)
		}
	}
}

// faultwin -h lists every verb and the exit codes.
func TestTopLevelUsage(t *testing.T) {
	for _, args := range [][]string{{"-h"}, {"--help"}, {"help"}} {
		out, code, err := runVerb(t, args...)
		if code != 0 {
			t.Fatalf("%v: exit %d (%v)", args, code, err)
		}
		for name := range verbs() {
			if !regexp.MustCompile(`(?m)^  ` + name + ` `).MatchString(out) {
				t.Errorf("%v: verb %s not listed:\n%s", args, name, out)
			}
		}
		for _, code := range []string{"0", "1", "2", "3", "64"} {
			if !regexp.MustCompile(`(?m)^  ` + code + ` +\S`).MatchString(out) {
				t.Errorf("%v: exit code %s not explained:\n%s", args, code, out)
			}
		}
	}
}

// The same file gets the same answer from every verb that judges rows: a
// rows file that is empty, or a path that does not exist, holds no
// evidence, and replay, report and soak --summary refuse it alike, with
// one message naming it.
func TestNoEvidenceSameAnswer(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.jsonl")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	emptyGz := filepath.Join(dir, "empty.jsonl.gz")
	if err := os.WriteFile(emptyGz, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	// A compact file of an empty gzip stream: not 0 bytes, it reads and
	// verifies, and holds no row.
	var gz bytes.Buffer
	gzip.NewWriter(&gz).Close()
	noRow := filepath.Join(t.TempDir(), "norow.jsonl.gz")
	if err := os.WriteFile(noRow, gz.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	good, _ := fixtureFile(t, t.TempDir(), "good.jsonl", passIn("W3_30"))
	emptyDir := t.TempDir()
	for _, c := range []struct {
		name string
		args []string
		want string
		read bool // refused after reading the file (its table may be printed)
	}{
		{"empty file", []string{empty}, empty + " is empty (0 bytes), so it holds no row: no evidence to judge", false},
		{"empty compact file", []string{emptyGz}, emptyGz + " is empty (0 bytes), so it holds no row: no evidence to judge", false},
		{"empty file beside a good one", []string{good, empty}, empty + " is empty (0 bytes)", false},
		{"directory holding an empty file", []string{dir}, empty + " is empty (0 bytes)", false},
		{"missing file", []string{filepath.Join(dir, "missing.jsonl")}, filepath.Join(dir, "missing.jsonl") + " does not exist: no evidence to judge", false},
		{"directory without rows files", []string{emptyDir}, emptyDir + " is a directory with no *.jsonl files", false},
		{"file with no row", []string{noRow}, noRow + " verifies but holds no row: no evidence to judge", true},
	} {
		var msgs []string
		for _, verb := range [][]string{{"replay"}, {"report", "--out", filepath.Join(t.TempDir(), "r.md")}, {"soak", "--summary"}} {
			out, code, err := runVerb(t, append(verb, c.args...)...)
			if code != exitUsage {
				t.Errorf("%s: %s: exit %d (%v), want %d", c.name, verb[0], code, err, exitUsage)
				continue
			}
			msg := err.Error()
			if !strings.Contains(msg, c.want) || !strings.HasPrefix(msg, verb[0]+": ") || !strings.HasSuffix(msg, "run `faultwin "+verb[0]+" -h`") {
				t.Errorf("%s: %s: %q lacks %q", c.name, verb[0], msg, c.want)
			}
			if out != "" && !c.read {
				t.Errorf("%s: %s printed before refusing:\n%s", c.name, verb[0], out)
			}
			if verb[0] == "report" {
				if _, err := os.Stat(verb[2]); !os.IsNotExist(err) {
					t.Errorf("%s: report wrote %s", c.name, verb[2])
				}
			}
			_, rest, _ := strings.Cut(msg, ": ")
			rest = strings.TrimSuffix(rest, "run `faultwin "+verb[0]+" -h`")
			msgs = append(msgs, rest)
		}
		for _, m := range msgs[1:] {
			if m != msgs[0] {
				t.Errorf("%s: the verbs say it differently: %q", c.name, msgs)
				break
			}
		}
	}
}

// run and soak read DIR/*.yaml only, and say so: the windows under its
// subdirectories (each supervisor's, under windows/) are named as not run,
// with how to run them.
func TestRunNamesWindowsLeftOut(t *testing.T) {
	left := leftOut("../../windows")
	for _, want := range []string{"NOT RUN: the windows under ", "../../windows/podman (", "driver podman)", "../../windows/containerd (", "driver containerd, containerd-cri)", "--windows naming it"} {
		if !strings.Contains(left, want) {
			t.Errorf("leftOut(windows) = %q, lacks %q", left, want)
		}
	}
	podman := regexp.MustCompile(`windows/podman \((\d+) windows`).FindStringSubmatch(left)
	if podman == nil || podman[1] == "0" {
		t.Errorf("leftOut(windows) = %q: no count of the podman windows", left)
	}
	if l := leftOut("../../windows/podman"); l != "" {
		t.Errorf("leftOut(windows/podman) = %q, want nothing (expected/ holds no window definitions)", l)
	}

	// A subdirectory of other YAML (the podman suite's expected/) is no
	// window left out.
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "expected"), 0o755)
	os.WriteFile(filepath.Join(dir, "expected", "outcomes.yaml"), []byte("PR1_50: [PASS]\n"), 0o644)
	if l := leftOut(dir); l != "" {
		t.Errorf("leftOut with a subdirectory of other YAML = %q, want nothing", l)
	}

	// Both verbs print it before anything runs (here the refsup binary is
	// missing, so nothing does), for a directory of windows of its own with
	// a suite under it.
	mixed := t.TempDir()
	copyYAML(t, "../../windows/refsup", mixed)
	copyYAML(t, "../../windows/podman", filepath.Join(mixed, "podman"))
	missing := filepath.Join(t.TempDir(), "refsup")
	for _, v := range []string{"run", "soak"} {
		out, _, err := runVerb(t, v, "--windows", mixed, "--refsup", missing, "--results", filepath.Join(t.TempDir(), "x.jsonl"))
		if err == nil {
			t.Fatalf("%s ran with no refsup binary", v)
		}
		if !strings.Contains(out, v+": NOT RUN: the windows under ") || !strings.Contains(out, filepath.Join(mixed, "podman")+" (") || !regexp.MustCompile(v+`: \d+ of the \d+ windows of .*/\*\.yaml`).MatchString(out) {
			t.Errorf("%s does not say what it runs and leaves out:\n%s", v, out)
		}
	}

	// windows/ itself holds no definitions, only suites: refused, naming
	// each, before anything runs.
	for _, v := range []string{"run", "soak"} {
		_, code, err := runVerb(t, v, "--windows", "../../windows", "--refsup", missing)
		if code != exitUsage || err == nil || !strings.Contains(err.Error(), "no window definitions of its own") ||
			!regexp.MustCompile(`\.\./\.\./windows/refsup \(\d+ windows, driver refsup\)`).MatchString(err.Error()) {
			t.Errorf("%s --windows windows: exit %d, %v; want a usage error naming windows/refsup", v, code, err)
		}
	}
}

// copyYAML copies the *.yaml files of from into to.
func copyYAML(t *testing.T, from, to string) {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(from, "*.yaml"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no definitions in %s: %v", from, err)
	}
	if err := os.MkdirAll(to, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(to, filepath.Base(p)), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// Flags may follow the files they apply to, "--" ends the flags, and
// --version names the build.
func TestFlagsAnywhereAndVersion(t *testing.T) {
	path, _ := fixtureFile(t, t.TempDir(), "run.jsonl", passIn("W3_30"))
	before, code1, _ := runVerb(t, "rows", "--brief", path)
	after, code2, _ := runVerb(t, "rows", path, "--brief")
	if code1 != 0 || code2 != 0 || before != after || !strings.HasPrefix(after, "W3_30 PASS") {
		t.Errorf("a flag after the file: exit %d %d:\n%s\nvs\n%s", code1, code2, before, after)
	}
	if _, code, err := runVerb(t, "rows", path, "--", "--brief"); code != exitUsage || err == nil || !strings.Contains(err.Error(), "--brief") {
		t.Errorf("after --, --brief is a path: exit %d (%v)", code, err)
	}
	// The two a reviewer met: --out after the directory writes the report,
	// --signers after the file is the signers file, not a rows file.
	html := filepath.Join(t.TempDir(), "r.html")
	if _, code, err := runVerb(t, "report", filepath.Dir(path), "--out", html); code != 0 {
		t.Errorf("report DIR --out r.html: exit %d (%v)", code, err)
	} else if st, err := os.Stat(html); err != nil || st.Size() == 0 {
		t.Errorf("report DIR --out r.html wrote nothing: %v", err)
	}
	signers := filepath.Join(t.TempDir(), "allowed_signers")
	if _, code, err := runVerb(t, "replay", path, "--signers", signers); err == nil || strings.Contains(err.Error(), "--signers does not exist") || !strings.Contains(err.Error(), signers) {
		t.Errorf("replay F --signers X: exit %d (%v); want the signers file named, not --signers taken for a file", code, err)
	}
	out, code, _ := runVerb(t, "--version")
	if code != 0 || !strings.HasPrefix(out, "faultwin ") {
		t.Errorf("--version: exit %d: %q", code, out)
	}
}

// --version says the commit go build stamped, and a changed tree.
func TestVersionOf(t *testing.T) {
	bi := &debug.BuildInfo{GoVersion: "go1.26.8", Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "abc123"}, {Key: "vcs.modified", Value: "true"}}}
	if got := versionOf(bi); got != "faultwin abc123-dirty go1.26.8" {
		t.Errorf("%q", got)
	}
	bi.Settings[1].Value = "false"
	if got := versionOf(bi); got != "faultwin abc123 go1.26.8" {
		t.Errorf("%q", got)
	}
	if got := versionOf(&debug.BuildInfo{GoVersion: "go1.26.8"}); !strings.Contains(got, "without version control") {
		t.Errorf("%q", got)
	}
}
