// Package triggers kills processes of a run at instants defined from the
// outside, with no hook inside the target: it watches process creation
// through procfs and kills by (pid, start time) through a pidfd, so a fault
// can land inside a tool the supervisor runs (criu, conmon, runc) and not
// only at the points the supervisor itself reports.
package triggers

import (
	"context"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"
	"sync"
	"time"

	"faultwin/internal/model"
	"faultwin/internal/procstat"
)

// Operation names the operation's own process in Plan.Watch and Plan.Kill,
// and its start as the watched event.
const Operation = "operation"

// PollInterval is the time between two looks at the process table.
const PollInterval = time.Millisecond

// DefaultGoneWait bounds the wait for a victim's exit when the plan sets
// none: a SIGKILLed process that outlives it is stuck in the kernel.
const DefaultGoneWait = 2 * time.Second

// ErrPlan is wrapped by every error Start returns for a plan it cannot arm.
var ErrPlan = errors.New("triggers: invalid plan")

// Role is a kind of process of the run a trigger can watch or kill.
type Role struct {
	Name  string   // "criu", "conmon", "runc", "podman", "supervisor"
	Comms []string // exact /proc/<pid>/comm values that make a process this role
	// Argv words must each be an element of the process's argv too, so two
	// roles can share a comm ("podman container cleanup" vs the operation).
	Argv []string
	// Parent comms: the process's parent (when it was first seen) must have
	// one of them. A supervisor may run the same tool for a quick probe
	// (podman runs `criu` to read its version) and for the real work (runc
	// runs the CRIU that restores); the parent tells them apart.
	Parent []string
	// Top: when several processes of the run have the role, kill only those
	// whose parent has not the same role (CRIU's top process, not its
	// restorer forks). Without it every live process of the role is killed.
	Top bool
	// Holds: the process has one of these paths open, or as its cwd
	// (path.Match globs on absolute paths). What a process works on tells a
	// tool's real work from a probe by the same tool: the CRIU that dumps or
	// restores holds the checkpoint directory, the one runc runs to read
	// CRIU's version never does. A process of the role's comm is looked at
	// again every tick until it holds one (it opens them after its start).
	Holds []string
}

// Phase is a phase of the operation seen from outside. It is entered by the
// first event of its kind after the watch began; a phase with no evidence
// is entered at the operation's start.
type Phase struct {
	Name string
	// Appeared: the first process of the role that was not there when
	// the watch began (the old container's conmon is no new conmon).
	Appeared string
	// Gone: every process the role had is gone (or a zombie), once it
	// appeared.
	Gone string
	// Forked: a new process of the run whose parent has the role.
	Forked string
	// Cgroup: a process of the run whose comm no role has, in a cgroup whose path matches this
	// path.Match glob ("/faultwin/r1/libpod-*"), that was not already there
	// when the watch began.
	Cgroup string
	// Mounted: a mount point whose path matches this path.Match glob, that
	// was not mounted when the watch began ("/s/netns/cni-*"). What some
	// steps make is a mount and no process: a network namespace bound to a
	// file before the supervisor records it.
	Mounted string
}

// maxRoles is how many roles a plan may have: a process's roles are bits.
const maxRoles = 64

// Plan is one armed trigger.
type Plan struct {
	// Run: a process is the run's when its environment has
	// FAULTWIN_RUN=<Run>, or a /proc/<pid>/cgroup line lies under
	// /faultwin/<Run>/, or it descends (through the parents it had when
	// first seen) from the operation's process.
	Run   string
	Roles []Role
	// Watch is the role whose first appearance starts the clock; Operation:
	// the operation's own start (the call to Start).
	Watch string
	// Phases are the operation's phases in order; WatchPhase, when set,
	// starts the clock when the operation enters that phase (Watch is then
	// ignored). The result says where the kill landed among them.
	Phases     []Phase
	WatchPhase string
	Delay      time.Duration // after the watched event
	// Kill lists the roles to kill, in this order; Operation: the
	// operation's own process.
	Kill []string
	// Within: give up when the watched role has not appeared by then
	// (fault not fired). Zero: no bound but the context and Stop.
	Within time.Duration
	// GoneWait bounds the wait for each victim to be seen gone after its
	// SIGKILL, before the next role is killed; zero: DefaultGoneWait.
	GoneWait time.Duration
	// Disarmed: watch and record where the trigger would fire (its
	// landing and the run's processes then), and kill nothing.
	Disarmed bool
	// Observe: no trigger at all (Watch, Kill and Delay are ignored): the
	// watch records the roles and phases it sees until Stop, and each
	// role's first new process with its argv and cgroup (Result.Fresh),
	// for a reader who wants to see what a command did.
	Observe bool
}

// Appearance is the first process of the run seen with a role.
type Appearance struct {
	Role string
	model.PID
	Comm string
	At   time.Time
	// Argv and Cgroup are read as it is classified, for an observing
	// watch only (Plan.Observe); Cgroup is its first cgroup line's path.
	Argv   []string
	Cgroup string
}

// Result is what a trigger did.
type Result struct {
	Start    time.Time    // when Start was called (the operation's start)
	Appeared []Appearance // first appearance of each role, in order
	Fired    bool
	FiredAt  time.Time
	// Victims are in kill order; Err is set when a role had no live process
	// of the run at the kill, or the kill was refused or failed.
	Victims []model.Victim
	// Present is the run's processes at the kill, "comm pid" sorted by pid:
	// the target's state when the kill landed.
	Present []string
	Reason  string // why it did not fire, when it did not
	// Landing is the phases entered up to the kill and the one it landed
	// in; nil when the plan declares no phases.
	Landing *model.Landing
	// Disarmed: the plan was, so Fired says only where it would have.
	Disarmed bool
	// Fresh is, for an observing watch, each role's first process that
	// was not there when the watch began, in the order they appeared.
	Fresh []Appearance
}

// Watcher is one running trigger.
type Watcher struct {
	plan     Plan
	op       model.PID
	ctx      context.Context
	sc       *scanner
	stop     chan struct{}
	stopOnce sync.Once
	done     chan struct{}
	res      Result
	watch    int // role index of Plan.Watch; -1: Operation
	kill     []int
}

// Start begins watching now; op is the operation's process (its pid and
// start time; zero when the operation is not a process the caller started).
func Start(ctx context.Context, p Plan, op model.PID) (*Watcher, error) {
	start := time.Now()
	roles, watch, kill, err := check(p, op)
	if err != nil {
		return nil, err
	}
	if p.GoneWait <= 0 {
		p.GoneWait = DefaultGoneWait
	}
	sc, err := newScanner("/proc", p.Run, op, roles, p.Phases)
	if err != nil {
		return nil, err
	}
	sc.detail = p.Observe
	w := &Watcher{
		plan: p, op: op, ctx: ctx, sc: sc, watch: watch, kill: kill,
		stop: make(chan struct{}), done: make(chan struct{}),
		res: Result{Start: start},
	}
	go w.loop()
	return w, nil
}

// check validates p and returns the roles with their comms truncated as the
// kernel truncates them, and Watch and Kill as role indexes (-1: Operation).
func check(p Plan, op model.PID) ([]Role, int, []int, error) {
	if p.Run == "" && op.PID == 0 {
		return nil, 0, nil, fmt.Errorf("%w: neither a run nor an operation process to tell the run's processes by", ErrPlan)
	}
	if len(p.Roles) > maxRoles {
		return nil, 0, nil, fmt.Errorf("%w: %d roles, at most %d", ErrPlan, len(p.Roles), maxRoles)
	}
	roles := make([]Role, len(p.Roles))
	index := map[string]int{}
	for i, r := range p.Roles {
		switch {
		case r.Name == "" || r.Name == Operation:
			return nil, 0, nil, fmt.Errorf("%w: role %d is named %q", ErrPlan, i, r.Name)
		case len(r.Comms) == 0:
			return nil, 0, nil, fmt.Errorf("%w: role %q has no comm", ErrPlan, r.Name)
		}
		if _, dup := index[r.Name]; dup {
			return nil, 0, nil, fmt.Errorf("%w: role %q named twice", ErrPlan, r.Name)
		}
		index[r.Name] = i
		roles[i] = Role{Name: r.Name, Top: r.Top, Argv: r.Argv, Parent: r.Parent, Holds: r.Holds}
		for _, g := range r.Holds {
			if _, err := path.Match(g, "/"); err != nil || !path.IsAbs(g) {
				return nil, 0, nil, fmt.Errorf("%w: role %q holds %q: not an absolute path.Match glob", ErrPlan, r.Name, g)
			}
		}
		for _, c := range r.Comms {
			if c == "" {
				return nil, 0, nil, fmt.Errorf("%w: role %q has an empty comm", ErrPlan, r.Name)
			}
			roles[i].Comms = append(roles[i].Comms, c[:min(len(c), model.CommLen)])
		}
	}
	lookup := func(what, name string) (int, error) {
		if name == Operation {
			return -1, nil
		}
		if i, ok := index[name]; ok {
			return i, nil
		}
		return 0, fmt.Errorf("%w: %s %q is neither %q nor a role of the plan", ErrPlan, what, name, Operation)
	}
	if err := checkPhases(p, index); err != nil {
		return nil, 0, nil, err
	}
	watch := -1
	if p.WatchPhase == "" && !p.Observe {
		var err error
		if watch, err = lookup("watch", p.Watch); err != nil {
			return nil, 0, nil, err
		}
	}
	if p.Observe {
		return roles, -1, nil, nil
	}
	if len(p.Kill) == 0 {
		return nil, 0, nil, fmt.Errorf("%w: nothing to kill", ErrPlan)
	}
	var kill []int
	for _, k := range p.Kill {
		i, err := lookup("kill", k)
		if err != nil {
			return nil, 0, nil, err
		}
		if i < 0 && op.PID == 0 {
			return nil, 0, nil, fmt.Errorf("%w: kill %q without an operation process", ErrPlan, Operation)
		}
		kill = append(kill, i)
	}
	if p.Delay < 0 || p.Within < 0 {
		return nil, 0, nil, fmt.Errorf("%w: negative delay or bound", ErrPlan)
	}
	return roles, watch, kill, nil
}

// Wait blocks until the trigger fired and its victims were handled, or
// Within passed, or the context ended, or Stop was called, and returns what
// happened.
func (w *Watcher) Wait() Result {
	<-w.done
	r := w.res
	r.Appeared = slices.Clone(r.Appeared)
	r.Victims = slices.Clone(r.Victims)
	r.Present = slices.Clone(r.Present)
	r.Fresh = slices.Clone(w.sc.freshSeen)
	if r.Landing == nil && len(w.plan.Phases) > 0 {
		// Not fired: the phases seen still say how far the operation got.
		r.Landing = w.sc.landing()
	}
	return r
}

// Finish is for when the operation has returned: the trigger gets up to
// grace more to fire (its kill roles, a conmon or a CRIU restorer, may
// outlive the operation), then is stopped; it returns what happened. A
// trigger that fired returns as soon as its victims are handled.
func (w *Watcher) Finish(grace time.Duration) Result {
	t := time.AfterFunc(grace, w.Stop)
	defer t.Stop()
	return w.Wait()
}

// Stop ends the watch early (the operation returned before the trigger
// fired); Wait then returns Fired=false with a Reason. A trigger already
// firing finishes its kills.
func (w *Watcher) Stop() {
	w.stopOnce.Do(func() { close(w.stop) })
}

func (w *Watcher) loop() {
	defer close(w.done)
	defer w.sc.close()
	var clock time.Time // the watched event; zero until it happened
	if w.watch < 0 && w.plan.WatchPhase == "" && !w.plan.Observe {
		clock = w.res.Start
	}
	timer := time.NewTimer(0)
	defer timer.Stop()
	<-timer.C
	for {
		now := time.Now()
		err := w.sc.scan(now)
		w.res.Appeared = w.sc.appeared
		if err != nil {
			w.res.Reason = err.Error()
			return
		}
		w.sc.phases(now, w.res.Start)
		switch {
		case !clock.IsZero(), w.plan.Observe:
		case w.plan.WatchPhase != "":
			if at, ok := w.sc.entered(w.plan.WatchPhase); ok {
				clock = at
			}
		case w.sc.roleSeen[w.watch]:
			for _, a := range w.sc.appeared {
				if a.Role == w.plan.Watch {
					clock = a.At
				}
			}
		}
		if reason := w.ended(); reason != "" {
			w.res.Reason = reason
			return
		}
		wait := PollInterval
		if !clock.IsZero() {
			left := clock.Add(w.plan.Delay).Sub(now)
			if left <= 0 {
				w.fire()
				return
			}
			wait = min(wait, left)
		} else if w.plan.Within > 0 {
			left := w.res.Start.Add(w.plan.Within).Sub(now)
			if left <= 0 {
				what := w.plan.Watch + " did not appear"
				if w.plan.WatchPhase != "" {
					what = "the operation did not enter phase " + w.plan.WatchPhase
				}
				w.res.Reason = fmt.Sprintf("%s within %v", what, w.plan.Within)
				return
			}
			wait = min(wait, left)
		}
		timer.Reset(wait)
		select {
		case <-w.ctx.Done():
		case <-w.stop:
		case <-timer.C:
		}
	}
}

// ended returns why the watch must end before firing, or "".
func (w *Watcher) ended() string {
	select {
	case <-w.stop:
		return "stopped before the trigger fired"
	default:
	}
	if err := w.ctx.Err(); err != nil {
		return "context ended before the trigger fired: " + err.Error()
	}
	return ""
}

// fire kills the plan's roles in order from the table of the tick just
// taken, waiting for each victim to be gone before the next role.
func (w *Watcher) fire() {
	w.res.Fired = true
	w.res.FiredAt = time.Now()
	w.res.Present = w.sc.present()
	w.res.Landing = w.sc.landing()
	if w.res.Disarmed = w.plan.Disarmed; w.res.Disarmed {
		return
	}
	for n, k := range w.kill {
		name := w.plan.Kill[n]
		if k < 0 {
			comm := ""
			if p := w.sc.procs[w.op.PID]; p != nil && p.id == w.op {
				comm = p.comm
			}
			w.res.Victims = append(w.res.Victims, kill(w.sc, name, w.op, comm, w.plan.GoneWait))
			continue
		}
		targets := w.sc.targets(k)
		if len(targets) == 0 {
			w.res.Victims = append(w.res.Victims, model.Victim{Role: name, Err: "no live process of the run had the role at the kill"})
			continue
		}
		for _, p := range targets {
			w.res.Victims = append(w.res.Victims, kill(w.sc, name, p.id, p.comm, w.plan.GoneWait))
		}
	}
}

// TracePoints renders r for a row: one point per appearance, then one point
// named point, Fired when the trigger fired, whose note names the victims
// and the run's processes at the kill (or why it did not fire).
func (r Result) TracePoints(point string) []model.TracePoint {
	var out []model.TracePoint
	for _, a := range r.Appeared {
		out = append(out, model.TracePoint{
			Point: "appeared " + a.Role, Time: a.At, PID: a.PID.PID,
			Note: fmt.Sprintf("appeared %s pid %d (comm %s, start %d)", a.Role, a.PID.PID, a.Comm, a.StartTime),
		})
	}
	if r.Landing != nil {
		for _, ph := range r.Landing.Seen {
			out = append(out, model.TracePoint{Point: "phase " + ph.Name, Time: ph.At, Note: ph.Evidence})
		}
	}
	if !r.Fired {
		return append(out, model.TracePoint{Point: point, Time: r.Start, Note: model.NotFiredNote(r.Reason)})
	}
	if r.Disarmed {
		notes := []string{model.ControlNote}
		if r.Landing != nil {
			notes = append(notes, "would have landed in phase "+orNone(r.Landing.Phase))
		}
		notes = append(notes, model.PresentNote(r.Present))
		return append(out, model.TracePoint{Point: point, Time: r.FiredAt, Note: strings.Join(notes, "; ")})
	}
	var notes []string
	pid := 0
	for _, v := range r.Victims {
		notes = append(notes, victimNote(v))
		if pid == 0 && v.Err == "" {
			pid = v.PID.PID
		}
	}
	if r.Landing != nil {
		notes = append(notes, "landed in phase "+orNone(r.Landing.Phase))
	}
	notes = append(notes, model.PresentNote(r.Present))
	return append(out, model.TracePoint{Point: point, Time: r.FiredAt, PID: pid, Fired: true, Note: strings.Join(notes, "; ")})
}

func orNone(s string) string {
	if s == "" {
		return "(none entered)"
	}
	return s
}

func victimNote(v model.Victim) string {
	if v.PID.PID == 0 {
		return fmt.Sprintf("%s: %s", v.Role, v.Err)
	}
	s := fmt.Sprintf("%s pid %d (%s) ", v.Role, v.PID.PID, v.Comm)
	switch {
	case v.KilledAt.IsZero():
		s += "not killed"
	case v.Gone:
		s += "killed, gone"
	default:
		s += "killed, not seen gone"
	}
	if v.Err != "" {
		s += ": " + v.Err
	}
	return s
}

// Identify returns pid with its start time, the identity a kill checks, for
// a caller that started the process itself (the operation).
func Identify(pid int) (model.PID, error) {
	st, err := procstat.Read("", pid)
	if err != nil {
		return model.PID{}, err
	}
	return model.PID{PID: pid, StartTime: st.StartTime}, nil
}
