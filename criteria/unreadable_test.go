package criteria_test

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"

	"faultwin/criteria"
	. "faultwin/criteria/matchers"
	"faultwin/internal/model"
	"faultwin/snapshots"
)

// neighbour is what the host's init had just forked when a preflight read
// it: a copy of init, refused, that the capture set aside.
func neighbour(aside string) snapshots.Process {
	return snapshots.Process{PID: 812, StartTime: 90, PPID: 1, State: "S", Comm: "process_api",
		Argv: []string{"/process_api", "--firecracker-init"}, NSpid: []int{812},
		Unreadable: "environ, cwd, root: permission denied", SetAside: aside}
}

const asideWhy = "host cgroup /, host pid, mnt and net namespaces, parent pid 1 (process_api) not of a run"

// A process the capture set aside is noted, never counted: the host is
// clean, and hostcheck, the preflight and sweep's last word say what was
// set aside and why.
func TestSetAsideIsANoteNotAGap(t *testing.T) {
	g := NewWithT(t)
	roots := snapshots.DefaultRoots("/var/lib/faultwin")
	s := snapshots.Snapshot{Label: "preflight", TakenAt: time.Unix(1, 0), Processes: []snapshots.Process{neighbour(asideWhy)}}
	g.Expect(criteria.Leftovers(s, roots)).To(BeEmpty())
	note := `pid 812 (start 90) process_api argv="/process_api --firecracker-init" unreadable (environ, cwd, root: permission denied); set aside: ` + asideWhy
	g.Expect(criteria.SetAside(s, roots)).To(Equal([]string{note}))

	in := passing(t)
	in.Preflight.Processes = append(in.Preflight.Processes, neighbour(asideWhy))
	r := result(t, in, model.PRE)
	g.Expect(r).To(Hold())
	g.Expect(r).To(HaveEvidence(note))

	in = passing(t)
	afterBoth(&in, func(s *snapshots.Snapshot) { s.Processes = append(s.Processes, neighbour(asideWhy)) })
	r = result(t, in, model.P1)
	g.Expect(r).To(Hold())
	g.Expect(r).To(HaveEvidence("after_sweep2: " + note))
	g.Expect(criteria.Evaluate(in)).To(HaveStatus(model.StatusPass))
}

// A row recorded before set_aside existed has none: its unreadable process
// is a gap, as it was judged.
func TestUnreadableWithoutSetAsideIsStillAGap(t *testing.T) {
	g := NewWithT(t)
	roots := snapshots.DefaultRoots("/var/lib/faultwin")
	s := snapshots.Snapshot{Label: "preflight", TakenAt: time.Unix(1, 0), Processes: []snapshots.Process{neighbour("")}}
	gap := `pid 812 (start 90) process_api argv="/process_api --firecracker-init" unreadable (environ, cwd, root: permission denied): cannot rule out`
	g.Expect(criteria.Leftovers(s, roots)).To(Equal([]string{gap}))
	g.Expect(criteria.SetAside(s, roots)).To(BeEmpty())

	in := passing(t)
	in.Preflight.Processes = append(in.Preflight.Processes, neighbour(""))
	g.Expect(result(t, in, model.PRE)).To(BeUnjudged())
	g.Expect(criteria.Evaluate(in)).To(HaveStatus(model.StatusInvalid))
}

// A process set aside whose parent the judge finds of a run (or a gap
// itself) is a gap after all: the capture's word is not the last.
func TestSetAsideWithARunsParentIsAGap(t *testing.T) {
	g := NewWithT(t)
	roots := snapshots.DefaultRoots("/var/lib/faultwin")
	parent := live(700, 10, "sleep", "sleep", "--tag", "faultwin:r7")
	child := neighbour(asideWhy)
	child.PPID = 700
	s := snapshots.Snapshot{Label: "preflight", TakenAt: time.Unix(1, 0), Processes: []snapshots.Process{parent, child}}
	g.Expect(criteria.Leftovers(s, roots)).To(ContainElement(
		`pid 812 (start 90) process_api argv="/process_api --firecracker-init" unreadable (environ, cwd, root: permission denied): cannot rule out (set aside by the capture, but its parent pid 700 is of a run or unreadable)`))
	g.Expect(criteria.SetAside(s, roots)).To(BeEmpty())

	in := passing(t)
	tagged := live(700, 10, "sleep", "sleep", "--tag", in.Scope.Tag)
	afterBoth(&in, func(s *snapshots.Snapshot) { s.Processes = append(s.Processes, tagged, child) })
	g.Expect(result(t, in, model.P1)).To(HaveEvidence("its parent pid 700 is of a run or unreadable"))
}
