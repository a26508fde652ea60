package host

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"faultwin/internal/procstat"
)

// The test binary doubles as the processes the integration tests capture:
// with FWSNAP_HELPER set it runs one of the modes below instead of the
// tests, prints "ready ..." on stdout once in place, and blocks.
const helperEnv = "FWSNAP_HELPER"

func TestMain(m *testing.M) {
	if mode := os.Getenv(helperEnv); mode != "" {
		if err := runHelper(mode, os.Args[1:]); err != nil {
			fmt.Fprintln(os.Stderr, "helper:", err)
			os.Exit(2)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// runHelper runs one helper mode; args are the helper's argv after argv[0]
// (the tag the tests look for, then mode arguments).
func runHelper(mode string, args []string) error {
	switch mode {
	case "exit":
		return nil
	case "sleep":
		// Hold a file open in the cwd, so Files has something to show.
		f, err := os.OpenFile("fwsnap.log", os.O_CREATE|os.O_WRONLY, 0o600)
		if err != nil {
			return err
		}
		defer f.Close()
		fmt.Println("ready")
	case "zombie-parent":
		// Start a child and never wait for it: once it exits it stays a
		// zombie whose parent is this (tagged) process.
		c := exec.Command(os.Args[0])
		c.Env = append(os.Environ(), helperEnv+"=exit")
		if err := c.Start(); err != nil {
			return err
		}
		fmt.Println("ready", c.Process.Pid)
	case "mntns":
		// In a new mount and pid namespace: keep our mounts to ourselves,
		// mount a tmpfs at the last argument, start an untagged child.
		if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
			return fmt.Errorf("making / private: %w", err)
		}
		dir := args[len(args)-1]
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		if err := unix.Mount("fwsnap-inner", dir, "tmpfs", 0, "size=1m"); err != nil {
			return fmt.Errorf("mounting tmpfs: %w", err)
		}
		c := exec.Command("sleep", "infinity")
		if err := c.Start(); err != nil {
			return err
		}
		fmt.Println("ready", c.Process.Pid)
	default:
		return fmt.Errorf("unknown mode %q", mode)
	}
	for {
		time.Sleep(time.Hour)
	}
}

// helper is one running helper process.
type helper struct {
	cmd   *exec.Cmd
	ready []string // words after "ready"
}

func (h *helper) pid() int { return h.cmd.Process.Pid }

// startHelper starts the test binary in mode with argv tail args, extra
// environment env and working directory dir, waits for it to be ready and
// kills and reaps it at cleanup.
func startHelper(t *testing.T, mode string, args, env []string, dir string, attr *syscall.SysProcAttr) *helper {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(append(os.Environ(), helperEnv+"="+mode), env...)
	cmd.Dir = dir
	cmd.SysProcAttr = attr
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting helper %s: %v", mode, err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	line := make(chan string, 1)
	go func() {
		s, _ := bufio.NewReader(out).ReadString('\n')
		line <- s
	}()
	select {
	case s := <-line:
		f := strings.Fields(s)
		if len(f) == 0 || f[0] != "ready" {
			t.Fatalf("helper %s did not get ready: %q", mode, s)
		}
		return &helper{cmd: cmd, ready: f[1:]}
	case <-time.After(10 * time.Second):
		t.Fatalf("helper %s: no ready line in 10s", mode)
	}
	return nil
}

// statOf reads the state and start time of pid through the harness's
// stat parser (the capture reads through procfs), to check the capture
// against.
func statOf(t *testing.T, pid int) (state string, start uint64) {
	t.Helper()
	st, err := procstat.Read("", pid)
	if err != nil {
		t.Fatal(err)
	}
	return string(st.State), st.StartTime
}

// nsOf reads the inode of namespace name of pid ("self" or a number).
func nsOf(t *testing.T, pid, name string) uint64 {
	t.Helper()
	ino, err := readNS("/proc", pid, name)
	if err != nil {
		t.Fatal(err)
	}
	return ino
}
