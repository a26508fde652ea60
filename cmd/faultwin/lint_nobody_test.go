package main

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// lintChildEnv names, in the child the test starts as nobody, the copy of
// the files it lints.
const lintChildEnv = "FAULTWIN_LINT_AS_NOBODY"

// nobody is the unprivileged user lint runs as.
const nobody = 65534

// TestLintAsAnUnprivilegedUser: lint needs no root. As root, the test
// copies the shipped descriptions and windows and the broken corpus to a
// directory anyone can read, and runs itself there as nobody; as any
// other user it lints the files where they are.
func TestLintAsAnUnprivilegedUser(t *testing.T) {
	if dir := os.Getenv(lintChildEnv); dir != "" {
		if os.Geteuid() == 0 {
			t.Fatal("the child meant to run as nobody runs as root")
		}
		lintAll(t, filepath.Join(dir, "supervisors"), filepath.Join(dir, "windows"), filepath.Join(dir, "broken"), filepath.Join(dir, "variants"))
		return
	}
	if os.Geteuid() != 0 {
		lintAll(t, "../../drivers/described/supervisors", "../../windows", "testdata/lint", "../../drivers/described/variants")
		return
	}
	dir, err := os.MkdirTemp("", "faultwin-lint-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	for src, dst := range map[string]string{"../../drivers/described/supervisors": "supervisors", "../../windows": "windows", "testdata/lint": "broken", "../../drivers/described/variants": "variants"} {
		copyReadable(t, src, filepath.Join(dir, dst))
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "faultwin.test")
	copyFile(t, self, bin, 0o755)
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-test.run", "^TestLintAsAnUnprivilegedUser$", "-test.v", "-test.count=1")
	cmd.Dir = dir
	cmd.Env = []string{lintChildEnv + "=" + dir, "HOME=" + dir, "PATH=/usr/bin:/bin"}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: TestLintAsAnUnprivilegedUser") {
		t.Fatalf("lint as nobody (uid %d): %v\n%s", nobody, err, out)
	}
}

// lintAll: every shipped file passes, and the broken corpus fails with
// each problem at its file, line and field.
func lintAll(t *testing.T, supervisors, windows, broken, variants string) {
	t.Helper()
	if out, code, err := runVerb(t, "lint", supervisors, windows, variants); code != 0 || !strings.Contains(out, "no problem") {
		t.Fatalf("the shipped files: exit %d (%v):\n%s", code, err, out)
	}
	out, code, err := runVerb(t, "lint", broken)
	if code != exitFail || err == nil || !strings.Contains(err.Error(), "lint: 5 problems in 4 files") {
		t.Fatalf("the broken corpus: exit %d (%v):\n%s", code, err, out)
	}
	if !strings.Contains(out, "broken.yaml:4: timeout_ms: `30s` is a string") {
		t.Errorf("the broken corpus's problems lack their file, line and field:\n%s", out)
	}
}

func copyReadable(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		to := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(to, 0o755)
		}
		if strings.HasSuffix(p, ".go") {
			return nil
		}
		copyFile(t, p, to, 0o644)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func copyFile(t *testing.T, src, dst string, mode os.FileMode) {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, b, mode); err != nil {
		t.Fatal(err)
	}
}
