package gitcmd

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func gitRepo(t *testing.T) (dir string, git func(args ...string) string) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatal("git is required (provenance and registration run it): install it with make deps")
	}
	dir = t.TempDir()
	git = func(args ...string) string {
		t.Helper()
		out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	git("init", "-q", "-b", "main")
	git("config", "user.name", "test")
	git("config", "user.email", "test@example.invalid")
	git("config", "commit.gpgsign", "false")
	return dir, git
}

func write(t *testing.T, path, text string) {
	t.Helper()
	os.MkdirAll(filepath.Dir(path), 0o755)
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestGitCommit(t *testing.T) {
	dir, git := gitRepo(t)
	if _, _, err := Commit(dir); err == nil || !strings.Contains(err.Error(), "commit of") {
		t.Fatalf("no commits yet: %v", err)
	}
	write(t, filepath.Join(dir, "a.go"), "package a\n")
	write(t, filepath.Join(dir, "results", "r.jsonl"), "{}\n")
	write(t, filepath.Join(dir, ".gitignore"), "/out/\n")
	git("add", "-A")
	git("commit", "-q", "-m", "one")
	head := git("rev-parse", "HEAD")

	expect := func(what string, wantDirty bool, ignore ...string) {
		t.Helper()
		c, dirty, err := Commit(filepath.Join(dir, "results"), ignore...) // from a subdirectory
		if err != nil || c != head || dirty != wantDirty {
			t.Errorf("%s: got (%.8s, %v, %v), want (%.8s, %v)", what, c, dirty, err, head, wantDirty)
		}
	}
	expect("clean", false)
	write(t, filepath.Join(dir, "out", "x"), "ignored by .gitignore")
	expect("ignored file", false)
	write(t, filepath.Join(dir, "results", "r.jsonl"), "{}\n{}\n")
	expect("appended results", true)
	expect("appended results, ignored", false, "results")
	write(t, filepath.Join(dir, "b.go"), "package a\n")
	expect("untracked source", true, "results")
	os.Remove(filepath.Join(dir, "b.go"))
	write(t, filepath.Join(dir, "a.go"), "package a // changed\n")
	expect("modified source", true, "results")
	git("add", "a.go")
	expect("staged source", true, "results")
}

func TestGitCommitNotARepo(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatal("git is required (provenance and registration run it): install it with make deps")
	}
	dir := t.TempDir()
	t.Setenv("GIT_CEILING_DIRECTORIES", filepath.Dir(dir))
	if _, _, err := Commit(dir); err == nil || !strings.Contains(err.Error(), "not a git repository") {
		t.Fatalf("got %v", err)
	}
}
