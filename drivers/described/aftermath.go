package described

import (
	"context"
	"path/filepath"
	"slices"

	"strings"
	"time"

	"faultwin/drivers/hostview"
	"faultwin/internal/model"
)

// workloadName is session n's name, as the supervisor calls it.
func (d *Driver) workloadName(n int) string {
	return d.expand(Command{d.desc.Recovery.Workload}, n)[0]
}

func (d *Driver) finder() hostview.Finder { return hostview.ByEnv(d.desc.Recovery.Env, d.run) }

// locate finds a workload's identity file through its processes' root.
func (d *Driver) locate(name string) hostview.Locate {
	return hostview.InRoot(name, strings.TrimPrefix(d.desc.Recovery.Identity, "/"), d.finder())
}

// readBefore reads the identity of each cold session once its payload has
// written one (it starts counting at once; allow it 5 s). One read each:
// U1 compares the boot nonce and the counter, and asks only afterwards
// whether the workload runs.
func (d *Driver) readBefore(cold int) {
	d.before = nil
	for n := 1; n <= cold; n++ {
		name := d.workloadName(n)
		d.before = append(d.before, hostview.FirstRead(name, d.locate(name), 5*time.Second))
	}
}

// Aftermath implements drivers.Aftercarer from the description's recovery:
// look, clean up, retry, look, then read the target's identity.
func (d *Driver) Aftermath(ctx context.Context, w model.Window) *model.Aftermath {
	r := d.desc.Recovery
	rt := r.Retry[w.Operation]
	target := d.workloadName(1)
	if rt.Target != "" {
		target = d.expand(Command{rt.Target}, 1)[0]
	}
	a := &model.Aftermath{Supervisor: d.desc.Name, Operation: w.Operation, Target: target, Origin: target,
		Expect: rt.Expect, BoundMS: r.BoundMS, Before: slices.Clone(d.before), Calls: []model.UserCall{},
		Version: model.AftermathFiles, Manifests: slices.Clone(d.files)}
	if f := d.desc.Recovery.Files; f != nil {
		a.CheckpointKept = f.CheckpointKept
	}
	if d.opCall.What != "" {
		op := d.opCall
		a.Interrupted = &op
	}
	if len(a.Before) == 0 {
		a.Before = []model.Workload{}
	}
	t0 := time.Now()
	if restarted, err := d.ensureDaemon(ctx, "daemon restart"); restarted {
		// the user's first step after a daemon's death: start it again
		c := model.UserCall{Step: "look", What: "daemon restart", Argv: d.expand(d.desc.Daemon.Run, 1), MS: ms(time.Since(t0))}
		if err != nil {
			c.Exit, c.Output = 1, err.Error()
		}
		a.Calls = append(a.Calls, c)
	}
	names := []string{}
	for n := 1; n <= max(1, w.Precondition.Cold); n++ {
		names = append(names, d.workloadName(n))
	}
	if !slices.Contains(names, target) {
		names = append(names, target)
	}
	d.look(ctx, a, "after_death", names)
	for _, l := range r.Look {
		d.userCall(ctx, a, "look", d.words(l), l)
	}
	for _, cl := range r.Cleanup {
		d.userCall(ctx, a, "cleanup", d.words(cl), cl)
	}
	for _, cl := range rt.Run {
		d.userCall(ctx, a, "retry", d.words(cl), cl)
	}
	// the identities' first reads, the last look, then their second reads
	a.After = hostview.Identities(names, d.locate, func() { d.look(ctx, a, "after_retry", names) })
	for i := range a.After {
		if a.After[i].Name == a.Target {
			hostview.CheckRoot(a, "", &a.After[i])
		}
	}
	d.rescue(ctx, a, w.Operation, rt)
	hostview.CheckCheckpoints(a)
	return a
}

// listFiles lists, before the trigger, what the user keeps: the
// workload's files as its image gives them, and a checkpoint's.
func (d *Driver) listFiles(pre model.Precondition) {
	d.files = nil
	f := d.desc.Recovery.Files
	if f == nil {
		return
	}
	target := d.workloadName(1)
	if f.Image != "" {
		var skip []string
		for _, w := range f.Writes {
			skip = append(skip, strings.TrimPrefix(w, "/"))
		}
		d.files = append(d.files, hostview.ManifestOf(model.OfImage, target, d.expand(Command{f.Image}, 1)[0], nil, skip))
	}
	if !pre.Checkpoint {
		return
	}
	for _, g := range f.Checkpoint {
		pattern := d.expand(Command{g}, 1)[0]
		matches, _ := filepath.Glob(pattern)
		if len(matches) == 0 {
			d.files = append(d.files, model.Manifest{Of: model.OfCheckpoint, Workload: target, Root: pattern, Files: []model.FileEntry{},
				Err: "no checkpoint at " + pattern + " after the precondition's checkpoint"})
		}
		for _, m := range matches {
			d.files = append(d.files, hostview.ManifestOf(model.OfCheckpoint, target, m, nil, nil))
		}
	}
}

// rescue tries the description's expert steps in order while the user's
// recovery left the workload lost: each step's calls, the retry again,
// then the target's identity. It stops at the first that brings it back.
func (d *Driver) rescue(ctx context.Context, a *model.Aftermath, op string, rt Retry) {
	after, _ := workloadOf(a.After, a.Target)
	if lost, ok := a.Loss(a.Target, after); !ok || lost == "" {
		return
	}
	for _, e := range d.desc.Recovery.Expert {
		if !e.applies(op) {
			continue
		}
		r := model.Rescue{Step: e.Name, Desc: e.Desc, Target: a.Target, Calls: []int{}}
		for _, cl := range append(slices.Clone(e.Run), rt.Run...) {
			r.Calls = append(r.Calls, d.userCall(ctx, a, "expert", e.Name+": "+d.words(cl), cl))
		}
		r.After = hostview.Identities([]string{a.Target}, d.locate, nil)[0]
		hostview.CheckRoot(a, "", &r.After)
		a.Rescues = append(a.Rescues, r)
		if lost, _ := a.Loss(r.Target, r.After); lost == "" {
			return
		}
	}
}

func workloadOf(ws []model.Workload, name string) (model.Workload, bool) {
	for _, w := range ws {
		if w.Name == name {
			return w, true
		}
	}
	return model.Workload{Name: name, Err: "not read"}, false
}

// words names a call by its command without the base: "container restore
// fw1".
func (d *Driver) words(c Command) string {
	argv := d.expand(c, 1)
	if len(c) > 0 && c[0] == "{base}" {
		argv = argv[len(d.expand(d.desc.Base, 1)):]
	}
	return strings.Join(argv, " ")
}

// look lists the workloads as the supervisor reports them, through the
// one look loop (hostview.Look).
func (d *Driver) look(ctx context.Context, a *model.Aftermath, when string, names []string) {
	l := d.desc.Recovery.List
	hostview.Look(ctx, a, when, names, d.finder(), hostview.Lister{
		Call:  func() int { return d.userCall(ctx, a, "look", d.words(l.Run)+" ("+when+")", l.Run) },
		Parse: l.parse,
	})
}

// userCall runs one call of the user's recovery, bounded by bound_ms; a
// call still running then is recorded with what it waits on and killed.
// It returns the call's index in a.Calls.
func (d *Driver) userCall(ctx context.Context, a *model.Aftermath, step, what string, c Command) int {
	argv := d.expand(c, 1)
	uc := hostview.Call(ctx, d.command(argv), d.run, time.Duration(a.BoundMS)*time.Millisecond)
	uc.Step, uc.What = step, what
	d.calls = append(d.calls, call{What: "aftermath " + what, Argv: argv, Exit: uc.Exit, Signal: uc.Signal,
		TimedOut: uc.TimedOut, MS: uc.MS, Output: uc.Output})
	a.Calls = append(a.Calls, uc)
	return len(a.Calls) - 1
}
