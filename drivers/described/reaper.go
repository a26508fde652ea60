package described

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"faultwin/internal/reexec"
)

// reaperHelper is the helper a daemon's reaper (daemon.reap) runs as: the
// harness's own binary run again (reexec), so `faultwin` and a test binary
// alike can be the reaper; their main or TestMain calls reexec.Init.
const reaperHelper = "daemon-reaper"

// reaperGrace is how long the reaper goes on reaping once the daemon died:
// what the daemon's death took with it (a child killed by its parent-death
// signal) dies within it, and a restart does not wait for more.
const reaperGrace = 50 * time.Millisecond

// Registered, not run: the process becomes the reaper only in
// reexec.Init, which main calls.
func init() { reexec.Register(reaperHelper, reaperMain) }

func reaperMain(argv []string) int {
	code, err := reap(argv)
	if err != nil {
		fmt.Fprintln(os.Stderr, "faultwin daemon reaper:", err)
	}
	return code
}

// reap runs argv as its child the way a service manager runs a daemon: as
// the child subreaper of everything the daemon starts, so the daemon's
// orphans are reaped at once instead of whenever the host's init gets to
// them (an init that reaps late leaves a dead daemon's helper a zombie,
// which a restarted daemon takes for a live one by its pidfile). SIGTERM
// and SIGINT go on to the daemon; the reaper exits shortly after it, with
// its status (128+N for a death by signal N). Children still alive then
// go on to init, as they would under a service manager that lost track.
func reap(argv []string) (int, error) {
	if len(argv) == 0 {
		return 2, errors.New("no command to run")
	}
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		return 2, fmt.Errorf("becoming a child subreaper: %w", err)
	}
	path, err := exec.LookPath(argv[0])
	if err != nil {
		return 127, err
	}
	env := reexec.Without(os.Environ())
	// the daemon must not outlive its reaper, which dies with the harness
	attr := &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	p, err := os.StartProcess(path, argv, &os.ProcAttr{Env: env, Files: []*os.File{os.Stdin, os.Stdout, os.Stderr}, Sys: attr})
	if err != nil {
		return 127, err
	}
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	code, exited := 0, time.Time{}
	for {
		select {
		case s := <-sigs:
			_ = p.Signal(s)
		default:
		}
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
		switch {
		case errors.Is(err, syscall.EINTR):
			continue
		case err != nil && !errors.Is(err, syscall.ECHILD):
			return 2, fmt.Errorf("wait4: %w", err)
		case pid == p.Pid:
			code, exited = ws.ExitStatus(), time.Now()
			if ws.Signaled() {
				code = 128 + int(ws.Signal())
			}
			continue
		case pid > 0:
			continue
		}
		if !exited.IsZero() && (time.Since(exited) >= reaperGrace || errors.Is(err, syscall.ECHILD)) {
			return code, nil
		}
		time.Sleep(5 * time.Millisecond)
	}
}
