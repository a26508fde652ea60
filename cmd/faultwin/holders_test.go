package main

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"faultwin/drivers/reclaim"
	"faultwin/internal/model"
	"faultwin/snapshots"
	"faultwin/snapshots/host"
)

// TestHolderOfASessionRootIsNamedNotKilled: a real refsup session (its
// overlay root, its own mount namespace) whose root file a process outside
// the run opened through the session's init (/proc/<pid>/root: no tag, no
// namespace of the run, not in its cgroup), then the supervisor SIGKILLed.
// The descriptor's mount is the session's own namespace's, which the host's
// table never shows: hostcheck names the holder from the run's tie record
// before the sweep and after it, the sweep and the last resort leave it
// alive, and the host is not clean while it holds the mount (kept alive,
// detached, after the sweep). Once it lets go, the sweep finds the host
// clean.
func TestHolderOfASessionRootIsNamedNotKilled(t *testing.T) {
	_, refsup := builtBinaries(t)
	root := "/var/lib/faultwin/holdtest"
	if err := os.MkdirAll(root, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.Remove(root) })
	run := "rhold" + strconv.Itoa(os.Getpid()%100000)
	serve := exec.Command(refsup, "serve", "--root", root, "--run", run, "--tag", model.TagPrefix+run)
	serve.Env = append(os.Environ(), model.RunEnvKey+"="+run)
	serve.Dir = "/"
	out, err := serve.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	serve.Stderr = os.Stderr
	adversary(t, serve)
	t.Cleanup(func() { _, _, _ = runVerb(t, "sweep", "--state-root", root, "--refsup", refsup) })
	if _, err := bufio.NewReader(out).ReadString('\n'); err != nil {
		t.Fatalf("refsup serve did not answer: %v", err)
	}
	b, err := exec.Command(refsup, "create", "--root", root, "--run", run).Output()
	if err != nil {
		t.Fatalf("refsup create: %v", err)
	}
	var sess struct {
		InitPID int `json:"init_pid"`
	}
	if err := json.Unmarshal(b, &sess); err != nil || sess.InitPID == 0 {
		t.Fatalf("session info %s: %v", b, err)
	}

	holder := exec.Command("/bin/sh", "-c", "exec 3< \"$0\"; exec /bin/sleep 1040", "/proc/"+strconv.Itoa(sess.InitPID)+"/root/etc/passwd")
	holder.Env = []string{}
	holder.Dir = "/"
	adversary(t, holder)
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if c, _ := os.ReadFile("/proc/" + strconv.Itoa(holder.Process.Pid) + "/comm"); string(c) == "sleep\n" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the holder did not open the file and exec sleep in 5s")
		}
	}
	_ = serve.Process.Kill()
	_, _ = serve.Process.Wait()

	// The first judgement after the death names it: the judge records the
	// session's own mounts while the run lives and reads the host again.
	named := "pid " + strconv.Itoa(holder.Process.Pid) + " (sleep) holds open file ino "
	of := " of run " + run + ": not the run's, left alone; the run's mount stays alive until it lets go"
	before, code, _ := runVerb(t, "hostcheck", "--state-root", root)
	if code == 0 || !strings.Contains(before, named) || !strings.Contains(before, of) {
		t.Fatalf("hostcheck (exit %d) before the sweep does not name the holder %q:\n%s", code, named+"..."+of, before)
	}

	swept, code, _ := runVerb(t, "sweep", "--state-root", root, "--refsup", refsup)
	if code == 0 || !strings.Contains(swept, named) || !strings.Contains(swept, "sweep: host NOT clean after the sweep") {
		t.Errorf("the sweep (exit %d) does not refuse the host for the holder:\n%s", code, swept)
	}
	if _, err := os.Stat(model.StateDir(root, run)); err == nil {
		t.Fatalf("the run's sweep left its state dir:\n%s", swept)
	}
	if _, state, err := host.StartState(sess.InitPID); err == nil && state != "Z" && state != "X" {
		t.Errorf("the session's init %d outlived the sweep (state %s)", sess.InitPID, state)
	}
	r := reclaim.Run(context.Background(), reclaim.Plan{Scope: model.NewScope(root, run), Roots: snapshots.DefaultRoots(root)})
	if slices.ContainsFunc(r.Killed, func(k model.Killed) bool { return k.PID.PID == holder.Process.Pid }) {
		t.Errorf("the last resort killed the holder: %+v", r.Killed)
	}
	if err := holder.Process.Signal(syscall.Signal(0)); err != nil {
		t.Fatalf("the holder did not outlive the sweep and the last resort: %v\n%s", err, swept)
	}
	after := hostcheckLists(t, root, named, of)
	t.Logf("before the sweep:\n%s\nthe sweep:\n%s\nafter it:\n%s", before, swept, after)

	_ = holder.Process.Kill()
	_, _ = holder.Process.Wait()
	deadline := time.Now().Add(5 * time.Second)
	for syscall.Kill(holder.Process.Pid, 0) == nil && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if s := sweepCleans(t, root); strings.Contains(s, "holds") {
		t.Errorf("the sweep still names a holder once it let go:\n%s", s)
	}
}
