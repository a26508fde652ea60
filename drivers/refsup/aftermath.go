package refsup

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"faultwin/drivers/hostview"
	"faultwin/fixtures/refsup/api"
	"faultwin/internal/model"
)

// AftermathBound is how long a refsup look (list, inspect, unlock) may take
// after the death before it counts as a hang: it reads the ledger and /proc
// and answers in milliseconds. A retry of an operation (restore, checkpoint,
// destroy) is bounded as the operation is, by OpBound: refsup's restore
// waits up to 10 s for its workload to count again, which a host whose
// cores are all busy can stretch past 5 s (a restore takes about 0.4 s on
// a quiet host); it hangs only when it outlives what refsup itself waits.
const AftermathBound = 5 * time.Second

// retryVerbs are the verbs a user retries after the death: bounded by
// OpBound, each call recording it.
var retryVerbs = map[string]bool{"restore": true, "checkpoint": true, "destroy": true}

// states maps refsup's session states to what they claim of the host: a
// session in any state of the ledger has its processes, as far as refsup
// knows; "dead" is the state a restart gives a session whose processes are
// gone ("lost": a settle found nothing usable). A session not listed is
// absent.
var states = map[string]string{
	"running": model.StateRunning, "ready": model.StateRunning, "registered": model.StateRunning,
	"restoring": model.StateRunning, "checkpointing": model.StateRunning, "destroying": model.StateRunning,
	"dead": model.StateStopped, "lost": model.StateStopped,
}

func (d *Driver) finder() hostview.Finder { return hostview.ByCgroup("/faultwin/" + d.run) }

func (d *Driver) locate(session string) hostview.Locate {
	return hostview.InRoot(session, "faultwin/counter", d.finder())
}

// readBefore reads a session's identity before anything acts on it, once
// (U1 compares its boot nonce and counter).
func (d *Driver) readBefore(session string) {
	d.before = append(d.before, hostview.FirstRead(session, d.locate(session), 5*time.Second))
}

// Aftermath implements drivers.Aftercarer with refsup's own verbs: start
// the supervisor again on the run (`serve --recover`), list and inspect,
// retry the operation (a restore of the checkpoint; a checkpoint, then a
// restore of the session's newest checkpoint; a destroy), list again, and
// read the target's identity from the host. The restarted supervisor is
// stopped before the sweeps.
func (d *Driver) Aftermath(ctx context.Context, w model.Window) *model.Aftermath {
	a := &model.Aftermath{Supervisor: Name, Operation: w.Operation, BoundMS: int(AftermathBound.Milliseconds()),
		Before: slices.Clone(d.before), Calls: []model.UserCall{}, Interrupted: d.opCall, Version: model.AftermathFiles,
		Manifests: slices.Clone(d.files), CheckpointKept: true}
	if a.Before == nil {
		a.Before = []model.Workload{}
	}
	switch {
	case model.IsRecovery(w.Operation):
		why := "the window restarts refsup itself and R1-R4 judge what the restart settled"
		a.NotApplicable = map[string]string{model.U1: why, model.U2: why, model.U3: why}
		return a
	case w.Operation == "sweep":
		why := "the operation is the user's own removal of the run (refsup sweep), run again as the window's sweep; P1-P6 judge what it leaves"
		a.NotApplicable = map[string]string{model.U1: why, model.U2: why, model.U3: why}
		return a
	}
	names := d.known()
	switch w.Operation {
	case "restore":
		a.Expect, a.Origin = model.ExpectContinue, d.origin
	case "checkpoint", "idle":
		a.Origin = d.first()
		a.Expect = model.ExpectContinue
		a.Target = d.first()
	case "destroy":
		a.Expect = model.ExpectAbsent
		a.Target = d.first()
	default:
		a.Err = "no retry known for operation " + w.Operation
		return a
	}
	t0 := time.Now()
	rerr := d.Restart(ctx, "")
	restart := model.UserCall{Step: "look", What: "refsup serve --recover", MS: float64(time.Since(t0).Microseconds()) / 1000,
		Argv: []string{d.Bin, "serve", "--root", d.Root, "--run", d.run, "--recover"}}
	if rerr != nil {
		restart.Exit, restart.Output = 1, rerr.Error()
	}
	a.Calls = append(a.Calls, restart)
	defer func() { _ = d.Stop() }()
	d.look(ctx, a, "after_death", names)
	if t := a.Target; t != "" {
		d.userCall(ctx, a, "look", "inspect "+t, "inspect", "--session", t)
	}
	var ckpt string
	switch w.Operation {
	case "restore":
		ckpt = d.ckpt
		a.Target = d.retryRestore(ctx, a, "retry", ckpt)
	case "checkpoint":
		d.userCall(ctx, a, "retry", "retry checkpoint", "checkpoint", "--session", a.Target)
		ckpt = d.newestCheckpoint(ctx, a, a.Target)
		a.Target = d.retryRestore(ctx, a, "retry", ckpt)
	case "destroy":
		d.userCall(ctx, a, "retry", "retry destroy", "destroy", "--session", a.Target)
	}
	if a.Target != "" && !slices.Contains(names, a.Target) {
		names = append(names, a.Target)
	}
	var read []string
	for _, n := range names {
		if n == a.Target || slices.ContainsFunc(a.Before, func(b model.Workload) bool { return b.Name == n }) {
			read = append(read, n)
		}
	}
	// the identities' first reads, the last look, then their second reads
	a.After = hostview.Identities(read, d.locate, func() { d.look(ctx, a, "after_retry", names) })
	for i := range a.After {
		if a.After[i].Name == a.Target {
			hostview.CheckRoot(a, a.Origin, &a.After[i])
		}
	}
	d.rescue(ctx, a, ckpt)
	hostview.CheckCheckpoints(a)
	return a
}

// unlockStep is refsup's one expert step: releasing a checkpoint's restore
// lock by hand (`refsup unlock`), which no user verb does.
const unlockStep = "refsup-unlock"

// rescue tries the expert step while the user's restore left the workload
// lost: unlock the checkpoint, restore it again, read the new session.
func (d *Driver) rescue(ctx context.Context, a *model.Aftermath, ckpt string) {
	after := model.Workload{Name: a.Target, Err: "not read"}
	for _, w := range a.After {
		if w.Name == a.Target {
			after = w
		}
	}
	if lost, ok := a.Loss(a.Target, after); ckpt == "" || !ok || lost == "" {
		return
	}
	r := model.Rescue{Step: unlockStep, Desc: "release the checkpoint's restore lock by hand (refsup unlock), then restore it again"}
	r.Calls = append(r.Calls, d.userCall(ctx, a, "expert", unlockStep+": unlock "+ckpt, "unlock", "--checkpoint", ckpt))
	r.Target = d.retryRestore(ctx, a, "expert", ckpt)
	r.Calls = append(r.Calls, len(a.Calls)-1)
	r.After = model.Workload{Name: r.Target, Err: "no session came out of the restore"}
	if r.Target != "" {
		r.After = hostview.Identities([]string{r.Target}, d.locate, nil)[0]
		hostview.CheckRoot(a, a.Origin, &r.After)
	}
	a.Rescues = append(a.Rescues, r)
}

// known are the sessions the precondition made, the checkpoint's origin
// first.
func (d *Driver) known() []string {
	var out []string
	if d.origin != "" {
		out = append(out, d.origin)
	}
	out = append(out, d.restored...)
	return append(out, d.sessions...)
}

func (d *Driver) first() string {
	if len(d.sessions) > 0 {
		return d.sessions[0]
	}
	return ""
}

// retryRestore restores ckpt as a user would and returns the new session.
func (d *Driver) retryRestore(ctx context.Context, a *model.Aftermath, step, ckpt string) string {
	if ckpt == "" {
		return ""
	}
	i := d.userCall(ctx, a, step, "retry restore "+ckpt, "restore", "--checkpoint", ckpt)
	var info api.SessionInfo
	if a.Calls[i].Failed() || json.Unmarshal([]byte(a.Calls[i].Output), &info) != nil {
		return ""
	}
	return info.Session
}

// newestCheckpoint lists the run and returns the session's newest ready
// checkpoint.
func (d *Driver) newestCheckpoint(ctx context.Context, a *model.Aftermath, session string) string {
	i := d.userCall(ctx, a, "look", "list checkpoints", "list")
	var l api.ListInfo
	if a.Calls[i].Failed() || json.Unmarshal([]byte(a.Calls[i].Output), &l) != nil {
		return ""
	}
	var last api.CheckpointInfo
	for _, c := range l.Checkpoints {
		if c.Session == session && c.State == "ready" {
			last = c
		}
	}
	return last.Checkpoint
}

// look lists the sessions through the one look loop (hostview.Look).
func (d *Driver) look(ctx context.Context, a *model.Aftermath, when string, names []string) {
	hostview.Look(ctx, a, when, names, d.finder(), hostview.Lister{
		Call:  func() int { return d.userCall(ctx, a, "look", "list ("+when+")", "list") },
		Parse: parseList,
	})
}

// parseList reads the sessions refsup's list reports.
func parseList(output string) ([]model.Reported, []string, error) {
	var l api.ListInfo
	if err := json.Unmarshal([]byte(output), &l); err != nil {
		return nil, nil, fmt.Errorf("list output: %w", err)
	}
	rep := []model.Reported{}
	for _, s := range l.Sessions {
		rep = append(rep, model.Reported{Name: s.Session, State: states[s.State], Raw: s.State})
	}
	return rep, nil, nil
}

// userCall runs `refsup <verb> --root R --run r <args>` as a user would,
// bounded; a call still running at the bound is recorded with what it
// waits on and killed. It returns the call's index.
func (d *Driver) userCall(ctx context.Context, a *model.Aftermath, step, what string, verb string, args ...string) int {
	bound := AftermathBound
	if retryVerbs[verb] {
		bound = OpBound
	}
	uc, _ := d.bounded(ctx, bound, verb, args...)
	uc.Step, uc.What, uc.Output = step, what, strings.TrimSpace(uc.Output)
	if bound != AftermathBound {
		uc.BoundMS = int(bound.Milliseconds())
	}
	a.Calls = append(a.Calls, uc)
	return len(a.Calls) - 1
}
