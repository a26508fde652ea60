package described

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"faultwin/drivers"
	"faultwin/drivers/hostview"
	"faultwin/drivers/triggers"
	"faultwin/internal/model"
)

// TryRuns implements drivers.Tryer: each operation on a fresh run, the
// least demanding first (fewest cold sessions, no checkpoint), each
// followed by a run of its retry when the recovery gives one. A retry is
// tried on the operation's precondition, as after a kill that landed
// before the operation did anything: after the operation succeeded it
// would act on what the operation already did.
func (d *Driver) TryRuns() []drivers.TryRun {
	ops := slices.Collect(maps.Keys(d.desc.Operations))
	slices.SortFunc(ops, func(a, b string) int {
		na, nb := d.desc.Operations[a].Needs, d.desc.Operations[b].Needs
		if c := cmp.Compare(na.Cold, nb.Cold); c != 0 {
			return c
		}
		if na.Checkpoint != nb.Checkpoint {
			if na.Checkpoint {
				return 1
			}
			return -1
		}
		return cmp.Compare(a, b)
	})
	var out []drivers.TryRun
	for _, op := range ops {
		n := d.desc.Operations[op].Needs
		needs := fmt.Sprintf("cold %d", n.Cold)
		if n.Checkpoint {
			needs += ", checkpoint"
		}
		out = append(out, drivers.TryRun{Operation: op, Needs: needs})
		if len(d.desc.Recovery.Retry[op].Run) > 0 {
			out = append(out, drivers.TryRun{Operation: op, Retry: true, Needs: needs})
		}
	}
	return out
}

// Try implements drivers.Tryer.
func (d *Driver) Try(ctx context.Context, r drivers.TryRun, run string, emit func(drivers.TryStep)) {
	d.init(run)
	t := &tryer{d: d, emit: emit}
	defer t.sweep(context.WithoutCancel(ctx))
	if err := os.MkdirAll(d.vars["assets"], 0o755); err != nil {
		t.fail("state dir", err)
		return
	}
	if err := os.WriteFile(MarkerPath(d.scope.StateDir), []byte(d.desc.Name+"\n"), 0o644); err != nil {
		t.fail("state dir", err)
		return
	}
	for i, c := range d.desc.Setup {
		if !t.call(ctx, fmt.Sprintf("setup %d", i+1), fmt.Sprintf("setup[%d]", i), c, 1, "") {
			return
		}
	}
	if d.desc.Daemon != nil && !t.daemon(ctx) {
		return
	}
	op := d.desc.Operations[r.Operation]
	for n := 1; n <= op.Needs.Cold; n++ {
		if !t.call(ctx, fmt.Sprintf("precondition cold %d", n), "precondition.cold", d.desc.Precondition.Cold, n, "") {
			return
		}
	}
	if op.Needs.Checkpoint && !t.call(ctx, "precondition checkpoint", "precondition.checkpoint", d.desc.Precondition.Checkpoint, 1, "") {
		return
	}
	rec := d.desc.Recovery
	if r.Retry {
		// A retry whose target only the operation makes (start's fw2) has
		// nothing to act on after the precondition: the operation runs
		// first, with no fault, and the retry then meets a completed
		// operation, which it may refuse; that refusal is shown, not
		// failed (an interrupted operation is what a window gives it).
		excuse := ""
		if tg := rec.Retry[r.Operation].Target; tg != "" && !t.precondition(tg, op.Needs.Cold) {
			if !t.call(ctx, "operation "+r.Operation, "operations."+r.Operation+".run", op.Run, 1, r.Operation) {
				return
			}
			excuse = "the retry targets " + tg + ", which only the operation makes: after the operation completed, with no fault, it may refuse"
		}
		for i, c := range rec.Retry[r.Operation].Run {
			if !t.call(ctx, fmt.Sprintf("retry %s %d", r.Operation, i+1), fmt.Sprintf("recovery.retry.%s.run[%d]", r.Operation, i), c, 1, "", excuse) && excuse == "" {
				return
			}
		}
	} else if !t.call(ctx, "operation "+r.Operation, "operations."+r.Operation+".run", op.Run, 1, r.Operation) {
		return
	}
	if len(rec.List.Run) > 0 && !t.call(ctx, "recovery list", "recovery.list.run", rec.List.Run, 1, "") {
		return
	}
	for i, c := range rec.Look {
		excuse := ""
		if rec.Retry[r.Operation].Expect == "absent" {
			excuse = "the retry of " + r.Operation + " expects the workload absent after it, so a look at it may fail"
		}
		if !t.call(ctx, fmt.Sprintf("recovery look %d", i+1), fmt.Sprintf("recovery.look[%d]", i), c, 1, "", excuse) && excuse == "" {
			return
		}
	}
}

// precondition reports whether the precondition's cold workloads include
// the one named name.
func (t *tryer) precondition(name string, cold int) bool {
	for n := 1; n <= cold; n++ {
		if w := t.d.expand(Command{t.d.desc.Recovery.Workload}, n); len(w) == 1 && w[0] == name {
			return true
		}
	}
	return false
}

// tryer is one try's run: its steps so far.
type tryer struct {
	d    *Driver
	emit func(drivers.TryStep)
	n    int
}

func (t *tryer) fail(what string, err error) {
	t.emit(drivers.TryStep{Run: t.d.run, What: what, Err: err.Error()})
}

// call runs one command of the description as a window would, watching
// the run's roles (and, for an operation, its phases) while it runs.
func (t *tryer) call(ctx context.Context, what, field string, c Command, n int, op string, excuse ...string) bool {
	d := t.d
	argv := d.expand(c, n)
	plan := triggers.Plan{Run: d.run, Roles: d.roles(), Observe: true}
	if op != "" {
		plan.Phases = d.phases(op)
	}
	// Started once the command runs, as a window's trigger is: its
	// processes are the run's by descent from it, whatever their
	// environment.
	var w *triggers.Watcher
	werr := errors.New("the command did not start")
	uc, err := hostview.RunWatched(ctx, d.command(argv), d.run, d.timeout(), func(pid int) {
		id, ierr := triggers.Identify(pid)
		if ierr != nil {
			werr = ierr
			return
		}
		w, werr = triggers.Start(ctx, plan, id)
	})
	d.calls = append(d.calls, call{What: what, Argv: argv, MS: uc.MS, Output: uc.Output,
		Exit: uc.Exit, Signal: uc.Signal, TimedOut: uc.TimedOut, HeldOpen: uc.HeldOpen})
	s := drivers.TryStep{Run: d.run, What: what, Look: t.look(field, c), Argv: argv, Exit: uc.Exit, Signal: uc.Signal,
		TimedOut: uc.TimedOut, Seconds: uc.MS / 1000, Output: uc.Output, HeldOpen: uc.HeldOpen}
	if err != nil {
		s.Err = err.Error()
		if len(excuse) > 0 && !uc.TimedOut {
			s.Excused = excuse[0]
		}
	}
	if werr != nil {
		s.Notes = append(s.Notes, "roles not watched: "+werr.Error())
	} else {
		// roles that outlive the call (a "gone" phase's) get a moment
		grace := time.Duration(0)
		if op != "" {
			grace = 200 * time.Millisecond
		}
		res := w.Finish(grace)
		s.Roles = tryRoles(res.Fresh)
		if op != "" {
			s.Phases = t.phases(op, res)
		}
	}
	if field == "recovery.list.run" && err == nil {
		note, lerr := t.listed(uc)
		s.Notes = append(s.Notes, note)
		if lerr != nil {
			s.ListErr = lerr.Error()
		}
	}
	s.Log = t.log(what, uc.Output)
	t.emit(s)
	return err == nil
}

// tryRoles are the roles' first new processes; an argv read empty (the
// process was caught mid-exec) is read again from the same process, if it
// still runs.
func tryRoles(fresh []triggers.Appearance) []drivers.TryRole {
	var out []drivers.TryRole
	for _, a := range fresh {
		argv := a.Argv
		if len(argv) == 0 || argv[0] == "" {
			if id, err := triggers.Identify(a.PID.PID); err == nil && id == a.PID {
				b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", a.PID.PID))
				argv = strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")
			}
		}
		out = append(out, drivers.TryRole{Role: a.Role, PID: a.PID.PID, Comm: a.Comm, Argv: argv, Cgroup: a.Cgroup})
	}
	return out
}

// daemon starts the run's daemon and waits until it is ready.
func (t *tryer) daemon(ctx context.Context) bool {
	d := t.d
	w, werr := triggers.Start(ctx, triggers.Plan{Run: d.run, Roles: d.roles(), Observe: true}, model.PID{})
	err := d.startDaemon(ctx, "daemon start")
	c := d.calls[len(d.calls)-1]
	s := drivers.TryStep{Run: d.run, What: "daemon start", Look: t.look("daemon.run", d.desc.Daemon.Run), Argv: c.Argv,
		Exit: c.Exit, Seconds: c.MS / 1000, Output: c.Output}
	s.Look = append(s.Look, t.look("daemon.ready", d.desc.Daemon.Ready)...)
	s.Look = slices.Compact(s.Look)
	if err != nil {
		s.Err = err.Error()
	}
	if werr == nil {
		s.Roles = tryRoles(w.Finish(0).Fresh)
	}
	s.Notes = append(s.Notes, "the daemon runs until the sweep stops it")
	s.Log = t.log("daemon start", c.Output)
	t.emit(s)
	return err == nil
}

// sweep runs the description's sweep and stops the daemon, whatever
// happened before.
func (t *tryer) sweep(ctx context.Context) {
	d := t.d
	if d.desc.Daemon != nil && !d.daemon.alive() {
		// a sweep that needs the daemon gets one, as a window's does
		if _, err := d.ensureDaemon(ctx, "sweep: daemon start"); err != nil {
			t.fail("sweep: daemon start", err)
		}
	}
	for i, c := range d.desc.Sweep {
		t.call(ctx, fmt.Sprintf("sweep %d", i+1), fmt.Sprintf("sweep[%d]", i), c, 1, "",
			"a sweep's command may refuse what is not there to clean; the sweep is judged by what it leaves (below)")
	}
	if err := d.stopDaemon("daemon stop"); err != nil {
		s := drivers.TryStep{Run: d.run, What: "daemon stop", Look: []string{"daemon.stop_ms", "daemon.run"}, Err: err.Error()}
		if c := d.calls[len(d.calls)-1]; c.What == "daemon stop" {
			s.Seconds, s.Output, s.Signal, s.Exit = c.MS/1000, c.Output, c.Signal, c.Exit
			s.Log = t.log("daemon", c.Output)
		}
		t.emit(s)
	}
}

// look is the fields a failure of a command from field points at: the
// field, then base and each var it uses.
func (t *tryer) look(field string, c Command) []string {
	out := []string{field}
	add := func(f string) {
		if !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	for _, a := range c {
		if a == "{base}" {
			add("base")
			continue
		}
		for _, m := range placeholder.FindAllStringSubmatch(a, -1) {
			if _, ok := t.d.desc.Vars[m[1]]; ok {
				add("vars." + m[1])
			}
		}
	}
	return out
}

// phases lists op's phases: those seen, in the order they were entered,
// then those never seen with the field their evidence is.
func (t *tryer) phases(op string, res triggers.Result) []drivers.TryPhase {
	defs := t.d.desc.Operations[op].Phases
	var out []drivers.TryPhase
	seen := map[string]bool{}
	if res.Landing != nil {
		for _, ph := range res.Landing.Seen {
			seen[ph.Name] = true
			out = append(out, drivers.TryPhase{Name: ph.Name, Seen: true, At: ph.At.Sub(res.Start).Seconds(), Evidence: ph.Evidence})
		}
	}
	for i, ph := range defs {
		if seen[ph.Name] {
			continue
		}
		ev := phaseEvidence(ph)
		kind, _, _ := strings.Cut(ev, " ")
		field := fmt.Sprintf("operations.%s.phases[%d].%s", op, i, kind)
		switch role := ph.Appeared + ph.Gone + ph.Forked; {
		case ev == "":
			field = fmt.Sprintf("operations.%s.phases[%d]", op, i)
		case role != "":
			field += " and roles." + role
		}
		out = append(out, drivers.TryPhase{Name: ph.Name, Evidence: ev, Field: field})
	}
	return out
}

// listed says what the recovery's list reported, as a window reads it,
// and why it could not be read.
func (t *tryer) listed(uc model.UserCall) (string, error) {
	rep, bad, err := t.d.desc.Recovery.List.parse(uc.ListOutput())
	if err != nil {
		return "list not read: " + err.Error() + " (look at recovery.list)", err
	}
	var parts []string
	for _, r := range rep {
		parts = append(parts, r.Name+" "+r.Raw+" ("+cmp.Or(r.State, "unknown state")+")")
	}
	s := "listed: " + cmp.Or(strings.Join(parts, ", "), "nothing")
	if len(bad) > 0 {
		s += fmt.Sprintf("; %d entries not read (look at recovery.list): %s", len(bad), strings.Join(bad, " | "))
	}
	return s, nil
}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// log writes a step's whole output to the run's log dir and returns its
// path ("" without a log dir).
func (t *tryer) log(what, out string) string {
	if t.d.logDir == "" {
		return ""
	}
	t.n++
	if err := os.MkdirAll(t.d.logDir, 0o755); err != nil {
		return ""
	}
	f := filepath.Join(t.d.logDir, fmt.Sprintf("%02d-%s.log", t.n, unsafeName.ReplaceAllString(what, "-")))
	if os.WriteFile(f, []byte(out), 0o644) != nil {
		return ""
	}
	return f
}
