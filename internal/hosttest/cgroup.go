package hosttest

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Cgroup makes the cgroup dir (v1 or v2) and the parents it lacks. At
// cleanup it thaws each of them, kills every task left in them, waits
// for them to empty and removes them, deepest first, so a test leaves no
// cgroup and no frozen task whatever the code under test did.
func Cgroup(t testing.TB, dir string) {
	t.Helper()
	var made []string
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(d); err == nil {
			break
		}
		made = append(made, d)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatalf("making cgroup %s: %v", dir, err)
	}
	t.Cleanup(func() {
		for _, d := range slices.Backward(made) {
			thaw(d)
		}
		for _, d := range made {
			b, _ := os.ReadFile(filepath.Join(d, "cgroup.procs"))
			for _, f := range strings.Fields(string(b)) {
				if pid, err := strconv.Atoi(f); err == nil {
					_ = syscall.Kill(pid, syscall.SIGKILL)
				}
			}
		}
		for _, d := range made {
			deadline := time.Now().Add(5 * time.Second)
			for {
				err := syscall.Rmdir(d)
				if errors.Is(err, syscall.EBUSY) && time.Now().Before(deadline) {
					time.Sleep(20 * time.Millisecond) // a killed task not yet gone
					continue
				}
				if err != nil && !errors.Is(err, syscall.ENOENT) {
					t.Errorf("removing cgroup %s: %v", d, err)
				}
				break
			}
		}
	})
}

// Join moves pid into the cgroup dir.
func Join(t testing.TB, dir string, pid int) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0o644); err != nil {
		t.Fatalf("moving pid %d into %s: %v", pid, dir, err)
	}
}

// Freeze freezes the cgroup dir (v1 freezer.state FROZEN, v2
// cgroup.freeze 1) and waits until every task in it is frozen. Its
// cleanup, which runs before Cgroup's, thaws dir, so a task frozen there
// takes the kill any cleanup sends it.
func Freeze(t testing.TB, dir string) {
	t.Helper()
	t.Cleanup(func() { thaw(dir) })
	v1 := filepath.Join(dir, "freezer.state")
	file, val := v1, "FROZEN"
	if _, err := os.Stat(v1); err != nil {
		file, val = filepath.Join(dir, "cgroup.freeze"), "1"
	}
	if err := os.WriteFile(file, []byte(val), 0o644); err != nil {
		t.Fatalf("freezing %s: %v", dir, err)
	}
	for deadline := time.Now().Add(5 * time.Second); !IsFrozen(dir); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s not frozen 5s after %s", dir, file)
		}
	}
}

// IsFrozen reports whether the cgroup dir says all its tasks are frozen.
func IsFrozen(dir string) bool {
	if b, err := os.ReadFile(filepath.Join(dir, "freezer.state")); err == nil {
		return strings.TrimSpace(string(b)) == "FROZEN"
	}
	b, _ := os.ReadFile(filepath.Join(dir, "cgroup.events"))
	return slices.Contains(strings.Split(string(b), "\n"), "frozen 1")
}

// thaw undoes Freeze on dir, if it has a freezer.
func thaw(dir string) {
	if err := os.WriteFile(filepath.Join(dir, "freezer.state"), []byte("THAWED"), 0o644); err != nil {
		_ = os.WriteFile(filepath.Join(dir, "cgroup.freeze"), []byte("0"), 0o644)
	}
}
