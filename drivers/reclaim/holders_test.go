package reclaim

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"faultwin/criteria"
	"faultwin/internal/hosttest"
	"faultwin/internal/model"
	"faultwin/snapshots"
	"faultwin/snapshots/host"
)

// A run's process mounts a tmpfs in a mount namespace of its own, where
// the host's table never shows it (a session's root made in its own
// namespace), and two processes outside the run reach a file there through
// its /proc/<pid>/root: one holds it open, one maps it. The run's record,
// written while the run lives, names that mount; both are named as its
// holders, not as the run's: the last resort kills the run's process and
// leaves them, the tmpfs lives on detached, and the host is not clean
// until they let go. A bystander is never named.
func TestHoldersOfARunsOwnMountAreNamedNotKilled(t *testing.T) {
	r := newTieRun(t, "rfwholdns")
	at := t.TempDir() // empty on the host; the run's tmpfs is mounted here in its namespace only
	script := fmt.Sprintf("mount -t tmpfs fwhold %s && head -c 4096 /dev/zero > %s/lib.so && echo ready && exec sleep 1050", at, at)
	runProc := exec.Command("/usr/bin/unshare", "-m", "--propagation", "private", "/bin/sh", "-c", script)
	runProc.Env = []string{"PATH=/usr/bin:/bin", model.RunEnvKey + "=" + r.run}
	start(t, runProc)
	file := filepath.Join("/proc", strconv.Itoa(runProc.Process.Pid), "root", at, "lib.so")
	opener := start(t, exec.Command("/bin/sh", "-c", "exec 3< \"$0\"; echo ready; exec sleep 1051", file))
	mapper := start(t, hosttest.Mapper(file))
	bystander := start(t, exec.Command("/bin/sh", "-c", "echo ready; exec sleep 1052"))

	ctx := context.Background()
	roots := r.plan().Roots
	capture := func() snapshots.Snapshot {
		s, err := host.Capture(ctx, "test", roots, snapshots.Decoys{})
		must(t, err)
		return s
	}
	// While the run lives, its record names the mount of its own namespace.
	if _, err := Record(roots, r.plan().Scope, capture()); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(roots.Records, r.run+".json"))
	if err != nil || !strings.Contains(string(b), `"mount_point": "`+at+`"`) || !strings.Contains(string(b), `"ns": `) {
		t.Fatalf("the run's record does not name the tmpfs of its own namespace (%v):\n%s", err, b)
	}
	holds := func(c *exec.Cmd, what string) string {
		comm, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(c.Process.Pid), "comm"))
		return "pid " + strconv.Itoa(c.Process.Pid) + " (" + strings.TrimSpace(string(comm)) + ") holds " + what
	}
	named := func(s snapshots.Snapshot, when string) {
		t.Helper()
		left := strings.Join(criteria.Leftovers(s, roots), "\n")
		for _, want := range []string{
			holds(opener, "open file ino "),
			holds(mapper, "mapping of ino "),
		} {
			if !strings.Contains(left, want) || !strings.Contains(left, "of run "+r.run+": not the run's, left alone") {
				t.Errorf("%s: the judge does not name %q as a holder:\n%s", when, want, left)
			}
		}
		if strings.Contains(left, "pid "+strconv.Itoa(bystander.Process.Pid)+" ") {
			t.Errorf("%s: the bystander is named:\n%s", when, left)
		}
		for _, o := range criteria.OfRun(s, r.plan().Scope, snapshots.Decoys{}) {
			if o.Process.PID == opener.Process.Pid || o.Process.PID == mapper.Process.Pid {
				t.Errorf("%s: holder %d judged the run's: %v", when, o.Process.PID, o.Why)
			}
		}
	}
	named(capture(), "while the run lives")

	rec := Run(ctx, r.plan())
	if !slices.ContainsFunc(rec.Killed, func(k model.Killed) bool { return k.PID.PID == runProc.Process.Pid }) {
		t.Fatalf("the last resort did not kill the run's process %d: %+v", runProc.Process.Pid, rec)
	}
	_ = runProc.Wait()
	for _, c := range []*exec.Cmd{opener, mapper, bystander} {
		if slices.ContainsFunc(rec.Killed, func(k model.Killed) bool { return k.PID.PID == c.Process.Pid }) {
			t.Errorf("the last resort killed pid %d, not the run's: %+v", c.Process.Pid, rec.Killed)
		}
		if err := c.Process.Signal(syscall.Signal(0)); err != nil {
			t.Errorf("pid %d did not outlive the last resort: %v", c.Process.Pid, err)
		}
	}
	named(capture(), "after the run's process and its namespace are gone")

	for _, c := range []*exec.Cmd{opener, mapper} {
		_ = c.Process.Kill()
		_ = c.Wait()
	}
	j, err := Judge(ctx, "test", roots)
	must(t, err)
	if !j.Clean() {
		t.Errorf("not clean once the holders let go: %q", j.Left)
	}
	if _, err := os.Stat(filepath.Join(roots.Records, r.run+".json")); err == nil {
		t.Errorf("the record outlived a clean judgement")
	}
}
