package described

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"faultwin/drivers/hostview"
	"faultwin/drivers/triggers"
	"faultwin/internal/model"
)

// Driver runs one lifetime of a described supervisor for one window. It is
// not reusable: make one per window.
type Driver struct {
	desc   *Description
	root   string // state root; the run's state dir is <root>/<run>
	logDir string

	run     string
	scope   model.Scope
	vars    map[string]string
	calls   []call // every command run, in order, for the logs
	fault   model.Fault
	point   model.Point
	op      *exec.Cmd
	opStart model.PID
	opDone  chan struct{}
	opErr   error
	opNote  string
	opCall  model.UserCall // the operation's own call, for the aftermath
	watch   *triggers.Watcher
	result  *triggers.Result
	before  []model.Workload // identities read before the trigger
	files   []model.Manifest // what the user keeps, listed before the trigger
	daemon  *daemonProc      // the run's daemon, when the description has one
}

// call is one bounded command and what it printed.
type call struct {
	What     string   `json:"what"`
	Argv     []string `json:"argv"`
	Exit     int      `json:"exit"`
	Signal   string   `json:"signal,omitempty"`
	TimedOut bool     `json:"timed_out,omitempty"`
	MS       float64  `json:"ms"`
	Output   string   `json:"output"`
	// HeldOpen: processes that kept its output open after it exited.
	HeldOpen []model.Holder `json:"held_open,omitempty"`
}

// New returns a driver for desc with runs under root.
func New(desc *Description, root, logDir string) *Driver {
	return &Driver{desc: desc, root: root, logDir: logDir}
}

// Name implements drivers.Driver.
func (d *Driver) Name() string { return d.desc.Name }

func (d *Driver) timeout() time.Duration { return time.Duration(d.desc.TimeoutMS) * time.Millisecond }

// Prepare makes the run's state dir, runs the setup and builds pre.
func (d *Driver) Prepare(ctx context.Context, run string, pre model.Precondition) (model.Scope, error) {
	d.init(run)
	if err := os.MkdirAll(d.vars["assets"], 0o755); err != nil {
		return d.scope, err
	}
	// The marker tells `faultwin sweep` whose run this is, so it runs this
	// supervisor's sweep on it and never refsup's.
	if err := os.WriteFile(MarkerPath(d.scope.StateDir), []byte(d.desc.Name+"\n"), 0o644); err != nil {
		return d.scope, err
	}
	for i, c := range d.desc.Setup {
		if err := d.do(ctx, fmt.Sprintf("setup %d", i+1), c, 0); err != nil {
			return d.scope, fmt.Errorf("setup: %w", err)
		}
	}
	if d.desc.Daemon != nil {
		if err := d.startDaemon(ctx, "daemon start"); err != nil {
			return d.scope, err
		}
	}
	for n := 1; n <= pre.Cold; n++ {
		if err := d.do(ctx, fmt.Sprintf("precondition cold %d", n), d.desc.Precondition.Cold, n); err != nil {
			return d.scope, fmt.Errorf("precondition: cold session %d: %w", n, err)
		}
	}
	// Read while every cold session runs: a checkpointed one is read just
	// before its checkpoint, which counts on from there.
	d.readBefore(pre.Cold)
	if pre.Checkpoint {
		if err := d.do(ctx, "precondition checkpoint", d.desc.Precondition.Checkpoint, 1); err != nil {
			return d.scope, fmt.Errorf("precondition: checkpoint: %w", err)
		}
	}
	for n := 1; n <= pre.Restored; n++ {
		if err := d.do(ctx, fmt.Sprintf("precondition restored %d", n), d.desc.Precondition.Restored, n); err != nil {
			return d.scope, fmt.Errorf("precondition: restored session %d: %w", n, err)
		}
	}
	d.listFiles(pre)
	return d.scope, nil
}

func (d *Driver) init(run string) {
	d.run = run
	d.scope = model.NewScope(d.root, run)
	d.vars = map[string]string{"run": run, "state": d.scope.StateDir, "assets": filepath.Join(d.scope.StateDir, "assets")}
	// a description's own values may use the built-in placeholders
	// ("ctr --address {state}/c.sock"), never each other
	builtin := maps.Clone(d.vars)
	for k, v := range d.desc.Vars {
		d.vars[k] = placeholder.ReplaceAllStringFunc(v, func(m string) string {
			if b, ok := builtin[m[1:len(m)-1]]; ok {
				return b
			}
			return m
		})
	}
}

// Marker is the file in a run's state dir that names its described
// supervisor.
const Marker = ".faultwin-driver"

// MarkerPath returns the marker's path in stateDir.
func MarkerPath(stateDir string) string { return filepath.Join(stateDir, Marker) }

// DriverOf returns the described supervisor a run's state dir belongs to,
// or "" when it has no marker (a refsup run).
func DriverOf(stateDir string) string {
	b, err := os.ReadFile(MarkerPath(stateDir))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// SweepRun runs desc's own sweep on an existing run (faultwin sweep after
// an interrupted window), twice as a window does.
func SweepRun(ctx context.Context, desc *Description, root, run string) ([]model.SweepReport, error) {
	d := New(desc, root, "")
	d.init(run)
	var out []model.SweepReport
	for i := 0; i < 2; i++ {
		r, err := d.Sweep(ctx)
		if err != nil {
			return out, err
		}
		out = append(out, r)
	}
	return out, nil
}

// Arm implements drivers.Driver: the point must be one the description
// publishes; nothing is armed inside the supervisor.
func (d *Driver) Arm(_ context.Context, f model.Fault) error {
	pt, ok := d.desc.Spec().Point(f.Point)
	if !ok {
		return fmt.Errorf("%s publishes no point %q", d.desc.Name, f.Point)
	}
	if pt.Phase == model.AnyPhase {
		if f.LandsIn == "" {
			return fmt.Errorf("%s point %s starts its clock at the phase the window names, and the window names none (lands_in)", d.desc.Name, f.Point)
		}
		pt.Phase = f.LandsIn
	}
	d.fault, d.point = f, pt
	return nil
}

// Trigger starts op with the external trigger watching, and returns once
// the operation's process ended (killed, finished, or killed by the
// harness at the timeout).
func (d *Driver) Trigger(ctx context.Context, op string) error {
	o, ok := d.desc.Operations[op]
	if !ok {
		return fmt.Errorf("%s has no operation %q", d.desc.Name, op)
	}
	argv := d.expand(o.Run, 1)
	cmd := d.command(argv)
	out := &limitedBuffer{max: 1 << 20}
	output, err := hostview.Capture(cmd, out, out)
	if err != nil {
		return fmt.Errorf("starting %s: %w", op, err)
	}
	t0 := time.Now()
	err = cmd.Start()
	output.Started()
	if err != nil {
		output.Done(0)
		return fmt.Errorf("starting %s: %w", op, err)
	}
	d.op, d.opDone = cmd, make(chan struct{})
	d.opStart, _ = triggers.Identify(cmd.Process.Pid)
	plan := triggers.Plan{
		Run: d.run, Roles: d.roles(), Watch: d.point.Watch, Kill: d.point.Kill,
		Phases: d.phases(op), WatchPhase: d.point.Phase,
		Delay:  time.Duration(d.fault.DelayMS) * time.Millisecond,
		Within: d.timeout(), GoneWait: 3 * time.Second, Disarmed: d.fault.Disarmed,
	}
	w, werr := triggers.Start(ctx, plan, d.opStart)
	if werr != nil {
		d.opNote = "trigger not started: " + werr.Error()
	}
	d.watch = w
	var held []model.Holder
	var exited time.Duration
	go func() {
		// The operation is over when its process is, whatever a child
		// that inherited its output does.
		d.opErr = cmd.Wait()
		exited = time.Since(t0)
		held = output.Done(hostview.HeldGrace)
		close(d.opDone)
	}()
	timer := time.NewTimer(d.timeout())
	defer timer.Stop()
	timedOut := false
	select {
	case <-d.opDone:
	case <-timer.C:
		timedOut = true
		stuck := hostview.Stuck(cmd.Process.Pid, d.run)
		killTree(cmd)
		<-d.opDone
		d.opCall.Stuck = stuck
		d.opNote = fmt.Sprintf("operation still running after %v: killed by the harness", d.timeout())
	}
	if w != nil {
		// Once the operation's process is gone, a trigger that kills it
		// never will; one whose roles outlive it (conmon, a CRIU
		// restorer) may still be due.
		grace := time.Duration(0)
		if !slices.Contains(d.point.Kill, model.WatchOperation) {
			grace = time.Duration(d.fault.DelayMS)*time.Millisecond + 500*time.Millisecond
		}
		r := w.Finish(grace)
		d.result = &r
	}
	c := call{What: "operation " + op, Argv: argv, MS: ms(exited), Output: out.String(),
		Exit: exitCode(cmd.ProcessState), Signal: signalOf(cmd.ProcessState), TimedOut: timedOut,
		HeldOpen: held}
	d.calls = append(d.calls, c)
	d.opCall = model.UserCall{Step: "operation", What: c.What, Argv: c.Argv, Exit: c.Exit, Signal: c.Signal, TimedOut: c.TimedOut,
		MS: c.MS, Output: c.Output, Stuck: d.opCall.Stuck, HeldOpen: held}
	return nil
}

// Reap implements drivers.Driver: the operation's process is this
// process's child and was waited for in Trigger.
func (d *Driver) Reap(ctx context.Context) (model.Death, error) {
	if d.op == nil {
		return model.Death{}, errors.New("no operation was started")
	}
	select {
	case <-d.opDone:
	case <-ctx.Done():
		return model.Death{}, ctx.Err()
	}
	ps := d.op.ProcessState
	death := model.Death{Reaped: true, ExitCode: exitCode(ps), Note: d.opNote}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		death.Signaled, death.Signal = true, model.SignalName(ws.Signal())
	} else if !ps.Success() {
		death.OpErr = "exit status " + strconv.Itoa(ps.ExitCode())
	}
	if d.result != nil {
		death.Victims = d.result.Victims
		if d.result.Fired {
			death.Landing = d.result.Landing
		}
		if !d.result.Fired {
			death.Note = joinNote(death.Note, "trigger did not fire: "+d.result.Reason)
		}
	}
	return death, nil
}

// Trace implements drivers.Driver: where the external trigger saw the
// roles appear and where its kill landed.
func (d *Driver) Trace() ([]model.TracePoint, error) {
	if d.result == nil {
		return nil, errors.New("no trigger result")
	}
	return d.result.TracePoints(d.fault.Point), nil
}

// LedgeredMounts implements drivers.Driver: a described supervisor keeps
// no ledger faultwin can read, so its windows do not judge O1.
func (d *Driver) LedgeredMounts() ([]string, error) { return nil, nil }

// Logs implements drivers.Driver: every command with its output.
func (d *Driver) Logs() map[string]string {
	out := map[string]string{}
	for i, c := range d.calls {
		b, _ := json.MarshalIndent(c, "", "  ")
		out[fmt.Sprintf("%02d %s", i+1, c.What)] = string(b)
	}
	if d.logDir != "" {
		if err := os.MkdirAll(d.logDir, 0o755); err == nil {
			b, _ := json.MarshalIndent(d.calls, "", "  ")
			_ = os.WriteFile(filepath.Join(d.logDir, "calls.json"), b, 0o644)
		}
	}
	return out
}

// Sweep implements drivers.Driver: the supervisor's own cleanup commands,
// each bounded. What they did is in Raw; a failed or timed-out command is
// an error of the sweep.
func (d *Driver) Sweep(ctx context.Context) (model.SweepReport, error) {
	r := model.SweepReport{Run: d.run, Passes: 1, Killed: []model.Killed{}, Unmounted: []string{},
		LinksDeleted: []string{}, TablesDeleted: []string{}, FilesRemoved: []string{}, SysctlsRestored: []string{},
		Survivors: []model.Killed{}, Refused: []model.Refusal{}, Errors: []string{}}
	first := len(d.calls)
	if _, err := d.ensureDaemon(ctx, "sweep: daemon start"); err != nil {
		r.Errors = append(r.Errors, err.Error())
	}
	for i, c := range d.desc.Sweep {
		if err := d.do(ctx, fmt.Sprintf("sweep %d", i+1), c, 1); err != nil {
			r.Errors = append(r.Errors, err.Error())
		}
	}
	if err := d.stopDaemon("sweep: daemon stop"); err != nil {
		r.Errors = append(r.Errors, err.Error())
	}
	raw, _ := json.Marshal(d.calls[first:])
	r.Raw = raw
	return r, nil
}

// Close implements drivers.Driver: a daemon still running (a window that
// ended before its sweep) is stopped.
func (d *Driver) Close() error { return d.stopDaemon("close: daemon stop") }

// roles turns the description's roles into the trigger's.
func (d *Driver) roles() []triggers.Role {
	var out []triggers.Role
	for _, name := range slices.Sorted(maps.Keys(d.desc.Roles)) {
		r := d.desc.Roles[name]
		out = append(out, triggers.Role{Name: name, Comms: r.Comm, Argv: r.Argv, Parent: r.Parent, Top: r.Top,
			Holds: d.expand(r.Holds, 1)})
	}
	return out
}

// phases turns the operation's phases into the trigger's.
func (d *Driver) phases(op string) []triggers.Phase {
	var out []triggers.Phase
	for _, ph := range d.desc.Operations[op].Phases {
		cg, mnt := "", ""
		if ph.Cgroup != "" {
			cg = d.expand(Command{ph.Cgroup}, 1)[0]
		}
		if ph.Mounted != "" {
			mnt = d.expand(Command{ph.Mounted}, 1)[0]
		}
		out = append(out, triggers.Phase{Name: ph.Name, Appeared: ph.Appeared, Gone: ph.Gone, Forked: ph.Forked, Cgroup: cg, Mounted: mnt})
	}
	return out
}

// do runs one command of the description, bounded, and keeps its output.
func (d *Driver) do(ctx context.Context, what string, c Command, n int) error {
	argv := d.expand(c, n)
	uc, err := hostview.Run(ctx, d.command(argv), d.run, d.timeout())
	d.calls = append(d.calls, call{What: what, Argv: argv, MS: uc.MS, Output: uc.Output,
		Exit: uc.Exit, Signal: uc.Signal, TimedOut: uc.TimedOut, HeldOpen: uc.HeldOpen})
	if err != nil {
		return fmt.Errorf("%s (%s): %v: %s", what, strings.Join(argv, " "), err, lastLine(uc.Output))
	}
	return nil
}

// command builds an exec.Cmd with the run's environment: the run variable
// (so every process the supervisor starts carries it unless it clears its
// environment) and PATH with the description's directories first.
func (d *Driver) command(argv []string) *exec.Cmd {
	// exec looks a bare name up on the harness's PATH, not the command's:
	// the description's directories come first for the command itself too.
	name := argv[0]
	if !strings.Contains(name, "/") {
		if f := lookPath(d.desc.PathPrepend, name); f != "" {
			name = f
		}
	}
	cmd := exec.Command(name, argv[1:]...)
	env := []string{model.RunEnvKey + "=" + d.run}
	path := os.Getenv("PATH")
	if len(d.desc.PathPrepend) > 0 {
		path = strings.Join(d.desc.PathPrepend, ":") + ":" + path
	}
	env = append(env, "PATH="+path)
	for _, e := range os.Environ() {
		if k, _, _ := strings.Cut(e, "="); k != model.RunEnvKey && k != "PATH" {
			env = append(env, e)
		}
	}
	cmd.Env, cmd.Dir = env, "/"
	// Its own process group, so that a command killed at its bound takes
	// what it started with it (a shell's ctr would otherwise live on). A
	// call's output goes through hostview.Capture's pipes, so its Wait
	// returns at its exit; WaitDelay bounds the wait for exec's own pipes
	// of the daemon and the readiness polls, a survivor holding them.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
	cmd.WaitDelay = 2 * time.Second
	return cmd
}

// killTree SIGKILLs a command and everything in its process group.
func killTree(cmd *exec.Cmd) {
	if cmd.Process == nil {
		return
	}
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	_ = cmd.Process.Kill()
}

// expand replaces the placeholders of c; {n} is the session number.
func (d *Driver) expand(c Command, n int) []string {
	vars := map[string]string{"n": strconv.Itoa(n)}
	for k, v := range d.vars {
		vars[k] = v
	}
	var out []string
	for _, a := range c {
		if a == "{base}" {
			out = append(out, d.expand(d.desc.Base, n)...)
			continue
		}
		out = append(out, placeholder.ReplaceAllStringFunc(a, func(m string) string {
			if v, ok := vars[m[1:len(m)-1]]; ok {
				return v
			}
			return m
		}))
	}
	return out
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func exitCode(ps *os.ProcessState) int {
	if ps == nil {
		return -1
	}
	return ps.ExitCode()
}

func signalOf(ps *os.ProcessState) string {
	if ps == nil {
		return ""
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return model.SignalName(ws.Signal())
	}
	return ""
}

func joinNote(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	if len(s) > 300 {
		s = s[:300] + "..."
	}
	return s
}

// limitedBuffer keeps the first max bytes written to it.
type limitedBuffer struct {
	b   []byte
	max int
	cut bool
}

func (l *limitedBuffer) Write(p []byte) (int, error) {
	if room := l.max - len(l.b); room > 0 {
		if len(p) > room {
			l.b, l.cut = append(l.b, p[:room]...), true
		} else {
			l.b = append(l.b, p...)
		}
	} else if len(p) > 0 {
		l.cut = true
	}
	return len(p), nil
}

func (l *limitedBuffer) String() string {
	if l.cut {
		return string(l.b) + "\n[output cut at " + strconv.Itoa(l.max) + " bytes]"
	}
	return string(l.b)
}

// Versions implements drivers.Versioned: what the description's commands
// print as their version, read once per process.
func (d *Driver) Versions(ctx context.Context) map[string]string { return d.desc.Versions(ctx) }
