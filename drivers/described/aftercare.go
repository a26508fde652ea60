package described

import (
	"encoding/json"
	"fmt"
	"maps"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"faultwin/internal/model"
)

// Aftercare is a description's recovery block: what the supervisor's user
// runs after a crash, before anything destructive. The harness runs it
// after the death's evidence and before the sweep, bounded and recorded,
// and U1..U3 judge what it found (docs/aftermath.md); R1..R4's recovery
// windows, where the supervisor restarts itself, are refsup's alone.
type Aftercare struct {
	// Workload names session n as the supervisor and its payload call it
	// ("fw{n}"); session 1 is the one every operation acts on.
	Workload string `yaml:"workload"`
	// Env is the variable every process of a workload carries, set to its
	// name: how the host tells a workload's processes apart.
	Env string `yaml:"env"`
	// Identity is the file, inside the workload's root, its payload writes
	// "<counter> <marker> <boot>" to from memory.
	Identity string `yaml:"identity"`
	// BoundMS: a call that has not returned after it hangs.
	BoundMS int `yaml:"bound_ms"`
	// List is the supervisor's list of its workloads, read as a view.
	List List `yaml:"list"`
	// Look are further calls a user makes to see what happened (inspect).
	Look []Command `yaml:"look"`
	// Cleanup lets the supervisor clean up its own workload.
	Cleanup []Command `yaml:"cleanup"`
	// Retry says, per operation, what the user runs again and what it
	// should leave (continue, absent, runs).
	Retry map[string]Retry `yaml:"retry"`
	// Expert are the steps outside the supervisor's normal interface that
	// someone who knows its insides takes when the user's recovery failed
	// (remove a runtime's stale state, resume a frozen task). Each is tried
	// in order, then the retry again; the first that brings the workload
	// back is named in the row, and the outcome is stuck, not recovered.
	Expert []Expert `yaml:"expert"`
	// Files names the files the user keeps: listed before the trigger,
	// compared once the recovery is over (U1).
	Files *Files `yaml:"files"`
}

// Files says where the host holds what a workload's user keeps.
type Files struct {
	// Image is the host directory of the workload's files as its image
	// gives them (the tree the setup built the image from); after the
	// recovery each is compared with the workload's root as its own
	// process sees it.
	Image string `yaml:"image"`
	// Writes are the paths, inside the workload, its payload writes: left
	// out of the comparison.
	Writes []string `yaml:"writes"`
	// Checkpoint are the host paths (globs) of a checkpoint's files,
	// listed before the trigger and compared once the recovery is over.
	Checkpoint []string `yaml:"checkpoint"`
	// CheckpointKept says the supervisor keeps a checkpoint after a
	// restore that succeeded: a file of it missing then is damage. When
	// false, a restore that brought the workload back may consume it.
	CheckpointKept bool `yaml:"checkpoint_kept"`
}

// Expert is one expert recovery step.
type Expert struct {
	// Name names the step in rows: lower case with dashes.
	Name string `yaml:"name"`
	// Desc says what the step does and why a user would not.
	Desc string `yaml:"desc"`
	// Ops are the operations it applies to; none is every operation.
	Ops []string `yaml:"ops"`
	// Run are the step's commands, in order.
	Run []Command `yaml:"run"`
}

var expertName = regexp.MustCompile(`^[a-z][a-z0-9-]*$`)

// applies reports whether the step is tried after operation op.
func (e Expert) applies(op string) bool { return len(e.Ops) == 0 || slices.Contains(e.Ops, op) }

// List is a list call and how to read its output, one of two ways: Line,
// a regexp each output line must match, whose named groups "name" and
// "state" give a workload's name and the supervisor's word for its state;
// or JSON, an array of objects and the dotted paths to those two fields in
// each ("Names.0"). States maps the words to running or stopped.
type List struct {
	// Run is the list call (ps --all), read as a view of the workloads.
	Run Command `yaml:"run"`
	// Line is a regexp each output line must match, with the named groups
	// name and state.
	Line string `yaml:"line"`
	// JSON reads the output as a JSON array instead, by the dotted paths
	// of each entry's name and state.
	JSON *JSONList `yaml:"json"`
	// Skip matches lines of a line-read list that name no workload (a
	// table's header).
	Skip string `yaml:"skip"`
	// States map running, stopped and paused to the supervisor's words
	// for them (running: [running, paused, stopping]).
	States map[string][]string `yaml:"states"`
}

// JSONList names the fields of a JSON list's entries.
type JSONList struct {
	// Name is the dotted path of an entry's name (Names.0).
	Name string `yaml:"name"`
	// State is the dotted path of an entry's state word (State).
	State string `yaml:"state"`
}

// Retry is what the user runs again after the operation was interrupted.
type Retry struct {
	// Expect is what the retry should leave: continue (the workload runs
	// on from its state), absent (it is gone), runs (it runs).
	Expect string `yaml:"expect"`
	// Run are the commands the user runs again, in order.
	Run []Command `yaml:"run"`
	// Target names the workload the operation acts on when it is not
	// session 1 (an operation that makes a new one: "fw2").
	Target string `yaml:"target"`
}

var envPattern = regexp.MustCompile(`^[A-Z][A-Z0-9_]*$`)

// recovery checks the recovery section: every operation needs a retry,
// so that no window's U1 goes unjudged for want of one.
func (c *checker) recovery(d *Description, vars []string) {
	r := d.Recovery
	if r.Workload == "" && r.List.Run == nil && len(r.Retry) == 0 {
		c.addf("recovery", "missing; say what a user runs after a crash (workload, env, identity, bound_ms, list, cleanup, retry per operation)")
		return
	}
	if !strings.Contains(r.Workload, "{n}") {
		c.addf("recovery.workload", "%q: name session n with {n}, like fw{n}", r.Workload)
	}
	if !envPattern.MatchString(r.Env) {
		c.addf("recovery.env", "%q: give the variable (like FAULTWIN_SESSION) a workload's processes carry, set to its name", r.Env)
	} else if len(d.Precondition.Cold) > 0 && !setsEnv(d, r.Env) {
		c.addf("recovery.env", "%q: neither precondition.cold nor the setup or vars it uses names it, so no process of a workload carries it (set it in precondition.cold, like --env %s=fw{n})", r.Env, r.Env)
	}
	if !path.IsAbs(r.Identity) {
		c.addf("recovery.identity", "%q: give the absolute path, inside the workload, its payload writes \"<counter> <marker> <boot>\" to", r.Identity)
	}
	if r.BoundMS < 100 || r.BoundMS > d.TimeoutMS {
		c.addf("recovery.bound_ms", "%d: give 100..timeout_ms (%d) ms, after which a call hangs", r.BoundMS, d.TimeoutMS)
	}
	c.command("recovery.list.run", r.List.Run, vars, true)
	switch {
	case (r.List.Line == "") == (r.List.JSON == nil):
		c.addf("recovery.list", "give one of line (a regexp per output line) and json (the fields of each entry)")
	case r.List.JSON != nil:
		if r.List.JSON.Name == "" || r.List.JSON.State == "" {
			c.addf("recovery.list.json", "give the dotted paths of both name and state, like {name: Names.0, state: State}")
		}
	default:
		if _, err := regexp.Compile(r.List.Skip); err != nil {
			c.addf("recovery.list.skip", "%q: %v", r.List.Skip, err)
		}
		if re, err := regexp.Compile(r.List.Line); err != nil {
			c.addf("recovery.list.line", "%q: %v", r.List.Line, err)
		} else if !slices.Contains(re.SubexpNames(), "name") || !slices.Contains(re.SubexpNames(), "state") {
			c.addf("recovery.list.line", "%q: name two groups, (?P<name>...) and (?P<state>...)", r.List.Line)
		}
	}
	seen := map[string]string{}
	for _, st := range slices.Sorted(maps.Keys(r.List.States)) {
		if st != model.StateRunning && st != model.StateStopped && st != model.StatePaused {
			c.addf("recovery.list.states."+st, "use running, stopped or paused")
		}
		for _, w := range r.List.States[st] {
			if prev, ok := seen[w]; ok {
				c.addf("recovery.list.states."+st, "%q is already %s", w, prev)
			}
			seen[w] = st
		}
	}
	if len(r.List.States[model.StateRunning]) == 0 || len(r.List.States[model.StateStopped]) == 0 {
		c.addf("recovery.list.states", "give the supervisor's words for both running and stopped")
	}
	for i, l := range r.Look {
		c.command(fmt.Sprintf("recovery.look[%d]", i), l, vars, true)
	}
	for i, l := range r.Cleanup {
		c.command(fmt.Sprintf("recovery.cleanup[%d]", i), l, vars, true)
	}
	for _, op := range slices.Sorted(maps.Keys(d.Operations)) {
		if _, ok := r.Retry[op]; !ok {
			c.addf("recovery.retry", "no retry for operation %s: say what its user runs again (run: [] to only look) and what it should leave", op)
		}
	}
	for _, op := range slices.Sorted(maps.Keys(r.Retry)) {
		rt := r.Retry[op]
		f := "recovery.retry." + op
		if _, ok := d.Operations[op]; !ok {
			c.addf(f, "no operation %s", op)
		}
		if !slices.Contains([]string{model.ExpectContinue, model.ExpectAbsent, model.ExpectRuns}, rt.Expect) {
			c.addf(f+".expect", "%q: use continue (the workload goes on from its memory), absent or runs", rt.Expect)
		}
		for i, cmd := range rt.Run {
			c.command(fmt.Sprintf("%s.run[%d]", f, i), cmd, vars, true)
		}
		if rt.Target != "" {
			c.command(f+".target", Command{rt.Target}, vars, false)
		}
	}
	if f := r.Files; f != nil {
		switch {
		case f.Image == "" && len(f.Checkpoint) == 0:
			c.addf("recovery.files", "give image (the host directory the image was built from) or checkpoint (where a checkpoint's files are), or leave files out")
		case f.Image != "":
			c.command("recovery.files.image", Command{f.Image}, vars, false)
			if !strings.HasPrefix(f.Image, "/") && !strings.HasPrefix(f.Image, "{") {
				c.addf("recovery.files.image", "%q: give an absolute host path, like {assets}/rootfs", f.Image)
			}
		}
		for i, w := range f.Writes {
			if w == "" || strings.Contains(w, "..") {
				c.addf(fmt.Sprintf("recovery.files.writes[%d]", i), "%q: give a path inside the workload, like /faultwin", w)
			}
		}
		for i, g := range f.Checkpoint {
			fp := fmt.Sprintf("recovery.files.checkpoint[%d]", i)
			c.command(fp, Command{g}, vars, false)
			if _, err := path.Match(g, ""); err != nil || (!strings.HasPrefix(g, "/") && !strings.HasPrefix(g, "{")) {
				c.addf(fp, "%q: give an absolute host path or glob of a checkpoint's directory", g)
			}
		}
	}
	names := map[string]bool{}
	for i, e := range r.Expert {
		f := fmt.Sprintf("recovery.expert[%d]", i)
		switch {
		case !expertName.MatchString(e.Name):
			c.addf(f+".name", "%q: name the step in lower case with dashes, like drop-runtime-state (the row names it)", e.Name)
		case names[e.Name]:
			c.addf(f+".name", "%q is the name of an earlier step", e.Name)
		}
		names[e.Name] = true
		if e.Desc == "" {
			c.addf(f+".desc", "missing; say what the step does and why a user would need it")
		}
		if len(e.Run) == 0 {
			c.addf(f+".run", "missing; give the commands of the step (the retry is run again after them)")
		}
		for j, cmd := range e.Run {
			c.command(fmt.Sprintf("%s.run[%d]", f, j), cmd, vars, true)
		}
		for j, op := range e.Ops {
			if _, ok := d.Operations[op]; !ok {
				c.addf(fmt.Sprintf("%s.ops[%d]", f, j), "no operation %s", op)
			}
		}
	}
}

// parse reads a list's output into the workloads it reports, and the lines
// (or entries) it could not read.
func (l List) parse(out string) ([]model.Reported, []string, error) {
	rep := []model.Reported{}
	var bad []string
	add := func(name, word string) {
		rep = append(rep, model.Reported{Name: name, State: l.state(word), Raw: word})
	}
	if l.JSON != nil {
		var entries []any
		if err := json.Unmarshal([]byte(out), &entries); err != nil {
			return nil, nil, fmt.Errorf("list output is not a JSON array: %w", err)
		}
		for _, e := range entries {
			name, nok := dig(e, l.JSON.Name)
			word, sok := dig(e, l.JSON.State)
			if !nok || !sok {
				b, _ := json.Marshal(e)
				bad = append(bad, string(b))
				continue
			}
			add(name, word)
		}
		return rep, bad, nil
	}
	re := regexp.MustCompile(l.Line) // checked at load
	skip := regexp.MustCompile(l.Skip)
	for _, line := range strings.Split(out, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || (l.Skip != "" && skip.MatchString(line)) {
			continue
		}
		m := re.FindStringSubmatch(line)
		if m == nil {
			bad = append(bad, line)
			continue
		}
		add(m[re.SubexpIndex("name")], m[re.SubexpIndex("state")])
	}
	return rep, bad, nil
}

// dig follows a dotted path ("Names.0") into decoded JSON to a string.
func dig(v any, dotted string) (string, bool) {
	for _, part := range strings.Split(dotted, ".") {
		switch x := v.(type) {
		case map[string]any:
			v = x[part]
		case []any:
			i, err := strconv.Atoi(part)
			if err != nil || i < 0 || i >= len(x) {
				return "", false
			}
			v = x[i]
		default:
			return "", false
		}
	}
	s, ok := v.(string)
	return s, ok
}

// state maps a supervisor's word to a state, "" for a word not mapped.
func (l List) state(word string) string {
	for st, words := range l.States {
		if slices.Contains(words, word) {
			return st
		}
	}
	return ""
}

// setsEnv reports whether the commands that start a workload (the cold
// precondition, the setup that may write its config, the vars they use)
// name env at all.
func setsEnv(d *Description, env string) bool {
	has := func(c Command) bool {
		return slices.ContainsFunc(c, func(a string) bool { return strings.Contains(a, env) })
	}
	if has(d.Precondition.Cold) || slices.ContainsFunc(d.Setup, has) {
		return true
	}
	for _, v := range d.Vars {
		if strings.Contains(v, env) {
			return true
		}
	}
	return false
}
