package triggers

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"faultwin/internal/hosttest"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"faultwin/internal/model"
	"faultwin/internal/procstat"
)

// TestMain makes the test binary a child subreaper: a killed shell's
// children come back to it and are reaped at the end of each test instead
// of lingering under init.
func TestMain(m *testing.M) {
	if os.Geteuid() == 0 {
		if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
			panic(err)
		}
	}
	os.Exit(m.Run())
}

// needRoot skips when another user's environ cannot be read, and registers
// the reaping of every orphan the test leaves.
func needRoot(t testing.TB) {
	t.Helper()
	hosttest.Need(t, "reads other processes' environ, starts and kills processes")
	t.Cleanup(func() { reapOrphans(t) })
}

func newRun(t testing.TB) string {
	b := make([]byte, 5)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return "t" + hex.EncodeToString(b)
}

// tool copies src into a fresh directory under name, so that a process
// running it has comm name.
func tool(t testing.TB, src, name string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), name)
	in, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
	return dst
}

type child struct {
	cmd  *exec.Cmd
	id   model.PID
	done chan struct{}
	err  error
}

// spawn starts path in its own process group with run's variable in its
// environment (none when run is empty) plus extra, and reaps it as soon as
// it exits; cleanup kills the whole group.
func spawn(t testing.TB, run string, extra []string, path string, args ...string) *child {
	t.Helper()
	cmd := exec.Command(path, args...)
	cmd.Env = []string{"PATH=/usr/bin:/bin"}
	if run != "" {
		cmd.Env = append(cmd.Env, model.RunEnvKey+"="+run)
	}
	cmd.Env = append(cmd.Env, extra...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c := &child{cmd: cmd, done: make(chan struct{})}
	go func() { c.err = cmd.Wait(); close(c.done) }()
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		select {
		case <-c.done:
		case <-time.After(5 * time.Second):
			t.Errorf("pid %d not reaped 5s after SIGKILL", cmd.Process.Pid)
		}
	})
	c.id = idOf(t, cmd.Process.Pid)
	return c
}

func idOf(t testing.TB, pid int) model.PID {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		t.Fatal(err)
	}
	st, err := procstat.Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	return model.PID{PID: pid, StartTime: st.StartTime}
}

// killedBy returns the signal that ended c, waiting up to 5s for it to end.
func (c *child) killedBy(t testing.TB) syscall.Signal {
	t.Helper()
	select {
	case <-c.done:
	case <-time.After(5 * time.Second):
		t.Fatalf("pid %d still running", c.id.PID)
	}
	ws, ok := c.cmd.ProcessState.Sys().(syscall.WaitStatus)
	if !ok || !ws.Signaled() {
		return 0
	}
	return ws.Signal()
}

func (c *child) running() bool {
	select {
	case <-c.done:
		return false
	default:
		return true
	}
}

// reapOrphans waits for every remaining child of the test binary: the
// orphans that killed shells handed to it as subreaper.
func reapOrphans(t testing.TB) {
	deadline := time.Now().Add(5 * time.Second)
	for {
		var ws unix.WaitStatus
		pid, err := unix.Wait4(-1, &ws, unix.WNOHANG, nil)
		switch {
		case errors.Is(err, unix.ECHILD):
			return
		case errors.Is(err, unix.EINTR), err == nil && pid > 0:
			continue
		case err != nil:
			t.Errorf("reaping orphans: %v", err)
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("orphans still running 5s after the test")
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// procsOf lists the live processes whose comm is comm and whose environment
// carries run.
func procsOf(t testing.TB, run, comm string) []int {
	t.Helper()
	ents, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var out []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		st, err := procstat.Parse(b)
		if err != nil || st.Comm != comm || st.State == 'Z' {
			continue
		}
		env, _ := os.ReadFile("/proc/" + e.Name() + "/environ")
		for _, kv := range splitNUL(env) {
			if kv == model.RunEnvKey+"="+run {
				out = append(out, pid)
			}
		}
	}
	return out
}

func splitNUL(b []byte) []string {
	var out []string
	for len(b) > 0 {
		i := 0
		for i < len(b) && b[i] != 0 {
			i++
		}
		out = append(out, string(b[:i]))
		if i == len(b) {
			break
		}
		b = b[i+1:]
	}
	return out
}
