package described

import (
	"gopkg.in/yaml.v3"
	"os"
	"strings"
	"testing"

	"faultwin/internal/model"
)

func TestPodmanDescriptionParses(t *testing.T) {
	b, err := os.ReadFile("supervisors/podman.yaml")
	if err != nil {
		t.Fatal(err)
	}
	d, err := Parse("supervisors/podman.yaml", b)
	if err != nil {
		t.Fatalf("podman.yaml: %v", err)
	}
	spec := d.Spec()
	if spec.Name != "podman" || len(spec.Points) < 10 {
		t.Fatalf("spec %s with %d points", spec.Name, len(spec.Points))
	}
	for _, p := range spec.Points {
		if !p.External() || len(p.Kill) == 0 {
			t.Errorf("%s: external %v, kill %v", p.Name, p.External(), p.Kill)
		}
	}
	if msg, fix := spec.Precondition("restore", model.Precondition{Cold: 1}); msg == "" || !strings.Contains(fix, "checkpoint: true") {
		t.Errorf("restore without a checkpoint: %q, %q", msg, fix)
	}
	if msg, _ := spec.Precondition("restore", model.Precondition{Cold: 1, Checkpoint: true}); msg != "" {
		t.Errorf("restore with a checkpoint refused: %s", msg)
	}
	if msg, _ := spec.Precondition("rm", model.Precondition{Cold: 1, Display: true}); msg == "" {
		t.Error("a display was accepted though podman.yaml describes none")
	}
}

// minimal is a valid description; each case below breaks one thing.
const minimal = `name: demo
binary: demo
timeout_ms: 1000
base: [demo, --root, "{state}"]
precondition:
  cold: ["{base}", --cgroup-parent, "/faultwin/{run}", start, "s{n}", --env, "DEMO_SESSION=s{n}"]
operations:
  stop:
    run: ["{base}", stop, s1]
    needs: {cold: 1}
sweep:
  - ["{base}", clean]
roles:
  helper: {comm: [helper]}
points:
  - name: stop.helper
    operation: stop
    watch: helper
    kill: [operation]
recovery:
  workload: "s{n}"
  env: DEMO_SESSION
  identity: /state/counter
  bound_ms: 200
  list:
    run: ["{base}", list]
    line: '^(?P<name>\S+) (?P<state>\S+)$'
    states: {running: [up], stopped: [down]}
  cleanup:
    - ["{base}", cleanup, s1]
  retry:
    stop: {expect: runs, run: [["{base}", start, s1]]}
`

func TestMinimalDescription(t *testing.T) {
	d, err := Parse("demo.yaml", []byte(minimal))
	if err != nil {
		t.Fatal(err)
	}
	drv := New(d, "/var/lib/x", "")
	drv.init("r1")
	got := strings.Join(drv.expand(d.Operations["stop"].Run, 1), " ")
	if got != "demo --root /var/lib/x/r1 stop s1" {
		t.Errorf("expanded %q", got)
	}
}

func TestDescriptionErrors(t *testing.T) {
	for _, tc := range []struct {
		name, from, to, want string
	}{
		{"unknown field", "timeout_ms: 1000", "timeout_ms: 1000\ntimeout: 5", "demo.yaml:4: timeout: unknown field"},
		{"bad timeout", "timeout_ms: 1000", "timeout_ms: 5", "demo.yaml:3: timeout_ms: 5: give 100..600000 ms"},
		{"wrong type", "timeout_ms: 1000", "timeout_ms: soon", "demo.yaml:3: timeout_ms: `soon` is a string, and this field takes a whole number"},
		{"unknown placeholder", `"{state}"]`, `"{stat}"]`, "demo.yaml:4: base[2]: unknown placeholder {stat}"},
		{"base inside base", `"{state}"]`, `"{base}"]`, "demo.yaml:4: base[2]: {base} stands alone"},
		{"unknown role", "watch: helper", "watch: helpr", "demo.yaml:18: points[0].watch: \"helpr\" is not a role"},
		{"unknown kill role", "kill: [operation]", "kill: [operation, conmon]", "demo.yaml:19: points[0].kill[1]: \"conmon\" is not a role"},
		{"point of another op", "name: stop.helper", "name: start.helper", "demo.yaml:16: points[0].name: \"start.helper\": a point of operation stop is named stop.<instant>"},
		{"needs without command", "needs: {cold: 1}", "needs: {cold: 1, checkpoint: true}", "demo.yaml:10: operations.stop.needs.checkpoint: needs a checkpoint but precondition.checkpoint has no command"},
		{"reserved name", "name: demo", "name: refsup", "demo.yaml:1: name: \"refsup\" is the built-in driver's name"},
		{"long comm", "comm: [helper]", "comm: [a-very-long-helper-name]", "demo.yaml:14: roles.helper.comm[0]: \"a-very-long-helper-name\": a comm is 1..15 characters"},
		{"no sweep", "sweep:\n  - [\"{base}\", clean]\n", "", "demo.yaml:1: sweep: missing"},
		{"catch-all glob", "points:", "owns:\n  links: [\"*\"]\npoints:", "demo.yaml:16: owns.links[0]: \"*\": give a path.Match glob"},
		{"fixed link name", "points:", "owns:\n  links: [podman0, \"veth*\"]\npoints:", "demo.yaml:16: owns.links[0]: \"podman0\" is one fixed name that every run and every user of the supervisor share"},
		{"placeholder in a link name", "points:", "owns:\n  links: [\"fw{run}\"]\npoints:", "demo.yaml:16: owns.links[0]: \"fw{run}\": placeholders are not expanded here"},
		{"fixed socket path", "points:", "owns:\n  sockets: [/run/demo.sock]\npoints:", "owns.sockets[0]: \"/run/demo.sock\" is one fixed name"},
		{"the supervisor's socket dir under owns", "points:", "owns:\n  sockets: [\"/run/demo/s/*\"]\npoints:", "demo.yaml:16: owns.sockets[0]: \"/run/demo/s/*\" is the supervisor's own host-global path, where its users' objects stand too: list it under claims.sockets"},
		{"the supervisor's state dir under owns", "points:", "owns:\n  state: [\"/run/demo/s/*\"]\npoints:", "demo.yaml:16: owns.state[0]: \"/run/demo/s/*\" is outside the run's state dir, the supervisor's own host-global path where its users' state stands too: list it under claims.state"},
		{"the run's state dir under claims", "points:", "claims:\n  state: [\"{state}/runc/*\"]\npoints:", "demo.yaml:16: claims.state[0]: \"{state}/runc/*\": give an absolute glob of the supervisor's own host-global path"},
		{"fixed socket under claims", "points:", "claims:\n  sockets: [/run/demo.sock]\npoints:", "claims.sockets[0]: \"/run/demo.sock\" is one fixed name"},
		{"fixed state path outside the state dir", "points:", "owns:\n  state: [/run/demo/state]\npoints:", "owns.state[0]: \"/run/demo/state\" is one fixed path outside the run's state dir"},
		{"cold without {n}", `start, "s{n}", --env, "DEMO_SESSION=s{n}"]`, `start, "s1", --env, "DEMO_SESSION=s1"]`, "demo.yaml:6: precondition.cold: names no {n}"},
		{"env never set", `, --env, "DEMO_SESSION=s{n}"]`, `]`, "recovery.env: \"DEMO_SESSION\": neither precondition.cold nor the setup or vars it uses names it"},
		{"two phases with one evidence", "needs: {cold: 1}", "needs: {cold: 1}\n    phases:\n      - {name: prepare}\n      - {name: a, appeared: helper}\n      - {name: b, appeared: helper}", "operations.stop.phases[2]: appeared helper: the same evidence as operations.stop.phases[1] (a)"},
		{"cgroup outside the run", "needs: {cold: 1}", "needs: {cold: 1}\n    phases:\n      - {name: prepare}\n      - {name: tasks, cgroup: \"/faultwin/*/demo-*\"}", "operations.stop.phases[1].cgroup: \"/faultwin/*/demo-*\" is outside the run's cgroup"},
		{"state made from {state} without a glob after it", "points:", "owns:\n  state: [\"/run/tool/lock{state}\"]\npoints:", "owns.state[0]: \"/run/tool/lock{state}\": a host-global path made from the run's state dir is an absolute prefix, {state}, then a glob"},
		{"state made from {state} with a relative prefix", "points:", "owns:\n  state: [\"run/lock{state}/*\"]\npoints:", "owns.state[0]: \"run/lock{state}/*\": a host-global path made from"},
		{"shared without why", "points:", "shared:\n  - key: \"chain ip nat X\"\npoints:", "demo.yaml:16: shared[0].why: missing"},
		{"bad yaml", "roles:", "roles: [", "demo.yaml:12: yaml: did not find expected"},
		{"no retry for an operation", "    stop: {expect: runs", "    stopp: {expect: runs", "demo.yaml:32: recovery.retry: no retry for operation stop"},
		{"unknown expectation", "expect: runs", "expect: works", "demo.yaml:32: recovery.retry.stop.expect: \"works\": use continue"},
		{"list without groups", `(?P<state>\S+)$'`, `(\S+)$'`, "demo.yaml:27: recovery.list.line"},
		{"state word twice", "stopped: [down]", "stopped: [down, up]", "recovery.list.states.stopped: \"up\" is already running"},
		{"bound over timeout", "bound_ms: 200", "bound_ms: 5000", "demo.yaml:24: recovery.bound_ms: 5000: give 100..timeout_ms (1000)"},
		{"relative identity", "identity: /state/counter", "identity: counter", "demo.yaml:23: recovery.identity"},
		{"no recovery", "recovery:", "recovery_:", "unknown field"},
		{"var in a var", "base: [demo", "vars: {a: \"demo\", b: \"{a} go\"}\nbase: [demo", "vars.b: {a} is another var"},
		{"relative mounted", "needs: {cold: 1}", "needs: {cold: 1}\n    phases:\n      - {name: prepare}\n      - {name: netns, mounted: \"netns/*\"}", "demo.yaml:13: operations.stop.phases[1].mounted: \"netns/*\": give the mount point's path glob from the root"},
		{"expert step without run", "    stop: {expect: runs, run: [[\"{base}\", start, s1]]}", "    stop: {expect: runs, run: [[\"{base}\", start, s1]]}\n  expert:\n    - {name: fix-it, desc: fixes it}", "recovery.expert[0].run: missing"},
		{"expert step badly named", "    stop: {expect: runs, run: [[\"{base}\", start, s1]]}", "    stop: {expect: runs, run: [[\"{base}\", start, s1]]}\n  expert:\n    - {name: Fix It, desc: fixes it, run: [[\"{base}\", fix]]}", "recovery.expert[0].name: \"Fix It\": name the step in lower case"},
		{"expert step of no operation", "    stop: {expect: runs, run: [[\"{base}\", start, s1]]}", "    stop: {expect: runs, run: [[\"{base}\", start, s1]]}\n  expert:\n    - {name: fix, desc: fixes it, ops: [restore], run: [[\"{base}\", fix]]}", "recovery.expert[0].ops[0]: no operation restore"},
		{"state glob of the whole state dir", "points:", "owns:\n  state: [\"{state}/*\"]\npoints:", "owns.state[0]: \"{state}/*\": give an absolute glob"},
		{"relative state glob", "points:", "owns:\n  state: [\"runc/*\"]\npoints:", "owns.state[0]: \"runc/*\""},
		{"mounted and appeared", "needs: {cold: 1}", "needs: {cold: 1}\n    phases:\n      - {name: prepare}\n      - {name: netns, mounted: \"{state}/n/*\", appeared: helper}", "operations.stop.phases[1]: gives 2 kinds of evidence"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := strings.Replace(minimal, tc.from, tc.to, 1)
			if src == minimal {
				t.Fatalf("case does not change the description")
			}
			_, err := Parse("demo.yaml", []byte(src))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v\nwant it to contain %q", err, tc.want)
			}
		})
	}
}

// TestYAMLErrorWithoutALine: yaml.v3 gives no line when the stream ends
// inside a value; the error names the file's last line, never line 0.
func TestYAMLErrorWithoutALine(t *testing.T) {
	_, err := Parse("demo.yaml", []byte("name: demo\nsweep: \"x\n"))
	if err == nil || !strings.HasPrefix(err.Error(), "demo.yaml:2: yaml: found unexpected end of stream") {
		t.Fatalf("got %v, want demo.yaml:2: yaml: found unexpected end of stream", err)
	}
}

// A file with a value of the wrong type and a meaning error elsewhere gets
// both at once, each named by its field path as written; nothing derived
// from the value that did not decode is added.
func TestTypeAndMeaningErrorsTogether(t *testing.T) {
	src := strings.Replace(strings.Replace(minimal, "timeout_ms: 1000", "timeout_ms: 30s", 1), "watch: helper", "watch: helpr", 1)
	_, err := Parse("demo.yaml", []byte(src))
	if err == nil {
		t.Fatal("no error")
	}
	lines := strings.Split(err.Error(), "\n")
	want := []string{"demo.yaml:3: timeout_ms: `30s` is a string, and this field takes a whole number",
		`demo.yaml:18: points[0].watch: "helpr" is not a role`}
	if len(lines) != len(want) {
		t.Fatalf("errors:\n%s\nwant:\n%s", err, strings.Join(want, "\n"))
	}
	for i := range want {
		if !strings.HasPrefix(lines[i], want[i]) {
			t.Errorf("error %d: %q, want %q", i, lines[i], want[i])
		}
	}
}

func TestFieldAtAndPlainType(t *testing.T) {
	src := "a: 1\nops:\n  stop:\n    needs: {cold: x}\nlist:\n  - one\n  - two\n"
	var root yaml.Node
	if err := yaml.Unmarshal([]byte(src), &root); err != nil {
		t.Fatal(err)
	}
	for line, want := range map[int]string{1: "a", 4: "ops.stop.needs.cold", 7: "list[1]", 9: ""} {
		if got := fieldAt(root.Content[0], line); got != want {
			t.Errorf("line %d: %q, want %q", line, got, want)
		}
	}
	if got := plainType("cannot unmarshal !!seq into string"); got != "cannot unmarshal !!seq into string" {
		t.Errorf("an unknown form changed: %q", got)
	}
	if got := plainType("cannot unmarshal !!map `{a: 1}` into []string"); got != "`{a: 1}` is a mapping, and this field takes a list" {
		t.Errorf("%q", got)
	}
}

// A supervisor that keeps a lock per workload outside its root, under a
// path made from its state dir, declares it with {state} inside the glob.
func TestStateMadeFromTheStateDir(t *testing.T) {
	d, err := Parse("demo.yaml", []byte(strings.Replace(minimal, "points:", "owns:\n  state: [\"/run/tool/lock{state}/*\", \"{state}/runc/*\"]\npoints:", 1)))
	if err != nil {
		t.Fatal(err)
	}
	if got := d.Spec().Names.State; len(got) != 2 || got[0] != "/run/tool/lock{state}/*" {
		t.Errorf("state globs %q", got)
	}
}

// base is optional: a supervisor with one binary per verb writes each
// command out; it is required once a command uses {base}.
func TestBaseOptional(t *testing.T) {
	noBase := strings.Replace(minimal, "base: [demo, --root, \"{state}\"]\n", "", 1)
	if _, err := Parse("demo.yaml", []byte(strings.ReplaceAll(noBase, "\"{base}\"", "demo"))); err != nil {
		t.Errorf("no base, no {base}: %v", err)
	}
	if _, err := Parse("demo.yaml", []byte(noBase)); err == nil || !strings.Contains(err.Error(), "base: missing, and a command uses {base}") {
		t.Errorf("no base, commands use {base}: %v", err)
	}
}
