// Package refsup drives the reference supervisor (cmd/refsup) through its
// CLI: the daemon is this process's own child, so the driver can reap it and
// tell a SIGKILL from an exit.
package refsup

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"faultwin/drivers/hostview"
	"faultwin/fixtures/refsup/api"
	"faultwin/internal/model"

	"golang.org/x/sys/unix"
)

// Driver runs one refsup lifetime. It is not reusable: make one per window.
type Driver struct {
	Bin    string   // refsup binary
	Root   string   // state root; the run's state dir is <Root>/<run>
	Bugs   []string // known-bug switches passed to serve and sweep
	LogDir string   // harness-owned dir for the daemon's stdout/stderr
	// KillWait, when set, is passed to serve and sweep as --kill-wait: how
	// long they wait for a killed process to go (the mutants, whose frozen
	// strays never go, set it short; refsup's own defaults otherwise).
	KillWait time.Duration

	run      string
	scope    model.Scope
	daemon   *daemon
	fault    model.Fault
	sessions []string // live cold sessions, oldest first
	restored []string
	ckpt     string
	victim   *exec.Cmd // the process the fault killed when it is not the daemon (sweep windows)
	victimEr error
	opErr    string
	opCall   *model.UserCall  // the interrupted operation's own call (aftermath)
	ext      *external        // the external trigger of an ext_* point
	old      []*daemon        // supervisors of the run that died before this one (recovery windows)
	origin   string           // the session the precondition checkpointed
	before   []model.Workload // identities read before the trigger (aftermath)
	files    []model.Manifest // the user's files, listed before the trigger
}

// New returns a driver for the refsup binary at bin.
func New(bin, root, logDir string, bugs []string) *Driver {
	return &Driver{Bin: bin, Root: root, LogDir: logDir, Bugs: bugs}
}

// Name implements drivers.Driver.
func (d *Driver) Name() string { return Name }

func (d *Driver) switchArgs() []string {
	var a []string
	for _, b := range d.Bugs {
		a = append(a, "--bug", b)
	}
	if d.KillWait > 0 {
		a = append(a, "--kill-wait", d.KillWait.String())
	}
	return a
}

// Prepare starts `refsup serve` and builds the precondition: the checkpoint
// first (it consumes a session of its own), then restored clones of it, then
// the live cold sessions the window operates on.
func (d *Driver) Prepare(ctx context.Context, run string, pre model.Precondition) (model.Scope, error) {
	d.run = run
	d.scope = model.NewScope(d.Root, run)
	d.scope.TableFamily = "ip"
	d.scope.Ledger = filepath.Join(d.scope.StateDir, "ledger.json")
	if err := os.MkdirAll(d.LogDir, 0o755); err != nil {
		return d.scope, err
	}
	logf, err := os.Create(filepath.Join(d.LogDir, "refsup-serve.log"))
	if err != nil {
		return d.scope, err
	}
	args := append([]string{"serve", "--root", d.Root, "--run", run, "--tag", d.scope.Tag}, d.switchArgs()...)
	if pre.NetworkLock != "" {
		args = append(args, "--network-lock", pre.NetworkLock)
	}
	d.daemon, err = startDaemon(d.Bin, args, run, logf)
	logf.Close() // the subreaper and the daemon hold their own copies
	if err != nil {
		return d.scope, err
	}
	if err := d.waitReady(ctx); err != nil {
		return d.scope, err
	}
	create := func() (string, error) {
		args := []string{"create"}
		if pre.Display {
			args = append(args, "--display")
		}
		var out api.SessionInfo
		if err := d.call(ctx, &out, args...); err != nil {
			return "", err
		}
		return out.Session, nil
	}
	if pre.Checkpoint || pre.Restored > 0 {
		s, err := create()
		if err != nil {
			return d.scope, fmt.Errorf("precondition: create for checkpoint: %w", err)
		}
		d.origin = s
		d.readBefore(s)
		d.listSession(d.before[len(d.before)-1])
		var out api.CheckpointInfo
		if err := d.call(ctx, &out, "checkpoint", "--session", s); err != nil {
			return d.scope, fmt.Errorf("precondition: checkpoint %s: %w", s, err)
		}
		d.ckpt = out.Checkpoint
		d.listCheckpoint(s, d.ckpt)
	}
	for i := 0; i < pre.Restored; i++ {
		var out api.SessionInfo
		if err := d.call(ctx, &out, "restore", "--checkpoint", d.ckpt); err != nil {
			return d.scope, fmt.Errorf("precondition: restore %d of %s: %w", i+1, d.ckpt, err)
		}
		d.restored = append(d.restored, out.Session)
	}
	for i := 0; i < pre.Cold; i++ {
		s, err := create()
		if err != nil {
			return d.scope, fmt.Errorf("precondition: cold session %d: %w", i+1, err)
		}
		d.sessions = append(d.sessions, s)
	}
	if len(d.sessions) > 0 {
		d.readBefore(d.sessions[0])
		d.listSession(d.before[len(d.before)-1])
	}
	return d.scope, nil
}

func (d *Driver) waitReady(ctx context.Context) error {
	deadline := time.Now().Add(15 * time.Second)
	for {
		err := d.call(ctx, nil, "list")
		if err == nil {
			return nil
		}
		if !d.daemon.alive() {
			return fmt.Errorf("refsup serve exited before it was ready (%+v); see %s", d.daemon.death, filepath.Join(d.LogDir, "refsup-serve.log"))
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("refsup serve not ready after 15s: %w", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// clientArgs are the arguments of a client verb on this run:
// `refsup <verb> --root R --run r <args>`.
func (d *Driver) clientArgs(verb string, args ...string) []string {
	return append([]string{verb, "--root", d.Root, "--run", d.run}, args...)
}

// bounded runs a client verb as a user does, bounded: a call still running
// at bound is recorded with what it waits on and killed (hostview.Run).
func (d *Driver) bounded(ctx context.Context, bound time.Duration, verb string, args ...string) (model.UserCall, error) {
	return hostview.Run(ctx, exec.Command(d.Bin, d.clientArgs(verb, args...)...), d.run, bound)
}

// call runs a client verb and decodes its JSON answer into out (if not nil).
func (d *Driver) call(ctx context.Context, out any, args ...string) error {
	cmd := exec.CommandContext(ctx, d.Bin, d.clientArgs(args[0], args[1:]...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("refsup %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(stdout.Bytes(), out); err != nil {
		return fmt.Errorf("refsup %s: decoding %q: %w", args[0], stdout.String(), err)
	}
	return nil
}

// OpBound bounds the window's operation, the call its user made: a refsup
// operation returns in well under a second (its restore waits at most 10 s
// for the payload), so one still running after this hung.
const OpBound = 20 * time.Second

// operation makes the window's operation as its user does, bounded by
// OpBound, and keeps the call for the aftermath: a call interrupted by the
// death must still return.
func (d *Driver) operation(ctx context.Context, args ...string) error {
	uc, err := d.bounded(ctx, OpBound, args[0], args[1:]...)
	uc.Step, uc.What = "operation", "refsup "+strings.Join(args, " ")
	d.opCall = &uc
	if err != nil {
		return fmt.Errorf("refsup %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(uc.Output))
	}
	return nil
}

// Arm implements drivers.Driver. Sweep windows are armed through the
// environment of the sweep process instead: the daemon is dead by then.
func (d *Driver) Arm(ctx context.Context, f model.Fault) error {
	d.fault = f
	if f.Disarmed && !isExternal(f.Point) {
		// the point fires inside refsup (or its sweep), whose death every
		// later step of such a window (Reap, the restart) waits for
		return fmt.Errorf("point %s fires inside refsup and cannot be disarmed: only refsup's windows on an external trigger run as controls", f.Point)
	}
	if strings.HasPrefix(f.Point, "sweep.") || isExternal(f.Point) {
		return nil
	}
	return d.call(ctx, nil, "arm", "--fault", f.String())
}

// Trigger implements drivers.Driver.
func (d *Driver) Trigger(ctx context.Context, op string) error {
	var err error
	if pt, ok := externalPoint(d.fault.Point); ok {
		if err := d.startExternal(ctx, pt); err != nil {
			return fmt.Errorf("external trigger: %w", err)
		}
		defer d.finishExternal()
	}
	switch op {
	case "restore":
		if d.ckpt == "" {
			return errors.New("restore window without a checkpoint in its precondition")
		}
		args := []string{"restore", "--checkpoint", d.ckpt}
		if d.fault.Point == "restore.failed_teardown" {
			args = append(args, "--fail-after-criu")
		}
		err = d.operation(ctx, args...)
	case "checkpoint", "destroy":
		if len(d.sessions) == 0 {
			return fmt.Errorf("%s window without a live cold session in its precondition", op)
		}
		err = d.operation(ctx, op, "--session", d.sessions[0])
	case "idle":
		err = d.operation(ctx, "idle")
	case model.OpHibernate, model.OpSave:
		if len(d.sessions) < 2 {
			return fmt.Errorf("%s window without two live cold sessions in its precondition", op)
		}
		err = d.operation(ctx, op, "--session", d.sessions[0])
	case "sweep":
		return d.triggerSweep(ctx)
	default:
		return fmt.Errorf("unknown operation %q", op)
	}
	if err != nil {
		// Expected when the fault fired: the daemon died under the client.
		d.opErr = err.Error()
	}
	return nil
}

// triggerSweep kills the idle daemon, then runs the sweep armed to kill
// itself at the window's point; the harness's own sweep step is the rerun.
func (d *Driver) triggerSweep(ctx context.Context) error {
	d.daemon.kill()
	args := append([]string{"sweep", "--root", d.Root, "--run", d.run}, d.switchArgs()...)
	d.victim = exec.CommandContext(ctx, d.Bin, args...)
	d.victim.Env = append(os.Environ(), "FAULTWIN_FAULT_AT="+d.fault.String())
	var out bytes.Buffer
	d.victim.Stdout, d.victim.Stderr = &out, &out
	d.victimEr = d.victim.Run()
	if d.victimEr == nil {
		d.opErr = "sweep completed without being killed: " + strings.TrimSpace(out.String())
	}
	return nil
}

// Reap implements drivers.Driver. A supervisor still alive after its
// operation returned (the fault never fired) is this process's own child: it
// is killed here so the window can be judged INVALID and swept.
func (d *Driver) Reap(ctx context.Context) (model.Death, error) {
	if d.victim != nil {
		return deathOf(d.victim.ProcessState, d.opErr), nil
	}
	if d.daemon == nil {
		// Prepare failed before a daemon ran: nothing to reap, and the
		// precondition error already says why.
		return model.Death{Note: "the supervisor never started"}, nil
	}
	note := ""
	select {
	case <-d.daemon.done:
	case <-time.After(2 * time.Second):
		if !d.daemon.kill() {
			return model.Death{Note: fmt.Sprintf("alive after the operation returned; killed by the harness, but its subreaper did not report its end within %s (was the subreaper killed?)", killWait)}, nil
		}
		note = "alive after the operation returned; killed by the harness"
	case <-ctx.Done():
		return model.Death{}, fmt.Errorf("reaping refsup serve: %w", ctx.Err())
	}
	death := d.daemon.death
	death.OpErr, death.Note = d.opErr, note
	// An external trigger's victims are what F1 judges, also when refsup
	// outlived them (only its CRIU was killed) and the harness stopped it.
	if d.ext != nil && d.ext.result != nil {
		death.Victims = d.ext.result.Victims
	}
	return death, nil
}

func deathOf(ps *os.ProcessState, opErr string) model.Death {
	death := model.Death{Reaped: ps != nil, OpErr: opErr}
	if ps == nil {
		return death
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		death.Signaled = true
		death.Signal = model.SignalName(ws.Signal())
		death.ExitCode = -1
		return death
	}
	death.ExitCode = ps.ExitCode()
	return death
}

// Trace implements drivers.Driver.
func (d *Driver) Trace() ([]model.TracePoint, error) {
	path := filepath.Join(d.scope.StateDir, "faults.trace")
	b, err := os.ReadFile(path)
	var ext []model.TracePoint
	if d.ext != nil && d.ext.result != nil {
		ext = d.ext.result.TracePoints(d.fault.Point)
	}
	if errors.Is(err, os.ErrNotExist) {
		return ext, nil
	}
	if err != nil {
		return nil, err
	}
	var out []model.TracePoint
	for i, line := range bytes.Split(b, []byte("\n")) {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var tp model.TracePoint
		if err := json.Unmarshal(line, &tp); err != nil {
			return out, fmt.Errorf("%s:%d: %w", path, i+1, err)
		}
		out = append(out, tp)
	}
	return append(out, ext...), nil
}

// LedgeredMounts implements drivers.Driver.
func (d *Driver) LedgeredMounts() ([]string, error) {
	var out api.Owned
	if err := d.call(context.Background(), &out, "owned"); err != nil {
		return nil, err
	}
	return out.Mounts, nil
}

// Logs implements drivers.Driver: the daemon's output and every log under
// the run's state dir (refsup's own and CRIU's), whole; the row keeps the
// tail of each and records the full size.
func (d *Driver) Logs() map[string]string {
	logs := map[string]string{}
	add := func(name, path string) {
		b, err := os.ReadFile(path)
		if err != nil {
			return
		}
		logs[name] = string(b)
	}
	add("refsup-serve.out", filepath.Join(d.LogDir, "refsup-serve.log"))
	// Never descend into a mount: a session's root is an overlay of the
	// host's whole root filesystem.
	var top unix.Stat_t
	if unix.Stat(d.scope.StateDir, &top) != nil {
		return logs
	}
	_ = filepath.WalkDir(d.scope.StateDir, func(p string, e os.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if e.IsDir() {
			var st unix.Stat_t
			depth := strings.Count(strings.TrimPrefix(p, d.scope.StateDir), "/")
			if unix.Lstat(p, &st) != nil || st.Dev != top.Dev || depth > 4 || strings.HasPrefix(e.Name(), ".criu.") {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(e.Name(), ".log") {
			rel, _ := filepath.Rel(d.scope.StateDir, p)
			add(rel, p)
		}
		return nil
	})
	return logs
}

// Sweep implements drivers.Driver.
func (d *Driver) Sweep(ctx context.Context) (model.SweepReport, error) {
	args := append([]string{"sweep", "--root", d.Root, "--run", d.run}, d.switchArgs()...)
	cmd := exec.CommandContext(ctx, d.Bin, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return model.SweepReport{}, fmt.Errorf("refsup sweep: %w: %s", err, strings.TrimSpace(stderr.String()))
	}
	var rep model.SweepReport
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		return rep, fmt.Errorf("refsup sweep: decoding report: %w", err)
	}
	rep.Raw = json.RawMessage(bytes.TrimSpace(stdout.Bytes()))
	return rep, nil
}

// Close implements drivers.Driver: a daemon still running (a harness error
// before the trigger) is killed and reaped; the run's resources are left to
// the sweep.
func (d *Driver) Close() error {
	var errs []error
	for _, o := range d.old {
		errs = append(errs, o.stop())
	}
	if d.daemon != nil {
		errs = append(errs, d.daemon.stop())
	}
	return errors.Join(errs...)
}
