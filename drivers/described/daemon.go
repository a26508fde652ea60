package described

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"faultwin/internal/reexec"
)

// Daemon is a long-lived supervisor the description starts for each run
// (containerd): its own root, state and socket under the run's state dir.
// The driver starts it before the precondition, starts it again when a
// window killed it and the user's recovery or the sweep needs it (what its
// user does after a crash), and stops it at the end of each sweep, so that
// a sweep leaves nothing running.
type Daemon struct {
	// Run starts the daemon in the foreground, with its own state, socket
	// and pidfile under {state}; the harness keeps it, and stops it after
	// the window.
	Run Command `yaml:"run"`
	// Ready is polled (every 50 ms, within timeout_ms) until it succeeds:
	// the daemon serves.
	Ready Command `yaml:"ready"`
	// StopMS is how long a stop waits after SIGTERM before SIGKILL.
	StopMS int `yaml:"stop_ms"`
	// Reap starts the daemon as a service manager would: under a child
	// subreaper that reaps what the daemon's death orphans at once. A
	// daemon that checks its helpers' pidfiles on a restart otherwise
	// meets their zombies where the host's init reaps late, and takes
	// them for live.
	Reap bool `yaml:"reap"`
}

func (c *checker) daemon(d *Description, vars []string) {
	dm := d.Daemon
	if dm == nil {
		return
	}
	c.command("daemon.run", dm.Run, vars, false)
	c.command("daemon.ready", dm.Ready, vars, true)
	if dm.StopMS < 0 || dm.StopMS > d.TimeoutMS {
		c.addf("daemon.stop_ms", "%d: give 0..timeout_ms (%d) ms", dm.StopMS, d.TimeoutMS)
	}
}

// daemonProc is one start of the run's daemon.
type daemonProc struct {
	cmd  *exec.Cmd
	done chan struct{}
	out  *limitedBuffer
	t0   time.Time
}

func (p *daemonProc) alive() bool {
	if p == nil {
		return false
	}
	select {
	case <-p.done:
		return false
	default:
		return true
	}
}

// startDaemon starts the run's daemon and waits until it is ready; what
// happened is recorded as a call named what.
func (d *Driver) startDaemon(ctx context.Context, what string) error {
	dm := d.desc.Daemon
	argv := d.expand(dm.Run, 1)
	cmd := d.command(argv)
	if dm.Reap {
		rc, err := reexec.Command(reaperHelper, cmd.Env, append([]string{cmd.Path}, cmd.Args[1:]...)...)
		if err != nil {
			return fmt.Errorf("%s: the daemon's reaper is this binary: %w", what, err)
		}
		cmd.Path, cmd.Args, cmd.Env = rc.Path, rc.Args, rc.Env
	}
	out := &limitedBuffer{max: 1 << 20}
	cmd.Stdout, cmd.Stderr = out, out
	// the daemon must outlive nothing of the harness's but the harness
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
	t0 := time.Now()
	if err := cmd.Start(); err != nil {
		d.calls = append(d.calls, call{What: what, Argv: argv, Exit: -1, Output: err.Error()})
		return fmt.Errorf("%s: %w", what, err)
	}
	p := &daemonProc{cmd: cmd, done: make(chan struct{}), out: out, t0: t0}
	go func() { _ = cmd.Wait(); close(p.done) }()
	d.daemon = p
	deadline := time.Now().Add(d.timeout())
	var err error
	for {
		if err = d.quiet(ctx, dm.Ready); err == nil {
			break
		}
		if !p.alive() || time.Now().After(deadline) || ctx.Err() != nil {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	c := call{What: what, Argv: argv, MS: ms(time.Since(t0)), Output: out.String()}
	if err != nil {
		if !p.alive() {
			c.Exit = exitCode(cmd.ProcessState)
			err = fmt.Errorf("%s: the daemon exited before it was ready: %s", what, lastLine(out.String()))
		} else {
			err = fmt.Errorf("%s: not ready after %v: %w", what, d.timeout(), err)
		}
		c.Output += "\n" + err.Error()
	}
	d.calls = append(d.calls, c)
	return err
}

// quiet runs a command bounded by timeout_ms without recording it (a
// readiness poll).
func (d *Driver) quiet(ctx context.Context, c Command) error {
	ctx, cancel := context.WithTimeout(ctx, d.timeout())
	defer cancel()
	argv := d.expand(c, 1)
	cmd := d.command(argv)
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		return err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			return fmt.Errorf("%v: %s", err, lastLine(out.String()))
		}
		return nil
	case <-ctx.Done():
		killTree(cmd)
		<-done
		return ctx.Err()
	}
}

// ensureDaemon starts the daemon again when the window killed it.
func (d *Driver) ensureDaemon(ctx context.Context, what string) (bool, error) {
	if d.desc.Daemon == nil {
		return false, nil
	}
	if p := d.daemon; p.alive() && d.desc.Daemon.Reap && d.quiet(ctx, d.desc.Daemon.Ready) != nil {
		// A reaper outlives its daemon by its grace: one that does not
		// serve may be the reaper of a killed daemon, about to exit.
		select {
		case <-p.done:
		case <-time.After(reaperGrace + time.Second):
		}
	}
	if d.daemon.alive() {
		return false, nil
	}
	return true, d.startDaemon(ctx, what)
}

// stopDaemon stops the daemon: SIGTERM, then SIGKILL after stop_ms.
func (d *Driver) stopDaemon(what string) error {
	p := d.daemon
	if !p.alive() {
		return nil
	}
	t0 := time.Now()
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	c := call{What: what, Argv: []string{"SIGTERM", fmt.Sprint(p.cmd.Process.Pid)}}
	var err error
	select {
	case <-p.done:
	case <-time.After(time.Duration(d.desc.Daemon.StopMS) * time.Millisecond):
		killTree(p.cmd)
		<-p.done
		c.Signal = "SIGKILL"
		err = errors.New(what + ": the daemon outlived SIGTERM by " + fmt.Sprint(d.desc.Daemon.StopMS) + " ms: killed")
	}
	c.MS, c.Exit, c.Output = ms(time.Since(t0)), exitCode(p.cmd.ProcessState), p.out.String()
	d.calls = append(d.calls, c)
	return err
}
