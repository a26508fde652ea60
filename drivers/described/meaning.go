package described

import (
	"fmt"
	"maps"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"faultwin/internal/model"
)

// meaning checks what the fields say together, beyond each one's value:
// mistakes a description that loads would otherwise only show as
// windows that never fire or rows judged on the wrong processes.
func (c *checker) meaning(d *Description) {
	c.cgroupParent(d)
	c.shellOperations(d)
	c.retryTargets(d)
	c.sharedKeys(d)
	c.watchedRoles(d)
}

// watchedRoles: an operation's phases say what it is seen to do; a point
// watching a role that enters none of them watches a process the
// operation is not known to run, and a window on it may never fire.
func (c *checker) watchedRoles(d *Description) {
	for i, p := range d.Points {
		op, ok := d.Operations[p.Operation]
		if !ok || len(op.Phases) == 0 || p.Phase != "" || p.Watch == model.WatchOperation {
			continue
		}
		if _, isRole := d.Roles[p.Watch]; !isRole || slices.ContainsFunc(op.Phases, func(ph Phase) bool { return ph.Appeared == p.Watch }) {
			continue
		}
		c.addf(fmt.Sprintf("points[%d].watch", i), "%q appears in no phase of operation %s: a point on a role the operation is not seen to run never fires; "+
			"add the phase it appears in (appeared: %s), measured with faultwin try, or watch a role that does", p.Watch, p.Operation, p.Watch)
	}
}

// runCgroup is the run's cgroup parent as a description writes it.
const runCgroup = "/faultwin/{run}"

// cgroupParent: the trigger and the judges tell the run's processes by
// the environment the harness gives its commands or by a cgroup under
// the run's; a workload's tasks carry no such environment, so some
// command must put them under /faultwin/{run}.
func (c *checker) cgroupParent(d *Description) {
	for _, a := range d.args() {
		if strings.Contains(a, runCgroup) {
			return
		}
	}
	field := "precondition.cold"
	if d.Daemon != nil {
		field = "daemon.run"
	}
	c.addf(field, "no command puts the workloads' cgroups under the run's cgroup %s (a flag such as --cgroup-parent %s, or --cgroup %s/fw{n}): "+
		"a workload's tasks carry none of the harness's environment, so without it no trigger sees them and no judge tells them from the host's", runCgroup, runCgroup, runCgroup)
}

// args are every argument of every command the description runs, and its
// vars' values.
func (d *Description) args() []string {
	var out []string
	add := func(cs ...Command) {
		for _, c := range cs {
			out = append(out, c...)
		}
	}
	add(d.Base, d.Precondition.Cold, d.Precondition.Checkpoint, d.Precondition.Restored)
	add(d.Setup...)
	for _, op := range d.Operations {
		add(op.Run)
	}
	if d.Daemon != nil {
		add(d.Daemon.Run)
	}
	for _, k := range slices.Sorted(maps.Keys(d.Vars)) {
		out = append(out, d.Vars[k])
	}
	return out
}

// shells are the programs whose -c runs a script: killing one leaves what
// the script started alive.
var shells = []string{"sh", "bash", "dash", "ash"}

// shellOperations: kill: [operation] kills the process the harness
// started and only it; when the operation is a shell script, that is the
// shell, and the supervisor's command it started lives on.
func (c *checker) shellOperations(d *Description) {
	for i, p := range d.Points {
		op, ok := d.Operations[p.Operation]
		if !ok || len(op.Run) < 2 || !slices.Contains(shells, filepath.Base(op.Run[0])) || !strings.HasPrefix(op.Run[1], "-") || !strings.Contains(op.Run[1], "c") {
			continue
		}
		if len(p.Kill) > 0 && !slices.ContainsFunc(p.Kill, func(k string) bool { return k != model.WatchOperation }) {
			c.addf(fmt.Sprintf("points[%d].kill", i), "[operation] kills the process the harness started, and operations.%s.run starts %s: the shell dies and the command it runs lives on; "+
				"give the role of the process that does the work (a role whose comm is the supervisor's)", p.Operation, op.Run[0])
		}
	}
}

var quotedPlaceholder = regexp.MustCompile(`\\\{[a-z_]+\\\}`)

// retryTargets: a retry's target names a workload as recovery.workload
// names them, or U1 looks for one no session is.
func (c *checker) retryTargets(d *Description) {
	w := d.Recovery.Workload
	if w == "" {
		return
	}
	pattern := regexp.QuoteMeta(w)
	pattern = strings.ReplaceAll(pattern, regexp.QuoteMeta("{n}"), "[0-9]+")
	pattern = quotedPlaceholder.ReplaceAllString(pattern, ".*")
	re, err := regexp.Compile("^" + pattern + "$")
	if err != nil {
		return
	}
	for _, op := range slices.Sorted(maps.Keys(d.Recovery.Retry)) {
		t := d.Recovery.Retry[op].Target
		if t == "" || strings.Contains(t, "{") || re.MatchString(t) {
			continue
		}
		c.addf("recovery.retry."+op+".target", "%q is no workload's name: recovery.workload names session n %q (session 2 is %q)", t, w, strings.ReplaceAll(w, "{n}", "2"))
	}
}

// findingKinds are the first words of the finding keys rows print.
var findingKinds = []string{"cgroup", "chain", "criu", "held", "ledger", "link", "mount", "netns", "process", "socket", "state", "sysctl", "table", "x11"}

// sharedKeys: a shared key is matched against finding keys as rows print
// them ("chain ip filter NETAVARK_FORWARD"); one without its kind matches
// nothing, and the finding it means is judged as the run's.
func (c *checker) sharedKeys(d *Description) {
	for i, s := range d.Shared {
		kind, rest, ok := strings.Cut(s.Key, " ")
		if s.Key != "" && (!ok || strings.TrimSpace(rest) == "" || !slices.Contains(findingKinds, kind)) {
			c.addf(fmt.Sprintf("shared[%d].key", i), "%q: write the finding's key as rows print it, its kind first (%s), like \"chain ip filter NETAVARK_FORWARD\" or \"cgroup /sys/fs/cgroup/*/faultwin/*\"",
				s.Key, strings.Join(findingKinds, ", "))
		}
	}
}

// earliest is the first phase a kill at p can land in: the phase it
// watches, or the one its watched role's appearance enters; "" when the
// description does not say.
func (d *Description) earliest(p Point) string {
	op := d.Operations[p.Operation]
	if p.Phase != "" {
		if p.Phase == model.AnyPhase {
			return ""
		}
		return p.Phase
	}
	for _, ph := range op.Phases {
		if p.Watch != model.WatchOperation && ph.Appeared == p.Watch {
			return ph.Name
		}
	}
	return ""
}
