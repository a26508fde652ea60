package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"faultwin/drivers"
	"faultwin/drivers/catalog"
	"faultwin/drivers/reclaim"
	"faultwin/internal/model"
	"faultwin/snapshots"
	"faultwin/snapshots/host"
	"faultwin/windows/runner"
)

const tryUsage = `usage: faultwin try [--supervisor FILE]... [--operation OP] [--path PATH] FILE|NAME

Runs a described supervisor's commands once, with no fault, on throwaway
runs under a state root of its own (a fresh temporary directory, never
the state root of windows), so that the author of a description sees,
before spending a soak, whether a failure is the supervisor's or the
description's. FILE is a description (its name must not be a known
supervisor's: give a copy a name of its own), NAME a known supervisor.

First the description's requires, as doctor checks them, and the host as
a window's preflight judges it. Then, for each operation (the least
demanding first), on a fresh run: the setup, the daemon if any, the
precondition the operation needs (cold sessions, checkpoint), the
operation, the recovery's list and look, the sweep; then, on another
fresh run, the recovery's retry of that operation on the same
precondition instead of the operation, and the sweep. The sweep runs
whatever failed before it. --operation tries one operation alone.

Each step prints its command as expanded, its exit, its time, the end of
what it wrote (the whole of it in the log file named), the roles of the
description whose first new process appeared during it (argv, comm,
cgroup), and for an operation the phases whose evidence was seen, in
order. A step that fails names the description's fields to look at; a
phase never seen names its evidence's field (an operation the supervisor
refused lists its phases as not reached: its refusal is the failure to
read, not the phases' evidence). A run whose phase went unseen is made
once more on a fresh run: a process that lives a few milliseconds can
pass between two looks at the process table. Seen then, the phase counts
as seen and try says it was missed once (a window killing there may now
and then be INVALID); unseen again, it is the description's. A call whose process exited
while another kept its stdout or stderr open is named with the holder:
the harness treats the call as over at its exit, as a window does.

Last, what the runs left on the host, by the judge hostcheck and every
preflight use, which the harness's last resort then removes, so the host
is clean after try whatever happened; the logs are kept.

Needs root and changes the host as a window does.

Exit status: 0 when every step ran, every phase was seen and nothing was
left, 1 otherwise (a requirement missing, an unclean host before or
after), 64 a usage error.
`

func runTry(ctx context.Context, stdout io.Writer, args []string) error {
	_, err := tryTrial(ctx, stdout, args)
	return err
}

// tryTrial is runTry returning the trial it made (nil when none ran), for
// a caller that reads its steps and verdicts rather than its printout.
func tryTrial(ctx context.Context, stdout io.Writer, args []string) (*trial, error) {
	fs := newFlags(stdout, "try", tryUsage)
	fs.supervisors()
	path := fs.String("path", "", "PATH to search for the commands requires names (default: the process's PATH)")
	only := fs.String("operation", "", "try only this operation (and its retry)")
	if err := fs.parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() != 1 {
		return nil, fs.usagef("name one description FILE or a known supervisor's NAME")
	}
	name, err := tryName(fs, fs.Arg(0))
	if err != nil {
		return nil, err
	}
	d, err := catalog.New(name, catalog.Options{})
	if err != nil {
		return nil, fs.usagef("%v", err)
	}
	if _, ok := d.(drivers.Tryer); !ok {
		return nil, fs.usagef("%s is not a supervisor described as data; try runs descriptions", name)
	}
	if spec, _ := catalog.Spec(name); *only != "" && !slices.Contains(spec.Operations, *only) {
		return nil, fs.usagef("--operation %s: %s has no such operation (have: %s)", *only, name, strings.Join(spec.Operations, ", "))
	}
	if hc, ok := d.(drivers.HostChecker); ok && !tryRequires(stdout, hc.CheckHost(ctx, *path)) {
		return nil, statusExit{exitFail, "try: " + name + "'s requires are not met (faultwin doctor says how to install them); nothing was run"}
	}
	dir, err := os.MkdirTemp("", "faultwin-try-")
	if err != nil {
		return nil, err
	}
	t := &trial{name: name, only: *only, root: filepath.Join(dir, "state"), logs: filepath.Join(dir, "logs"), w: stdout}
	return t, t.run(ctx)
}

// tryName is the supervisor to try: a known one's name, or the one FILE
// describes, loaded for the rest of the process.
func tryName(fs *verbFlags, arg string) (string, error) {
	if st, err := os.Stat(arg); err == nil && !st.IsDir() {
		name, err := catalog.NameIn(arg)
		if err != nil {
			fmt.Fprintln(fs.out, err)
			return "", statusExit{exitFail, "try: " + arg + " does not load (faultwin lint names each problem)"}
		}
		if d := catalog.Description(name); d != nil && builtinFile(arg, d.File) {
			return name, nil // a known description named by its file
		}
		if _, known := catalog.Spec(name); known && !slices.Contains(fs.supervisorFiles(), arg) {
			return "", fs.usagef("%s describes %q, the name of a known supervisor: give the copy a name of its own", arg, name)
		}
		catalog.Use(append(fs.supervisorFiles(), arg))
		return name, catalog.Err()
	}
	if err := catalog.Err(); err != nil {
		return "", err
	}
	if _, ok := catalog.Spec(arg); !ok {
		return "", fs.usagef("%s is neither a file nor a known supervisor (known: %s)", arg, strings.Join(catalog.Names(), ", "))
	}
	return arg, nil
}

// builtinFile says whether a and b (a built-in description's path from the
// repository's root) name one file.
func builtinFile(a, b string) bool {
	abs, err := filepath.Abs(a)
	if err != nil {
		return false
	}
	return abs == b || strings.HasSuffix(abs, "/"+strings.TrimPrefix(b, "./"))
}

func (f *verbFlags) supervisorFiles() []string {
	if f.sups == nil {
		return nil
	}
	return slices.Clone(*f.sups)
}

// tryRequires prints the requirements as doctor does; false when one is
// missing.
func tryRequires(w io.Writer, ps []drivers.Prerequisite) bool {
	ok := true
	fmt.Fprintln(w, "requires:")
	for _, p := range ps {
		word := "OK"
		if !p.OK {
			word, ok = "MISSING", false
		}
		fmt.Fprintf(w, "  %-7s %s: %s\n", word, p.Name, p.Detail)
		if !p.OK && p.Fix != "" {
			fmt.Fprintf(w, "          provided by %s\n", p.Fix)
		}
	}
	return ok
}

// trial is one try: its state root, its logs, its runs, and what they
// showed, as its printout says it.
type trial struct {
	name, root, logs string
	only             string // the one operation to try; "": every one
	w                io.Writer
	scopes           []model.Scope
	errs             []string // runs that could not be made
	// runs are every run made, in order; a run whose phases went unseen
	// is made once more, and when the second run saw them the first was
	// missed once (a short-lived process passed between two looks).
	runs []*tryRun
	// preLeft is what made the host unclean before the try (nothing ran);
	// readErr why the host could not be read after the runs; clean whether
	// it was clean after the last resort.
	preLeft []string
	readErr error
	clean   bool
}

// tryRun is one run of a try: its steps, and whether the run made again
// saw the phases this one missed.
type tryRun struct {
	steps  []drivers.TryStep
	missed bool
}

// failed names the steps that failed, but for the phases a run missed
// once; unseen the phases no run of their operation saw.
func (t *trial) failed() []string {
	var out []string
	for _, r := range t.runs {
		for _, s := range r.steps {
			if s.Failed() && !r.missed {
				out = append(out, s.Run+" "+s.What)
			}
		}
	}
	return append(slices.Clone(t.errs), out...)
}

func (t *trial) unseen() []string {
	var out []string
	for _, r := range t.runs {
		if !r.missed {
			out = append(out, neverSeen(r.steps)...)
		}
	}
	return out
}

// missedOnce names the phases a first run missed and a second saw.
func (t *trial) missedOnce() []string {
	var out []string
	for _, r := range t.runs {
		if r.missed {
			out = append(out, neverSeen(r.steps)...)
		}
	}
	return out
}

func (t *trial) run(ctx context.Context) error {
	roots := runner.AllRoots(snapshots.DefaultRoots(t.root))
	pre, err := reclaim.Judge(ctx, "try", roots)
	if err != nil {
		return fmt.Errorf("reading host state: %w", err)
	}
	if !pre.Clean() {
		t.preLeft = pre.Left
		fmt.Fprintf(t.w, "host NOT clean before try (%d leftovers); nothing was run:\n", len(pre.Left))
		for _, l := range pre.Left {
			fmt.Fprintln(t.w, "  -", l)
		}
		fmt.Fprint(t.w, runner.HowToClean(model.DefaultStateRoot))
		t.remove()
		return statusExit{exitFail, "try: the host is not clean"}
	}
	fmt.Fprintf(t.w, "try %s: state root %s, logs %s\n", t.name, t.root, t.logs)
	d, _ := catalog.New(t.name, catalog.Options{StateRoot: t.root})
	for _, r := range d.(drivers.Tryer).TryRuns() {
		if ctx.Err() != nil {
			break
		}
		if t.only != "" && r.Operation != t.only {
			continue
		}
		first := t.one(ctx, r)
		if unseen := neverSeen(first.steps); len(unseen) > 0 && ctx.Err() == nil {
			// A role's process that lives a few milliseconds can pass
			// between two looks at the process table, more so on a busy
			// host: a description's fault shows on every run, a miss not.
			fmt.Fprintf(t.w, "\n%s never seen: the same once more on a fresh run, since a process that lives a few ms can be missed\n", strings.Join(unseen, ", "))
			if missedOnce(first.steps, t.one(ctx, r).steps) {
				fmt.Fprintf(t.w, "seen on the second run: %s missed once, not the description's fault (a window killing there may now and then be INVALID, its fault never fired)\n", strings.Join(unseen, ", "))
				first.missed = true
			}
		}
	}
	// interrupted or not, what the runs left is judged and removed
	ctx = context.WithoutCancel(ctx)
	// what the runs left is judged as a window of this supervisor judges
	// it, by its own names: another supervisor's state glob can match
	// inside a run's state dir (podman's {state}/runc/* is containerd's
	// runc namespace dir) without naming anything this supervisor keeps
	spec, _ := catalog.Spec(t.name)
	left := t.left(ctx, runner.WithNames(snapshots.DefaultRoots(t.root), spec.Names), pre.Snapshot)
	clean := t.sweep(ctx, roots)
	t.clean = clean
	t.remove()
	var errs []string
	if failed := t.failed(); len(failed) > 0 {
		errs = append(errs, fmt.Sprintf("%d steps failed (%s)", len(failed), strings.Join(failed, "; ")))
	}
	if len(left) > 0 {
		errs = append(errs, fmt.Sprintf("%d leftovers after the sweeps", len(left)))
	}
	if !clean {
		errs = append(errs, "the host is NOT clean after the last resort: faultwin sweep, then faultwin hostcheck")
	}
	if len(errs) > 0 {
		return statusExit{exitFail, "try " + t.name + ": " + strings.Join(errs, "; ")}
	}
	if missed := t.missedOnce(); len(missed) > 0 {
		fmt.Fprintf(t.w, "try %s: every step ran, every phase was seen (%s on a second run), nothing was left\n", t.name, strings.Join(missed, ", "))
		return nil
	}
	fmt.Fprintf(t.w, "try %s: every step ran, every phase was seen, nothing was left\n", t.name)
	return nil
}

// missedOnce says whether a first run whose phases went unseen failed
// only by them, and the same made again failed in nothing: its phases were
// missed, not wrongly described.
func missedOnce(first, again []drivers.TryStep) bool {
	return len(again) > 0 && len(neverSeen(first)) > 0 && !slices.ContainsFunc(first, drivers.TryStep.Erred) &&
		!slices.ContainsFunc(again, drivers.TryStep.Failed)
}

// neverSeen names the phases of steps that went unseen while their step
// ran ("rm.runc_kill").
func neverSeen(steps []drivers.TryStep) []string {
	var out []string
	for _, s := range steps {
		for _, p := range s.NeverSeen() {
			out = append(out, strings.TrimPrefix(s.What, "operation ")+"."+p.Name)
		}
	}
	return out
}

// one makes one run of the try and returns it, as t.runs holds it.
func (t *trial) one(ctx context.Context, r drivers.TryRun) *tryRun {
	run := runner.NewRunID()
	what := "operation " + r.Operation
	if r.Retry {
		what = "the retry of " + r.Operation
	}
	fmt.Fprintf(t.w, "\nrun %s: %s (needs %s)\n", run, what, r.Needs)
	d, err := catalog.New(t.name, catalog.Options{StateRoot: t.root, LogDir: filepath.Join(t.logs, run)})
	if err != nil {
		t.errs = append(t.errs, err.Error())
		return &tryRun{}
	}
	defer d.Close()
	t.scopes = append(t.scopes, model.NewScope(t.root, run))
	tr := &tryRun{}
	d.(drivers.Tryer).Try(ctx, r, run, func(s drivers.TryStep) {
		tr.steps = append(tr.steps, s)
		renderStep(t.w, s)
	})
	t.runs = append(t.runs, tr)
	return tr
}

// left is what the runs left after their sweeps, by the judge every
// preflight uses, with what appeared under host-global names claimed for
// the runs first, as a window claims it.
func (t *trial) left(ctx context.Context, roots snapshots.Roots, pre snapshots.Snapshot) []string {
	s, err := host.Capture(ctx, "try", roots, snapshots.Decoys{})
	for _, sc := range t.scopes {
		if err != nil {
			break
		}
		s, err = reclaim.Claim(roots, sc, pre, s)
	}
	if err != nil {
		t.readErr = err
		fmt.Fprintf(t.w, "\nleft on the host: not read: %v\n", err)
		return []string{err.Error()}
	}
	j, err := reclaim.Judge(ctx, "try", roots)
	if err != nil {
		t.readErr = err
		fmt.Fprintf(t.w, "\nleft on the host: not read: %v\n", err)
		return []string{err.Error()}
	}
	spec, _ := catalog.Spec(t.name)
	left, kept := splitKept(j.Left, spec.Names.Shared)
	if len(kept) > 0 {
		fmt.Fprintf(t.w, "\nkept after the sweeps by design (the description's shared), %d; the last resort removes them:\n", len(kept))
		for _, l := range kept[:min(5, len(kept))] {
			fmt.Fprintln(t.w, "  -", l)
		}
		if len(kept) > 5 {
			fmt.Fprintf(t.w, "  - and %d more\n", len(kept)-5)
		}
	}
	if len(left) == 0 {
		fmt.Fprintln(t.w, "\nleft on the host after the sweeps: nothing")
		return nil
	}
	fmt.Fprintf(t.w, "\nleft on the host after the sweeps (%d): what the description's sweep does not remove\n", len(left))
	for _, l := range left {
		fmt.Fprintln(t.w, "  -", l)
	}
	return left
}

// splitKept separates the leftovers the description keeps by design (a
// shared key glob matches the leftover's key, the text before ": ").
func splitKept(all, shared []string) (left, kept []string) {
	for _, l := range all {
		key, _, _ := strings.Cut(l, ": ")
		if slices.ContainsFunc(shared, func(g string) bool { ok, _ := path.Match(g, key); return ok }) {
			kept = append(kept, l)
			continue
		}
		left = append(left, l)
	}
	return left, kept
}

// sweep gives every run the harness's last resort, the host-global names
// the runs claimed included (they are try's own), then judges the host.
func (t *trial) sweep(ctx context.Context, roots snapshots.Roots) bool {
	tables, _ := catalog.LastResort(t.name)
	var errs []string
	for _, sc := range t.scopes {
		r := reclaim.Run(ctx, reclaim.Plan{Scope: sc, Roots: roots, EmptyTables: tables, RemoveStateDir: true, Names: true})
		errs = append(errs, r.Errors...)
	}
	if err := sweepOrphans(ctx, io.Discard, t.root); err != nil {
		errs = append(errs, err.Error())
	}
	j, err := reclaim.Judge(ctx, "try", roots)
	switch {
	case err != nil:
		t.readErr = err
		fmt.Fprintf(t.w, "host after the last resort: not read: %v\n", err)
		return false
	case !j.Clean():
		fmt.Fprintf(t.w, "host NOT clean after the last resort (%d):\n", len(j.Left))
		for _, l := range append(j.Left, errs...) {
			fmt.Fprintln(t.w, "  -", l)
		}
		return false
	}
	fmt.Fprintln(t.w, "host clean after the last resort")
	return true
}

// remove deletes the try's state root and tie records; the logs stay.
func (t *trial) remove() {
	err := errors.Join(os.RemoveAll(t.root), os.RemoveAll(snapshots.RecordsDir(t.root)))
	if err != nil {
		fmt.Fprintf(t.w, "try: removing %s: %v\n", t.root, err)
	}
}
