package criteria

import (
	"cmp"
	"slices"
	"strconv"
	"strings"

	"faultwin/internal/model"
)

// aftermathJudge starts judging criterion id of the window's aftermath. A
// criterion that does not apply to the window comes back as its result (it
// holds, and says why); otherwise the judge carries the gaps of a missing
// or broken aftermath.
func aftermathJudge(in Input, id string) (*judge, *Result) {
	j := &judge{id: id}
	a := in.Aftermath
	switch {
	case a == nil:
		j.gap("no aftermath recorded: the user's recovery was never run")
	case a.NotApplicable[id] != "":
		return nil, &Result{ID: id, Judged: true, Pass: true, Summary: "does not apply: " + a.NotApplicable[id]}
	case a.Err != "":
		j.gap("the user's recovery broke: " + a.Err)
	}
	return j, nil
}

// workload returns the named workload of ws.
func workload(ws []model.Workload, name string) (model.Workload, bool) {
	for _, w := range ws {
		if w.Name == name {
			return w, true
		}
	}
	return model.Workload{}, false
}

// lastRetry is the call that decided what the retry left: the last one.
func lastRetry(a *model.Aftermath) (model.UserCall, bool) {
	for i := len(a.Calls) - 1; i >= 0; i-- {
		if a.Calls[i].Step == "retry" {
			return a.Calls[i], true
		}
	}
	return model.UserCall{}, false
}

// reported says whether the user was told: the call that decided the
// outcome failed and said why.
func reported(c model.UserCall, ok bool) (string, bool) {
	if !ok || !c.Failed() {
		return "", false
	}
	msg := lastLine(c.Output)
	if msg == "" {
		return "", false
	}
	return c.What + " failed (exit " + strconv.Itoa(c.Exit) + "): " + msg, true
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}

var _ = register(model.U1, "the user's workload is where they can go on: kept or recovered; stuck (only an expert step) and lost are false", u1)

// u1 holds when, after the user's recovery, the workload is where its user
// can go on: a restored or re-checkpointed workload continues from its
// memory (same marker and boot nonce, a counter at least the one it had and
// moving), a removed one is gone, a stopped one runs again. When it is not,
// the supervisor must have said so: the call that decided the outcome
// failed with a message. Loss that no call reports is false.
func u1(c *ctx) Result {
	j, na := aftermathJudge(c.in, model.U1)
	if na != nil {
		return *na
	}
	a := c.in.Aftermath
	if len(j.gaps) == 0 && a.Expect == "" {
		j.gap("the aftermath names no expected outcome")
	}
	if len(j.gaps) > 0 {
		return j.result("", nil)
	}
	last, hasRetry := lastRetry(a)
	after, found := workload(a.After, a.Target)
	if !found {
		after = model.Workload{Name: a.Target, Err: "not read"}
	}
	switch a.Expect {
	case model.ExpectContinue:
		b, ok := workload(a.Before, a.Origin)
		if !ok || b.Boot == "" {
			j.gap("the identity of " + strconv.Quote(a.Origin) + " before the trigger was not read")
			return j.result("", nil)
		}
		j.note(b.Name + " before: " + b.Text())
	case model.ExpectAbsent, model.ExpectRuns:
	default:
		j.gap("unknown expected outcome " + strconv.Quote(a.Expect))
		return j.result("", nil)
	}
	lost, known := a.Loss(a.Target, after)
	j.note(a.Target + " after: " + after.Text())
	if s := after.Starved(); !known && s != "" {
		// A counter that did not move while the workload got no CPU says
		// nothing of whether it runs (recorded with its progress wait).
		j.gap(s)
		return j.result("", nil)
	}
	if a.Version >= model.AftermathGraded {
		return gradedU1(c, j, a, lost, last, hasRetry)
	}
	if lost == "" {
		return j.result(a.Target+" is where its user can go on ("+a.Expect+")", nil)
	}
	if msg, ok := reported(last, hasRetry); ok {
		j.note("state lost, and reported: " + msg)
		return j.result("state lost, reported by the supervisor: "+lost, nil)
	}
	if hasRetry {
		j.fail(lost + "; the retry " + last.What + " said it succeeded")
	} else {
		j.fail(lost + "; no call said so")
	}
	return j.result("", func(int) string { return "state lost and unreported: " + lost })
}

// gradedU1 ends U1 on an aftermath that grades the loss: the workload was
// kept (it ran on through the death by itself), recovered (the user's
// calls through the supervisor brought it back) or lost. A loss is false
// whatever the supervisor said: a message is not the state back, so what
// it said is kept as evidence, not taken as an answer.
func gradedU1(c *ctx, j *judge, a *model.Aftermath, lost string, last model.UserCall, hasRetry bool) Result {
	if a.Version >= model.AftermathFiles {
		switch damaged := filesU1(j, a); {
		case damaged != "" && lost == "":
			j.fail(damaged)
			return j.result("", func(int) string { return model.GradeLost + ": " + damaged })
		case damaged != "":
			j.note(damaged)
		}
	}
	if lost == "" {
		grade := model.GradeRecovered
		if ranThrough(a) {
			grade = model.GradeKept
		}
		return j.result(grade+": "+a.Target+" is where its user can go on ("+a.Expect+")", nil)
	}
	switch msg, ok := reported(last, hasRetry); {
	case ok:
		j.fail(lost + "; the supervisor said: " + msg)
	case hasRetry:
		j.fail(lost + "; the retry " + last.What + " said it succeeded")
	default:
		j.fail(lost + "; no call said so")
	}
	// Only a step outside the supervisor's interface is left: the first
	// that brought the workload back is the workaround, and the user was
	// still stuck until someone knew it.
	if !expertsKnown(c.in, a) {
		// Recorded before expert steps: judged as it was.
		return j.result("", func(int) string { return model.GradeLost + ": " + lost })
	}
	var tried []string
	for _, r := range a.Rescues {
		tried = append(tried, r.Step)
		still, ok := a.Loss(r.Target, r.After)
		if s := r.After.Starved(); !ok && s != "" {
			j.gap("after expert step " + r.Step + ": " + s)
			continue
		}
		if !ok {
			j.gap("expert step " + r.Step + ": the identity before the trigger was not read")
			continue
		}
		if still == "" {
			j.note("expert step " + r.Step + " brought it back: " + r.Target + " after: " + r.After.Text())
			res := j.result("", func(int) string {
				return model.GradeStuck + ": " + lost + stuckSuffix(r.Step)
			})
			if res.Judged && !res.Pass {
				res.Workaround = r.Step
			}
			return res
		}
		j.note("expert step " + r.Step + " did not bring it back: " + still)
	}
	none := "no expert step is declared"
	if len(tried) > 0 {
		none = "no expert step brought it back (tried " + strings.Join(tried, ", ") + ")"
	}
	j.note(none)
	return j.result("", func(int) string { return model.GradeLost + ": " + lost + "; " + none })
}

// filesU1 notes what the check of the user's files found: the target's
// root against its image (a damaged root is already the loss), and each
// checkpoint. It returns the loss a damaged checkpoint is when the
// supervisor keeps its checkpoints; one that removes a checkpoint once
// restored may have consumed it.
func filesU1(j *judge, a *model.Aftermath) string {
	if len(a.Manifests) == 0 {
		j.note("no file of the user is named by the description: files not checked")
		return ""
	}
	if after, ok := workload(a.After, a.Target); ok && after.Files != nil {
		j.note(a.Target + "'s root: " + after.Files.Text())
	}
	for _, r := range a.Rescues {
		if r.After.Files != nil {
			j.note("after expert step " + r.Step + ", " + r.Target + "'s root: " + r.After.Files.Text())
		}
	}
	for _, ck := range a.Checkpoints {
		switch {
		case ck.Err != "" || len(ck.Damage) == 0:
			j.note(ck.Text() + " (" + ck.Root + ")")
		case a.CheckpointKept:
			return "the checkpoint at " + ck.Root + " is damaged, though the supervisor keeps its checkpoints: " + model.DamageText(ck.Damage, 5)
		default:
			j.note(ck.Text() + " (" + ck.Root + "; the supervisor removes a checkpoint it restored)")
		}
	}
	return ""
}

// ranThrough reports whether the target ran at the first look after the
// death, before the user did anything but look: the death did not stop
// it.
func ranThrough(a *model.Aftermath) bool {
	for _, l := range a.Looks {
		if l.When != "after_death" {
			continue
		}
		for _, h := range l.HostPre {
			if h.Name == a.Target {
				return h.State() == model.StateRunning
			}
		}
		return false
	}
	return false
}

var _ = register(model.U2, "every call of the user's recovery, and the interrupted one, returned within its bound", u2)

// u2 holds when every call the user made after the death returned within
// the bound, and every list (the supervisor's view, read at each look)
// answered. Any other call that fails promptly has answered: "no such
// container" is an answer.
func u2(c *ctx) Result {
	j, na := aftermathJudge(c.in, model.U2)
	if na != nil {
		return *na
	}
	if len(j.gaps) == 0 && len(c.in.Aftermath.Calls) == 0 {
		j.gap("no call was made after the death")
	}
	if len(j.gaps) > 0 {
		return j.result("", nil)
	}
	a := c.in.Aftermath
	lists := map[int]bool{}
	for _, l := range a.Looks {
		lists[l.Call] = true
	}
	if op := a.Interrupted; op != nil && op.TimedOut {
		// The user's own call, interrupted by the death: it must return
		// as any call must, with the failure if it failed.
		j.fail(op.What + " hung: still running " + strconv.FormatFloat(op.MS, 'f', 0, 64) + " ms after it was made, killed by the harness; waiting: " + stuckText(op.Stuck))
	}
	var slowest float64
	for i, call := range a.Calls {
		slowest = max(slowest, call.MS)
		bound := cmp.Or(call.BoundMS, a.BoundMS)
		switch {
		case call.TimedOut || (bound > 0 && call.MS > float64(bound)):
			j.fail(call.What + " hung: no answer after " + strconv.FormatFloat(call.MS, 'f', 0, 64) + " ms (bound " +
				strconv.Itoa(bound) + " ms); waiting: " + stuckText(call.Stuck))
		case lists[i] && call.Failed():
			j.fail(call.What + " did not answer: exit " + strconv.Itoa(call.Exit) + " " + call.Signal + ": " + lastLine(call.Output))
		}
	}
	j.note(plural(len(a.Calls), "call", "calls") + ", slowest " + strconv.FormatFloat(slowest, 'f', 0, 64) + " ms")
	return j.result("the supervisor answered every call within "+strconv.Itoa(a.BoundMS)+" ms",
		func(n int) string { return "the supervisor did not answer: " + plural(n, "call", "calls") })
}

func stuckText(ps []model.StuckProc) string {
	if len(ps) == 0 {
		return "no process recorded"
	}
	var parts []string
	for _, p := range ps {
		s := strconv.Itoa(p.PID) + " " + p.Comm + " (" + p.State
		if p.Wchan != "" {
			s += " in " + p.Wchan
		}
		if !p.Own {
			s += ", not the call's"
		}
		parts = append(parts, s+")")
	}
	return strings.Join(parts, ", ")
}

func ints(xs []int) string {
	var s []string
	for _, x := range xs {
		s = append(s, strconv.Itoa(x))
	}
	return "[" + strings.Join(s, " ") + "]"
}

var _ = register(model.U3, "what the supervisor reports running is what the host shows", u3)

// u3 holds when, at every look that answered and during which the host held
// still, each workload the supervisor reports running has live processes on
// the host, and each it reports stopped or absent has none. A look during
// which the host changed proves nothing either way and is only noted; if no
// look answered, nothing the supervisor says could be checked, and u3 is
// false with U2.
func u3(c *ctx) Result {
	j, na := aftermathJudge(c.in, model.U3)
	if na != nil {
		return *na
	}
	if len(j.gaps) > 0 {
		return j.result("", nil)
	}
	a := c.in.Aftermath
	compared := 0
	for _, l := range a.Looks {
		if l.Call < 0 || l.Call >= len(a.Calls) {
			j.gap("look " + l.When + " names no call")
			continue
		}
		call := a.Calls[l.Call]
		if call.Failed() || l.ParseErr != "" {
			j.note(l.When + ": no view (" + firstNonEmpty(l.ParseErr, lastLine(call.Output)) + ")")
			continue
		}
		pre, post := hostStates(l.HostPre), hostStates(l.HostPost)
		names := lookNames(a, l)
		stable := true
		for _, n := range names {
			if pre[n].State() != post[n].State() {
				stable = false
				j.note(l.When + ": " + n + " changed on the host during the look (" + pre[n].State() + " -> " + post[n].State() + ")")
			}
		}
		if !stable {
			continue
		}
		compared++
		for _, n := range names {
			rep := model.Reported{Name: n, State: model.StateAbsent, Raw: "not listed"}
			for _, r := range l.Reported {
				if r.Name == n {
					rep = r
				}
			}
			h := post[n]
			switch {
			case rep.State == "":
				j.note(l.When + ": " + n + " reported " + strconv.Quote(rep.Raw) + ", a word the description maps to no state")
			case rep.State == model.StateRunning && h.State() == model.StatePaused:
				j.fail(l.When + ": " + n + " reported " + rep.Raw + " (running), every live process of it is frozen: pids " + ints(h.PIDs))
			case rep.State == model.StatePaused && h.State() == model.StateStopped:
				j.fail(l.When + ": " + n + " reported " + rep.Raw + " (paused), the host has no live process of it")
			case rep.State != model.StatePaused && rep.State != model.StateRunning && h.State() == model.StatePaused:
				j.fail(l.When + ": " + n + " reported " + rep.Raw + " (" + rep.State + "), the host holds it frozen: pids " + ints(h.PIDs))
			case rep.State == model.StateRunning && h.State() != model.StateRunning:
				j.fail(l.When + ": " + n + " reported " + rep.Raw + " (running), the host has no live process of it")
			case rep.State != model.StateRunning && h.State() == model.StateRunning:
				j.fail(l.When + ": " + n + " reported " + rep.Raw + " (" + rep.State + "), the host runs it: pids " +
					ints(h.PIDs) + " " + strings.Join(h.Comms, ","))
			default:
				j.note(l.When + ": " + n + " reported " + rep.Raw + ", host " + h.State())
			}
		}
	}
	if compared == 0 && len(j.gaps) == 0 && len(j.bad) == 0 {
		if slices.ContainsFunc(a.Looks, func(l model.Look) bool {
			return l.Call >= 0 && l.Call < len(a.Calls) && !a.Calls[l.Call].Failed() && l.ParseErr == ""
		}) {
			j.gap("the host changed during every look that answered")
		} else {
			j.fail("no look answered: nothing the supervisor reports could be checked against the host")
		}
	}
	return j.result("what the supervisor reports is what the host shows ("+plural(compared, "look", "looks")+")",
		func(n int) string {
			return "the supervisor's view contradicts the host: " + plural(n, "disagreement", "disagreements")
		})
}

func hostStates(hs []model.HostWorkload) map[string]model.HostWorkload {
	m := map[string]model.HostWorkload{}
	for _, h := range hs {
		m[h.Name] = h
	}
	return m
}

// lookNames are the workloads a look is judged on: those the host was read
// for (every workload of the run the harness knows) and those reported.
func lookNames(a *model.Aftermath, l model.Look) []string {
	var names []string
	add := func(n string) {
		if n != "" && !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	for _, h := range l.HostPost {
		add(h.Name)
	}
	for _, r := range l.Reported {
		if _, ok := hostStates(l.HostPost)[r.Name]; ok {
			add(r.Name)
		}
	}
	slices.Sort(names)
	return names
}

func firstNonEmpty(s ...string) string {
	for _, x := range s {
		if x != "" {
			return x
		}
	}
	return ""
}

// expertsKnown reports whether the row was recorded by a harness that
// tries expert steps. Rows from the one that brought them, with the state
// globs P7 reads, until AftermathExpert was recorded carry version 2; their
// roots' state globs tell them apart from the rows before.
func expertsKnown(in Input, a *model.Aftermath) bool {
	return a.Version >= model.AftermathExpert || len(in.Roots.State) > 0
}

// stuckSuffix ends a stuck U1's summary: the expert step that worked.
func stuckSuffix(step string) string { return "; only the expert step " + step + " brought it back" }

// Example is a result's first line of evidence as recorded, or its
// summary: the line a finding or a comparison shows for it.
func (r Result) Example() string {
	if len(r.Evidence) > 0 {
		return r.Evidence[0]
	}
	return r.Summary
}
