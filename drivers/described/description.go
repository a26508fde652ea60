// Package described drives a supervisor faultwin did not write, from a
// description in YAML (drivers/described/supervisors/*.yaml): the commands that build a
// precondition, start an operation and run the supervisor's own cleanup,
// the process roles external triggers watch and kill, and the host-global
// names the supervisor makes. Adding a supervisor means writing such a
// file; no Go code.
package described

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"path"
	"regexp"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"faultwin/internal/model"
)

// Description is one supervisor, as its file says.
type Description struct {
	// Name is the driver's name: windows name it with driver:, rows
	// carry it. Lower case; not refsup.
	Name string `yaml:"name"`
	// Summary is one line about the supervisor, shown by lint and doctor.
	Summary string `yaml:"summary"`
	// VariantOf names the description this one varies: its file gives
	// only the top-level fields that differ (variant.go).
	VariantOf string `yaml:"variant_of"`
	// Binary is the supervisor's executable, looked up on PATH after
	// PathPrepend. Unless Requires names it, doctor checks it is there
	// and, with VersionArgs, that it runs.
	Binary string `yaml:"binary"`
	// VersionArgs ask Binary for its version ([--version]); the answer is
	// recorded in every row.
	VersionArgs []string `yaml:"version_args"`
	// Requires is what the supervisor needs of the host, checked by
	// `faultwin doctor` after faultwin's own prerequisites.
	Requires []Requirement `yaml:"requires"`
	// PathPrepend comes before the harness's PATH for every command, so the
	// supervisor finds the right helpers (CRIU 4.2 before an older one).
	PathPrepend []string `yaml:"path_prepend"`
	// TimeoutMS bounds every command: a stuck call is killed, recorded and
	// ends the window with its evidence instead of hanging the suite.
	TimeoutMS int `yaml:"timeout_ms"`
	// Base is the argv prefix "{base}" stands for, as a whole element of a
	// command (the binary and the flags that put its roots under {state}).
	// Optional: a supervisor with one binary per verb writes each command
	// out and leaves it empty; it is required once a command uses {base}.
	Base []string `yaml:"base"`
	// Vars are the description's own placeholders: "{<var>}" in a command
	// is replaced by its value, in which the built-in placeholders ({run},
	// {state}, {n}, {assets}) expand, never another var.
	Vars map[string]string `yaml:"vars"`
	// Setup runs once per window before the precondition (an image import).
	// {assets} is a directory of the run's own (under its state dir) for
	// what the setup makes.
	Setup []Command `yaml:"setup"`
	// Precondition holds the commands that build what a window asks for
	// before its operation: cold sessions, a checkpoint, restored sessions.
	Precondition Precondition `yaml:"precondition"`
	// Operations are what a window can interrupt, by name (restore,
	// checkpoint, stop, ...): each one's command, what it needs, its phases.
	Operations map[string]Operation `yaml:"operations"`
	// Sweep is the supervisor's own cleanup after a crash, what its users
	// run; the harness runs it twice.
	Sweep []Command `yaml:"sweep"`
	// Daemon, when set, is a long-lived supervisor started for each run.
	Daemon *Daemon `yaml:"daemon"`
	// Recovery is what a user runs after a crash, before the sweep: the
	// aftermath U1..U3 judge.
	Recovery Aftercare `yaml:"recovery"`
	// Roles are the kinds of process of a run that points watch and kill
	// and phases name, by name; "operation" is built in (the process the
	// harness started for the operation's command, and only it).
	Roles map[string]Role `yaml:"roles"`
	// Points are where a window may kill: each watches a role or a phase
	// of one operation and kills roles there.
	Points []Point `yaml:"points"`
	// Owns names where the supervisor makes a run's objects under names
	// the run gives them: its state dir, a link named for the run (see
	// Owns).
	Owns Owns `yaml:"owns"`
	// Claims names the supervisor's own default host-global names where it
	// also makes a run's objects (a shim's socket under /run/containerd/s,
	// a pod's veth): every user of the supervisor shares them, so an
	// object there is a run's only when the run's tie record claims it,
	// and never a user's (see Owns for the fields).
	Claims Owns `yaml:"claims"`
	// Shared are findings the supervisor keeps for all runs by design:
	// shown in a row as a note, never judged as a run's.
	Shared []Shared `yaml:"shared"`
	// Reclaim is the last resort between windows, never counted as the
	// supervisor's sweep: what it may remove besides the run's own things.
	Reclaim Reclaim `yaml:"reclaim"`

	File string `yaml:"-"` // where it was read from
	// source is the YAML it was parsed from (a variant: merged with its
	// base), which a variant of it is merged over.
	source []byte
}

// Command is an argv; "{base}" as a whole element expands to Base, and
// "{run}", "{state}", "{n}", "{assets}" and "{<var>}" are replaced inside
// elements.
type Command []string

// Precondition says how each precondition field is built; a field without a
// command cannot be asked for.
type Precondition struct {
	Cold       Command `yaml:"cold"`       // once per cold session, {n} = 1, 2, ...
	Checkpoint Command `yaml:"checkpoint"` // a checkpoint of session 1 on disk
	Restored   Command `yaml:"restored"`   // once per restored session
}

// Operation is one operation a window can interrupt.
type Operation struct {
	// Run is the operation's command; the harness starts it, and the
	// window's clock and kill refer to it. It returns when its process
	// exits, whatever a child that inherited its output does.
	Run Command `yaml:"run"`
	// Needs is the least precondition the operation acts on.
	Needs Needs `yaml:"needs"`
	// Desc says in a line what the operation does, for rows and lint.
	Desc string `yaml:"desc"`
	// Phases are the operation's phases as seen from outside, in order;
	// each is entered by one kind of evidence (none: the operation's start).
	// A kill lands in the latest phase entered before it.
	Phases []Phase `yaml:"phases"`
}

// Phase is one phase of an operation and the evidence that it began: a
// role appeared, a role is gone, a role forked, a process of the run
// joined a cgroup matching a glob, or a mount point matching a glob
// appeared ("{run}" and other placeholders expand).
type Phase struct {
	// Name is how windows (lands_in) and rows name the phase: lower case
	// with underscores (criu_restoring).
	Name string `yaml:"name"`
	// Appeared: the phase begins when the first process of this role that
	// was not there when the watch began appears (matched as it appears).
	Appeared string `yaml:"appeared"`
	// Gone: the phase begins when no live process of this role is left,
	// once one was seen during the watch (one there at the operation's
	// start counts: an old conmon's exit).
	Gone string `yaml:"gone"`
	// Forked: the phase begins when a process of the role forks a new
	// process of the run.
	Forked string `yaml:"forked"`
	// Cgroup: the phase begins when a new process of the run whose comm no
	// role has joins a cgroup matching this path glob from the cgroup
	// root, under the run's cgroup ("/faultwin/{run}/libpod-*"). A role
	// whose comm is the payload's makes it unreachable.
	Cgroup string `yaml:"cgroup"`
	// Mounted: a new mount point matching this path glob ("{state}/netns/*"):
	// a step that leaves a mount and no process.
	Mounted string `yaml:"mounted"`
	// Desc says in a line what is happening during the phase.
	Desc string `yaml:"desc"`
}

// Needs is the least precondition an operation acts on.
type Needs struct {
	// Cold is how many cold sessions must run (session 1 is acted on).
	Cold int `yaml:"cold"`
	// Checkpoint: a checkpoint of session 1 must be on disk.
	Checkpoint bool `yaml:"checkpoint"`
}

// Role is a kind of process of the run: by exact comm, optionally with an
// argv word ("cleanup") or a parent's comm ("runc"), optionally the top one
// of several (CRIU's).
type Role struct {
	// Comm are the process names (/proc/PID/comm, at most 15 characters)
	// a process of the role has, any one of them. A process is matched
	// when it is first seen and again while its argv read empty (caught
	// mid-exec); a later argv rewrite does not move it.
	Comm []string `yaml:"comm"`
	// Argv are words its argv must contain, all of them ("restore").
	Argv []string `yaml:"argv"`
	// Parent comms tell the real work from a probe by the same tool.
	Parent []string `yaml:"parent"`
	// Top: only the topmost of several processes of the role counts (a
	// CRIU whose forks share its comm); the tasks CRIU restores are the
	// payload's, never a criu role.
	Top bool `yaml:"top"`
	// Holds: path globs, in {state} or anywhere on the host
	// ("{state}/storage/*/userdata/checkpoint"), one of
	// which the process has open or as its cwd: what it works on, which
	// tells a tool's real work from a probe by the same tool.
	Holds []string `yaml:"holds"`
}

// Point is an external trigger point.
type Point struct {
	// Name is <operation>.<instant> (restore.criu): what windows name.
	Name string `yaml:"name"`
	// Operation is the operation the point interrupts.
	Operation string `yaml:"operation"`
	// Watch is the role whose first appearance starts the clock
	// ("operation": the operation's start); Phase instead starts it when
	// the operation enters that phase. A point gives one of the two.
	Watch string `yaml:"watch"`
	// Phase starts the clock when the operation enters this phase; "*"
	// lets each window name the phase (lands_in).
	Phase string `yaml:"phase"`
	// Kill are the roles SIGKILLed at the point, in order ("operation":
	// the process the harness started, and only it: a wrapper shell's
	// children live on).
	Kill []string `yaml:"kill"`
	// Timed: the point takes delays (a window's delays_ms) after the
	// watched event; the trigger polls /proc every millisecond or so, so
	// a delay under a few ms is not resolved.
	Timed bool `yaml:"timed"`
	// Desc says in a line what the point kills, and when.
	Desc string `yaml:"desc"`
}

// Owns lists the names under which the supervisor makes a run's objects.
// A name is where to look, never evidence: outside the run's state dir an
// object is the run's only when the run's tie record claims it
// (snapshots.Claim). A fixed name (podman0, docker0) is refused: every run
// and every user of the supervisor share it, so no run can ever claim it.
// Under owns, names the run gives (fw{run} matched as fwr*, {state}/...);
// under claims, the supervisor's defaults its users share
// (/run/containerd/s/*, veth*).
type Owns struct {
	// Links: network link name globs ("fwr*", "veth*").
	Links []string `yaml:"links"`
	// Netns: named network namespace path globs ("/run/netns/netns-*").
	Netns []string `yaml:"netns"`
	// Chains: nftables chain name globs ("NETAVARK*").
	Chains []string `yaml:"chains"`
	// Sockets: unix socket paths bound under host-global names.
	Sockets []string `yaml:"sockets"`
	// State: where the supervisor keeps each workload's state, one entry
	// per workload ("{state}/runc/*"); "{state}" is the run's state dir.
	// An entry of the run left after the sweeps fails P7.
	State []string `yaml:"state"`
}

// Shared is a finding the supervisor keeps for all its runs by design.
type Shared struct {
	// Key is the finding's key as rows print it, a glob ("chain ip
	// filter NETAVARK_FORWARD", "cgroup /sys/fs/cgroup/*/faultwin/*").
	Key string `yaml:"key"`
	// Why says why the supervisor keeps it for all its runs.
	Why string `yaml:"why"`
}

// Reclaim is what the last resort may remove besides the run's things.
type Reclaim struct {
	// EmptyTables are nft tables ("ip nat") removed once empty.
	EmptyTables []string `yaml:"empty_tables"`
}

// Error is one problem of a description: file:line: field: what is wrong.
type Error struct {
	File    string
	Line    int
	Field   string
	Problem string
}

func (e *Error) Error() string {
	return fmt.Sprintf("%s:%d: %s: %s", e.File, e.Line, e.Field, e.Problem)
}

// MaxFileBytes bounds a description file.
const MaxFileBytes = 256 << 10

var (
	namePattern  = regexp.MustCompile(`^[a-z][a-z0-9-]{0,30}$`)
	phasePattern = regexp.MustCompile(`^[a-z][a-z0-9_]{0,40}$`)
	pointPattern = regexp.MustCompile(`^[a-z][a-z0-9_]*\.[a-z][a-z0-9_]*$`)
	placeholder  = regexp.MustCompile(`\{([a-z_]+)\}`)
)

// builtins are the placeholders every command may use.
var builtins = []string{"base", "run", "state", "n", "assets"}

// Parse reads one description; file names it in errors. Every problem is
// reported, joined.
func Parse(file string, data []byte) (*Description, error) {
	if len(data) > MaxFileBytes {
		return nil, &Error{File: file, Line: 1, Field: "file", Problem: fmt.Sprintf("%d bytes, at most %d", len(data), MaxFileBytes)}
	}
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return nil, yamlError(file, data, err)
	}
	if len(root.Content) == 0 {
		return nil, &Error{File: file, Line: 1, Field: "file", Problem: "empty description"}
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	var d Description
	var typeErrs []error
	if err := dec.Decode(&d); err != nil && !errors.Is(err, io.EOF) {
		var te *yaml.TypeError
		if !errors.As(err, &te) {
			return nil, yamlError(file, data, err)
		}
		// The values of the right type are decoded all the same: the
		// meaning of the rest is checked too, so a user sees every
		// problem of the file at once.
		typeErrs = typeErrors(file, root.Content[0], te)
	}
	d.File = file
	d.source = data
	c := &checker{file: file, root: root.Content[0]}
	c.check(&d)
	errs := typeErrs
	for _, e := range c.errs {
		// A value that did not decode is zero to the checker: its type
		// error says what is wrong with it, and a check of it or of a
		// field held to it ("give 100..timeout_ms (0)") would not.
		var de *Error
		if errors.As(e, &de) && slices.ContainsFunc(typeErrs, func(t error) bool {
			var te *Error
			if !errors.As(t, &te) {
				return false
			}
			name := te.Field[strings.LastIndexAny(te.Field, ".]")+1:]
			return te.Line == de.Line || strings.Contains(de.Problem, name)
		}) {
			continue
		}
		errs = append(errs, e)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return &d, nil
}

// yamlError turns yaml.v3's messages ("line 7: field comand not found in
// type described.Operation") into file:line: field: problem. A message
// without a line ("found unexpected end of stream") is about where the
// parser stopped, the file's last line.
func yamlError(file string, data []byte, err error) error {
	var te *yaml.TypeError
	if !errors.As(err, &te) {
		msg := strings.TrimPrefix(err.Error(), "yaml: ")
		line := max(1, bytes.Count(bytes.TrimSuffix(data, []byte("\n")), []byte("\n"))+1)
		if _, e := fmt.Sscanf(msg, "line %d:", &line); e == nil {
			_, msg, _ = strings.Cut(msg, ": ")
		}
		return &Error{File: file, Line: line, Field: "yaml", Problem: msg}
	}
	return errors.Join(typeErrors(file, nil, te)...)
}

// typeErrors are yaml.v3's type errors, each named by the field path as
// the user wrote it ("operations.stop.timeout_ms"), found at its line in
// root, and said in the user's words: the YAML value and what the field
// takes, not the Go type it is decoded into.
func typeErrors(file string, root *yaml.Node, te *yaml.TypeError) []error {
	var errs []error
	for _, m := range te.Errors {
		line := 1
		rest := m
		if _, e := fmt.Sscanf(m, "line %d:", &line); e == nil {
			_, rest, _ = strings.Cut(m, ": ")
		}
		field := "value"
		if f, ok := strings.CutPrefix(rest, "field "); ok {
			name, _, _ := strings.Cut(f, " ")
			field, rest = name, "unknown field"
		} else {
			if p := fieldAt(root, line); p != "" {
				field = p
			}
			rest = plainType(rest)
		}
		errs = append(errs, &Error{File: file, Line: line, Field: field, Problem: rest})
	}
	return errs
}

var unmarshalInto = regexp.MustCompile("^cannot unmarshal !!(\\w+) `(.*)` into (\\S+)$")

// plainType says "cannot unmarshal !!str `30s` into int" as "`30s` is a
// string, and this field takes a whole number".
func plainType(msg string) string {
	m := unmarshalInto.FindStringSubmatch(msg)
	if m == nil {
		return msg
	}
	kinds := map[string]string{"str": "a string", "int": "a whole number", "bool": "true or false", "float": "a number",
		"seq": "a list", "map": "a mapping", "null": "empty"}
	goKind := m[3]
	want := "a value of another kind"
	switch {
	case strings.HasPrefix(goKind, "[]"):
		want = "a list"
	case strings.HasPrefix(goKind, "map["):
		want = "a mapping"
	case strings.Contains(goKind, "int"):
		want = "a whole number"
	case goKind == "bool":
		want = "true or false"
	case goKind == "string":
		want = "a string"
	case strings.Contains(goKind, "float"):
		want = "a number"
	case strings.Contains(goKind, "."):
		want = "a mapping"
	}
	got := kinds[m[1]]
	if got == "" {
		got = "!!" + m[1]
	}
	return fmt.Sprintf("`%s` is %s, and this field takes %s", m[2], got, want)
}

// fieldAt is the dotted path ("operations.stop.needs.cold", "roles.criu.comm[0]")
// of the deepest value that starts at line, "" when none does.
func fieldAt(root *yaml.Node, line int) string {
	best, depth := "", -1
	var walk func(n *yaml.Node, path string, d int)
	walk = func(n *yaml.Node, path string, d int) {
		if n == nil {
			return
		}
		if n.Line == line && path != "" && d > depth {
			best, depth = path, d
		}
		switch n.Kind {
		case yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				p := n.Content[i].Value
				if path != "" {
					p = path + "." + p
				}
				walk(n.Content[i+1], p, d+1)
			}
		case yaml.SequenceNode:
			for i, c := range n.Content {
				walk(c, fmt.Sprintf("%s[%d]", path, i), d+1)
			}
		}
	}
	walk(root, "", 0)
	return best
}

// checker validates values and finds the line of each field.
type checker struct {
	file string
	root *yaml.Node
	errs []error
}

func (c *checker) addf(field string, format string, a ...any) {
	c.errs = append(c.errs, &Error{File: c.file, Line: c.line(field), Field: field, Problem: fmt.Sprintf(format, a...)})
}

// line finds the line of a dotted field path ("points[3].kill[1]",
// "operations.restore.run") in the document, or of its nearest parent.
func (c *checker) line(field string) int {
	n := c.root
	best := n.Line
	for _, part := range splitField(field) {
		next := child(n, part)
		if next == nil {
			break
		}
		n, best = next, next.Line
	}
	return best
}

func splitField(f string) []string {
	var out []string
	for _, p := range strings.Split(f, ".") {
		name, idx, ok := strings.Cut(p, "[")
		out = append(out, name)
		for ok {
			var i string
			i, idx, _ = strings.Cut(idx, "]")
			out = append(out, "["+i+"]")
			_, idx, ok = strings.Cut(idx, "[")
		}
	}
	return out
}

func child(n *yaml.Node, part string) *yaml.Node {
	if strings.HasPrefix(part, "[") {
		var i int
		if _, err := fmt.Sscanf(part, "[%d]", &i); err != nil || n.Kind != yaml.SequenceNode || i >= len(n.Content) {
			return nil
		}
		return n.Content[i]
	}
	if n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == part {
			return n.Content[i+1]
		}
	}
	return nil
}

func (c *checker) check(d *Description) {
	c.identity(d)
	vars := c.vars(d)
	switch {
	case len(d.Base) > 0:
		c.command("base", d.Base, vars, false)
	case strings.Contains(string(d.source), "{base}"):
		c.addf("base", "missing, and a command uses {base}: give the argv prefix it stands for")
	}
	for i, s := range d.Setup {
		c.command(fmt.Sprintf("setup[%d]", i), s, vars, true)
	}
	c.optional("precondition.cold", d.Precondition.Cold, vars)
	if len(d.Precondition.Cold) > 0 && !slices.ContainsFunc(d.Precondition.Cold, func(a string) bool { return strings.Contains(a, "{n}") }) {
		c.addf("precondition.cold", "names no {n}: every cold session is started by the same command, so they clash or are one (fw1 where fw{n} is meant)")
	}
	c.optional("precondition.checkpoint", d.Precondition.Checkpoint, vars)
	c.optional("precondition.restored", d.Precondition.Restored, vars)
	if len(d.Operations) == 0 {
		c.addf("operations", "missing; name at least one operation and its command")
	}
	for _, name := range slices.Sorted(maps.Keys(d.Operations)) {
		op := d.Operations[name]
		c.command("operations."+name+".run", op.Run, vars, true)
		if op.Needs.Cold > 0 && len(d.Precondition.Cold) == 0 {
			c.addf("operations."+name+".needs.cold", "needs cold sessions but precondition.cold has no command")
		}
		if op.Needs.Checkpoint && len(d.Precondition.Checkpoint) == 0 {
			c.addf("operations."+name+".needs.checkpoint", "needs a checkpoint but precondition.checkpoint has no command")
		}
		c.phases(d, "operations."+name+".phases", op.Phases, vars)
	}
	c.daemon(d, vars)
	c.recovery(d, vars)
	if len(d.Sweep) == 0 {
		c.addf("sweep", "missing; give the supervisor's own cleanup commands")
	}
	for i, s := range d.Sweep {
		c.command(fmt.Sprintf("sweep[%d]", i), s, vars, true)
	}
	c.roles(d, vars)
	c.points(d)
	c.names(d)
	c.requires(d.Requires)
	c.meaning(d)
	for i, t := range d.Reclaim.EmptyTables {
		if fam, name, ok := strings.Cut(t, " "); !ok || fam == "" || name == "" {
			c.addf(fmt.Sprintf("reclaim.empty_tables[%d]", i), "%q: write <family> <table>, like \"ip nat\"", t)
		}
	}
}

// identity checks the supervisor's name, binary, bound and PATH.
func (c *checker) identity(d *Description) {
	switch {
	case d.Name == "":
		c.addf("name", "missing; name the supervisor, like podman")
	case !namePattern.MatchString(d.Name):
		c.addf("name", "%q: use lower case letters, digits and dashes", d.Name)
	case d.Name == model.DefaultDriver:
		c.addf("name", "%q is the built-in driver's name", d.Name)
	}
	if d.Binary == "" {
		c.addf("binary", "missing; name the supervisor's executable")
	}
	if d.TimeoutMS < 100 || d.TimeoutMS > 600000 {
		c.addf("timeout_ms", "%d: give 100..600000 ms, the bound of every command", d.TimeoutMS)
	}
	for i, p := range d.PathPrepend {
		if !path.IsAbs(p) {
			c.addf(fmt.Sprintf("path_prepend[%d]", i), "%q is not an absolute directory", p)
		}
	}
}

// vars checks the description's own placeholders and returns every name a
// command may use.
func (c *checker) vars(d *Description) []string {
	vars := slices.Clone(builtins)
	for k := range d.Vars {
		if slices.Contains(builtins, k) {
			c.addf("vars."+k, "%q is a built-in placeholder", k)
		}
		vars = append(vars, k)
	}
	// A var's value expands built-in placeholders only: a var named inside
	// another would reach the shell as the literal "{name}".
	for _, k := range slices.Sorted(maps.Keys(d.Vars)) {
		for _, m := range placeholder.FindAllStringSubmatch(d.Vars[k], -1) {
			if _, isVar := d.Vars[m[1]]; isVar {
				c.addf("vars."+k, "{%s} is another var; a var expands built-in placeholders only: write its value out", m[1])
			}
		}
	}
	return vars
}

// roles checks the process roles: a comm each, hold globs that are
// absolute, none named as the operation.
func (c *checker) roles(d *Description, vars []string) {
	for _, name := range slices.Sorted(maps.Keys(d.Roles)) {
		r := d.Roles[name]
		if name == model.WatchOperation {
			c.addf("roles."+name, "%q is reserved for the operation's own process", name)
		}
		if len(r.Comm) == 0 {
			c.addf("roles."+name+".comm", "missing; give the comm (at most %d characters) of the role's processes", model.CommLen)
		}
		for i, g := range r.Holds {
			c.command(fmt.Sprintf("roles.%s.holds[%d]", name, i), Command{g}, vars, false)
			if _, err := path.Match(g, "/"); err != nil || !(strings.HasPrefix(g, "/") || strings.HasPrefix(g, "{")) {
				c.addf(fmt.Sprintf("roles.%s.holds[%d]", name, i), "%q: give an absolute path glob, like {state}/storage/*/userdata/checkpoint", g)
			}
		}
		for i, cm := range r.Comm {
			if cm == "" || len(cm) > model.CommLen {
				c.addf(fmt.Sprintf("roles.%s.comm[%d]", name, i), "%q: a comm is 1..%d characters", cm, model.CommLen)
			}
		}
	}
}

// points checks the published trigger points: named <operation>.<instant>
// once each, watching a role or naming a phase, killing roles it has.
func (c *checker) points(d *Description) {
	seen := map[string]bool{}
	for i, p := range d.Points {
		f := fmt.Sprintf("points[%d]", i)
		switch {
		case !pointPattern.MatchString(p.Name):
			c.addf(f+".name", "%q: write <operation>.<instant>, like restore.criu", p.Name)
		case seen[p.Name]:
			c.addf(f+".name", "%q repeated", p.Name)
		}
		seen[p.Name] = true
		if _, ok := d.Operations[p.Operation]; !ok {
			c.addf(f+".operation", "%q is not an operation (have: %s)", p.Operation, strings.Join(slices.Sorted(maps.Keys(d.Operations)), ", "))
		} else if !strings.HasPrefix(p.Name, p.Operation+".") {
			c.addf(f+".name", "%q: a point of operation %s is named %s.<instant>", p.Name, p.Operation, p.Operation)
		}
		switch {
		case p.Phase != "" && p.Watch != "":
			c.addf(f+".phase", "give watch or phase, not both")
		case p.Phase == model.AnyPhase:
			if op, ok := d.Operations[p.Operation]; ok && len(op.Phases) == 0 {
				c.addf(f+".phase", "operation %s declares no phases for a window to name", p.Operation)
			}
		case p.Phase != "":
			if op, ok := d.Operations[p.Operation]; ok && !slices.ContainsFunc(op.Phases, func(ph Phase) bool { return ph.Name == p.Phase }) {
				c.addf(f+".phase", "%q is not a phase of operation %s (have: %s)", p.Phase, p.Operation, strings.Join(phaseNames(op.Phases), ", "))
			}
		default:
			if _, ok := d.Roles[p.Watch]; !ok && p.Watch != model.WatchOperation {
				c.addf(f+".watch", "%q is not a role (have: %s)", p.Watch, strings.Join(append(slices.Sorted(maps.Keys(d.Roles)), model.WatchOperation), ", "))
			}
		}
		if len(p.Kill) == 0 {
			c.addf(f+".kill", "missing; name the roles to SIGKILL, in order")
		}
		for j, k := range p.Kill {
			if _, ok := d.Roles[k]; !ok && k != model.WatchOperation {
				c.addf(fmt.Sprintf("%s.kill[%d]", f, j), "%q is not a role", k)
			}
		}
	}
	if len(d.Points) == 0 {
		c.addf("points", "missing; publish at least one trigger point")
	}
}

// names checks the host-global names the supervisor owns or keeps by
// design.
func (c *checker) names(d *Description) {
	globs := func(field string, gs []string) {
		for i, g := range gs {
			if _, err := path.Match(g, ""); err != nil || g == "" || g == "*" {
				c.addf(fmt.Sprintf("%s[%d]", field, i), "%q: give a path.Match glob that names only the supervisor's things", g)
			}
		}
	}
	owned := func(field string, gs []string) {
		globs(field, gs)
		for i, g := range gs {
			switch {
			case strings.Contains(g, "{"):
				c.addf(fmt.Sprintf("%s[%d]", field, i), "%q: placeholders are not expanded here (these names are matched for every run); match the run's names with a glob, like fwr* for fw{run}", g)
			case fixedName(g):
				c.addf(fmt.Sprintf("%s[%d]", field, i), "%q is one fixed name that every run and every user of the supervisor share, so no run can claim it: give each run its own (a name with the run id, like fw{run}, matched here as fwr*) or a glob whose matches a run claims by provenance", g)
			}
		}
	}
	owned("owns.links", d.Owns.Links)
	owned("owns.netns", d.Owns.Netns)
	owned("owns.chains", d.Owns.Chains)
	owned("owns.sockets", d.Owns.Sockets)
	// A socket or a named netns is always a path the supervisor chose, not
	// the run: its users' objects stand there too.
	shared := func(field string, gs []string) {
		for i, g := range gs {
			c.addf(fmt.Sprintf("owns.%s[%d]", field, i), "%q is the supervisor's own host-global path, where its users' objects stand too: list it under claims.%s, where an object is the run's only by the run's tie record", g, field)
		}
	}
	shared("netns", d.Owns.Netns)
	shared("sockets", d.Owns.Sockets)
	owned("claims.links", d.Claims.Links)
	owned("claims.netns", d.Claims.Netns)
	owned("claims.chains", d.Claims.Chains)
	owned("claims.sockets", d.Claims.Sockets)
	for i, g := range d.Claims.State {
		if strings.Contains(g, "{") || !path.IsAbs(g) || fixedName(g) || g == "/*" {
			c.addf(fmt.Sprintf("claims.state[%d]", i), "%q: give an absolute glob of the supervisor's own host-global path whose every match is one workload's state (like /run/containerd/s/*); a path made from {state} goes under owns.state", g)
		}
	}
	for i, g := range d.Owns.State {
		if at := strings.Index(g, "{state}"); at > 0 {
			// a host-global path made from the run's state dir
			prefix, rest := g[:at], g[at+len("{state}"):]
			if _, err := path.Match(strings.ReplaceAll(g, "{state}", "/x"), ""); err != nil || !path.IsAbs(prefix) || strings.Contains(prefix, "{") ||
				!strings.HasPrefix(rest, "/") || strings.Trim(rest, "/") == "" || strings.Contains(rest, "{") {
				c.addf(fmt.Sprintf("owns.state[%d]", i), "%q: a host-global path made from the run's state dir is an absolute prefix, {state}, then a glob of one workload's entries (like /run/tool/lock{state}/*)", g)
			}
			continue
		}
		if !strings.HasPrefix(g, "{state}/") && !fixedName(g) {
			c.addf(fmt.Sprintf("owns.state[%d]", i), "%q is outside the run's state dir, the supervisor's own host-global path where its users' state stands too: list it under claims.state, where an entry is the run's only by the run's tie record", g)
			continue
		}
		if !strings.HasPrefix(g, "{state}/") && fixedName(g) {
			c.addf(fmt.Sprintf("owns.state[%d]", i), "%q is one fixed path outside the run's state dir, shared by every run and user: give a glob whose every match is one workload's state", g)
			continue
		}
		rest, inState := strings.CutPrefix(g, "{state}/")
		_, err := path.Match(strings.ReplaceAll(g, "{state}", "x"), "")
		switch {
		case err != nil || (!inState && !path.IsAbs(g)) || strings.Contains(rest, "{") || rest == "*" || g == "/*":
			c.addf(fmt.Sprintf("owns.state[%d]", i), "%q: give an absolute glob, or one under {state}/, whose every match is one workload's state (like {state}/runc/*)", g)
		}
	}
	for i, s := range d.Shared {
		globs(fmt.Sprintf("shared[%d].key", i), []string{s.Key})
		if strings.TrimSpace(s.Why) == "" {
			c.addf(fmt.Sprintf("shared[%d].why", i), "missing; say why the supervisor keeps %s by design", s.Key)
		}
	}
}

// phaseEvidence is what enters ph: "appeared criu", "cgroup /x/*".
func phaseEvidence(ph Phase) string {
	for _, e := range []struct{ k, v string }{{"appeared", ph.Appeared}, {"gone", ph.Gone}, {"forked", ph.Forked}, {"cgroup", ph.Cgroup}, {"mounted", ph.Mounted}} {
		if e.v != "" {
			return e.k + " " + e.v
		}
	}
	return ""
}

// fixedName reports whether g matches exactly one name (no glob character).
func fixedName(g string) bool { return !strings.ContainsAny(g, "*?[") }

// phases checks an operation's phases: named once each, one kind of
// evidence each, naming roles the description has.
func (c *checker) phases(d *Description, field string, phases []Phase, vars []string) {
	seen := map[string]bool{}
	evidence := map[string]int{} // "appeared criu" -> the phase that gives it
	for i, ph := range phases {
		f := fmt.Sprintf("%s[%d]", field, i)
		switch {
		case !phasePattern.MatchString(ph.Name):
			c.addf(f+".name", "%q: a phase is named in lower case with underscores, like criu_restoring", ph.Name)
		case seen[ph.Name]:
			c.addf(f+".name", "%q repeated", ph.Name)
		}
		seen[ph.Name] = true
		kinds := 0
		for _, e := range []struct{ key, role string }{{"appeared", ph.Appeared}, {"gone", ph.Gone}, {"forked", ph.Forked}} {
			if e.role == "" {
				continue
			}
			kinds++
			if _, ok := d.Roles[e.role]; !ok {
				c.addf(f+"."+e.key, "%q is not a role (have: %s)", e.role, strings.Join(slices.Sorted(maps.Keys(d.Roles)), ", "))
			}
		}
		if ph.Cgroup != "" {
			kinds++
			c.command(f+".cgroup", Command{ph.Cgroup}, vars, false)
			if !strings.HasPrefix(ph.Cgroup, "/") {
				c.addf(f+".cgroup", "%q: give the cgroup path glob from its root, like /faultwin/{run}/libpod-*", ph.Cgroup)
			}
		}
		if ph.Mounted != "" {
			kinds++
			c.command(f+".mounted", Command{ph.Mounted}, vars, false)
			if !strings.HasPrefix(ph.Mounted, "/") && !strings.HasPrefix(ph.Mounted, "{") {
				c.addf(f+".mounted", "%q: give the mount point's path glob from the root, like {state}/netns/*", ph.Mounted)
			}
		}
		if kinds > 1 {
			c.addf(f, "gives %d kinds of evidence; a phase is entered by one (appeared, gone, forked, cgroup or mounted)", kinds)
		}
		if kinds == 1 {
			key := phaseEvidence(ph)
			if j, dup := evidence[key]; dup {
				c.addf(f, "%s: the same evidence as %s[%d] (%s), so the two are entered at once; give each phase its own", key, field, j, phases[j].Name)
			}
			evidence[key] = i
		}
		if ph.Cgroup != "" && !strings.Contains(ph.Cgroup, "{run}") {
			c.addf(f+".cgroup", "%q is outside the run's cgroup: a cgroup of another run or of the host would enter the phase; give a glob under the run's cgroup parent, like /faultwin/{run}/libpod-*", ph.Cgroup)
		}
		if kinds == 0 && i > 0 {
			c.addf(f, "no evidence: only the first phase is entered at the operation's start; give appeared, gone, forked, cgroup or mounted")
		}
	}
}

func phaseNames(phases []Phase) []string {
	out := make([]string, len(phases))
	for i, ph := range phases {
		out[i] = ph.Name
	}
	return out
}

func (c *checker) optional(field string, cmd Command, vars []string) {
	if len(cmd) > 0 {
		c.command(field, cmd, vars, true)
	}
}

// command checks an argv: not empty, placeholders known, {base} only as a
// whole element of a command (never inside base itself).
func (c *checker) command(field string, cmd Command, vars []string, baseOK bool) {
	if len(cmd) == 0 {
		c.addf(field, "empty command")
		return
	}
	for i, a := range cmd {
		for _, m := range placeholder.FindAllStringSubmatch(a, -1) {
			name := m[1]
			switch {
			case !slices.Contains(vars, name):
				c.addf(fmt.Sprintf("%s[%d]", field, i), "unknown placeholder {%s} (known: %s)", name, strings.Join(vars, ", "))
			case name == "base" && (!baseOK || a != "{base}"):
				c.addf(fmt.Sprintf("%s[%d]", field, i), "{base} stands alone as a whole element of a command")
			}
		}
	}
}

// Spec is what the driver publishes for the window loader.
func (d *Description) Spec() model.DriverSpec {
	ops := slices.Sorted(maps.Keys(d.Operations))
	pts := make([]model.Point, 0, len(d.Points))
	for _, p := range d.Points {
		watch := p.Watch
		if p.Phase != "" {
			watch = model.PhaseWatch
		}
		pts = append(pts, model.Point{Name: p.Name, Operation: p.Operation, Timed: p.Timed,
			CRIU: p.Watch == "criu" || slices.Contains(p.Kill, "criu"), Desc: strings.Join(strings.Fields(p.Desc), " "),
			Watch: watch, Phase: p.Phase, Kill: slices.Clone(p.Kill), Earliest: d.earliest(p)})
	}
	phases := map[string][]string{}
	for name, op := range d.Operations {
		if len(op.Phases) > 0 {
			phases[name] = phaseNames(op.Phases)
		}
	}
	// Both are looked at alike: outside the run's state dir every object is
	// the run's only by its tie record.
	names := model.HostNames{Links: slices.Concat(d.Owns.Links, d.Claims.Links), Netns: slices.Concat(d.Owns.Netns, d.Claims.Netns),
		Chains: slices.Concat(d.Owns.Chains, d.Claims.Chains), Sockets: slices.Concat(d.Owns.Sockets, d.Claims.Sockets),
		State: slices.Concat(d.Owns.State, d.Claims.State)}
	for _, s := range d.Shared {
		names.Shared = append(names.Shared, s.Key)
	}
	// Its windows are not judged by O1 and P4 (it keeps no ledger
	// faultwin reads) nor H1 (the host settings it changes are its own).
	return model.DriverSpec{Name: d.Name, Operations: ops, Points: pts, Phases: phases, Precondition: d.precondition,
		Names: names, Source: d.File, Unjudged: []string{model.O1, model.P4, model.H1}}
}

func (d *Description) precondition(op string, pre model.Precondition) (string, string) {
	o, ok := d.Operations[op]
	if !ok {
		return "", ""
	}
	var fix []string
	if pre.Cold < o.Needs.Cold {
		fix = append(fix, fmt.Sprintf("cold: %d", o.Needs.Cold))
	}
	if o.Needs.Checkpoint && !pre.Checkpoint {
		fix = append(fix, "checkpoint: true")
	}
	if pre.Restored > 0 && len(d.Precondition.Restored) == 0 {
		return d.Name + " describes no restored sessions", "set restored: 0"
	}
	if pre.Checkpoint && len(d.Precondition.Checkpoint) == 0 {
		return d.Name + " describes no checkpoint", "set checkpoint: false"
	}
	if pre.Display || pre.FailRestore || pre.NetworkLock != "" {
		return d.Name + " describes no display, failed restore or network lock", "set display: false, fail_restore: false and no network_lock"
	}
	if len(fix) > 0 {
		return fmt.Sprintf("%s %s needs %s", d.Name, op, strings.Join(fix, " and ")), "set " + strings.Join(fix, ", ")
	}
	return "", ""
}
