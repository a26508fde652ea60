package refsup

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"faultwin/fixtures/refsup/api"
	"faultwin/internal/model"
)

// daemon is `refsup serve` running under `refsup subreaper`, as a daemon
// runs under a service manager: orphans of a killed daemon (sessions, CRIU
// and its forks) are reaped by the subreaper as soon as they die, instead of
// lingering as zombies until the host's init reaps them (some inits do that
// on a timer of seconds, which would make the next window's host look
// unclean).
type daemon struct {
	shim   *exec.Cmd
	hangup io.WriteCloser // closing it ends the subreaper
	pid    int            // the daemon's own pid
	done   chan struct{}  // closed once the daemon has exited and been reaped
	death  model.Death
	shimEr chan error
}

// startDaemon starts argv (refsup serve ...) under the subreaper. The run's
// environment tag is set on the daemon only, never on the subreaper, which is
// not the run's and must not be swept as if it were.
func startDaemon(bin string, argv []string, run string, log *os.File, env ...string) (*daemon, error) {
	args := []string{"subreaper", "--setenv", model.RunEnvKey + "=" + run}
	for _, kv := range env {
		args = append(args, "--setenv", kv)
	}
	args = append(append(args, "--", bin), argv...)
	shim := exec.Command(bin, args...)
	shim.Env = withoutEnv(os.Environ(), model.RunEnvKey)
	shim.Dir = "/"
	shim.Stderr = log
	hangup, err := shim.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := shim.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := shim.Start(); err != nil {
		return nil, fmt.Errorf("starting refsup subreaper: %w", err)
	}
	d := &daemon{shim: shim, hangup: hangup, done: make(chan struct{}), shimEr: make(chan error, 1)}
	started := make(chan error, 1)
	go func() {
		sc := bufio.NewScanner(out)
		first := true
		for sc.Scan() {
			var st api.SubreaperStatus
			if err := json.Unmarshal(sc.Bytes(), &st); err != nil {
				continue
			}
			switch {
			case first && st.Started > 0:
				d.pid, first = st.Started, false
				started <- nil
			case st.Exited:
				d.death = model.Death{Reaped: true, Signaled: st.Signaled, Signal: st.Signal, ExitCode: st.ExitCode}
				close(d.done)
			}
		}
		if first {
			started <- errors.New("refsup subreaper exited before starting the daemon")
		}
		d.shimEr <- shim.Wait()
	}()
	select {
	case err := <-started:
		if err != nil {
			return nil, err
		}
	case <-time.After(10 * time.Second):
		_ = shim.Process.Kill()
		return nil, errors.New("refsup subreaper did not start the daemon within 10s")
	}
	return d, nil
}

func withoutEnv(env []string, key string) []string {
	out := env[:0:0]
	for _, kv := range env {
		if !strings.HasPrefix(kv, key+"=") {
			out = append(out, kv)
		}
	}
	return out
}

// alive reports whether the daemon has not exited yet.
func (d *daemon) alive() bool {
	select {
	case <-d.done:
		return false
	default:
		return true
	}
}

// killWait bounds how long kill waits for the subreaper to report the
// daemon's end: a subreaper that was itself killed (by something outside
// the harness) never reports it, and an unbounded wait hung a whole suite.
const killWait = 5 * time.Second

// kill SIGKILLs the daemon (it stays the subreaper's unreaped child until
// done closes, so its pid cannot have been reused) and waits for its end.
// It reports false when its end was not confirmed within killWait.
func (d *daemon) kill() bool {
	if d.alive() {
		_ = syscall.Kill(d.pid, syscall.SIGKILL)
	}
	select {
	case <-d.done:
		return true
	case <-time.After(killWait):
		return false
	}
}

// stop ends the subreaper: its remaining children, if any, go to init.
func (d *daemon) stop() error {
	d.kill()
	_ = d.hangup.Close()
	select {
	case <-d.shimEr:
		return nil
	case <-time.After(5 * time.Second):
		_ = d.shim.Process.Kill()
		<-d.shimEr
		return errors.New("refsup subreaper did not exit within 5s of the hangup; killed")
	}
}
