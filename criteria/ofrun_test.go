package criteria_test

import (
	"testing"

	. "github.com/onsi/gomega"

	"faultwin/criteria"
	"faultwin/internal/model"
	"faultwin/snapshots"
)

var scopeR1 = model.Scope{
	Run: "r1", Tag: "faultwin:r1", StateRoot: "/var/lib/faultwin", StateDir: "/var/lib/faultwin/r1",
}

func TestOfRun(t *testing.T) {
	withCwd := func(p snapshots.Process, cwd string) snapshots.Process { p.Cwd = cwd; return p }
	withEnv := func(p snapshots.Process, run string) snapshots.Process { p.RunEnv = run; return p }
	cases := []struct {
		name string
		p    snapshots.Process
		why  []string // nil: not of the run
	}{
		{"exact tag after --tag", live(10, 1, "refsup", "refsup", "serve", "--tag", "faultwin:r1"), []string{"argv tag"}},
		{"--tag=value", live(10, 1, "refsup", "refsup", "--tag=faultwin:r1"), []string{"argv tag"}},
		{"prefix-colliding tag r10", live(10, 1, "sh", "sh", "--tag", "faultwin:r10"), nil},
		{"tag prefix of value", live(10, 1, "sh", "sh", "--tag", "faultwin:r"), nil},
		{"tag not a --tag value", live(10, 1, "sh", "sh", "-c", "faultwin:r1"), nil},
		{"tag inside a longer element", live(10, 1, "sh", "sh", "--tag faultwin:r1"), nil},
		{"--tag as last element", live(10, 1, "sh", "sh", "--tag"), nil},
		{"env tag", withEnv(live(10, 1, "criu", "criu", "swrk", "3"), "r1"), []string{"env tag"}},
		{"env of sibling run", withEnv(live(10, 1, "criu", "criu", "swrk", "3"), "r10"), nil},
		{"cwd below state dir", withCwd(live(10, 1, "criu", "criu"), "/var/lib/faultwin/r1/checkpoints/c1"), []string{"cwd under state dir"}},
		{"cwd is state dir", withCwd(live(10, 1, "criu", "criu"), "/var/lib/faultwin/r1"), []string{"cwd under state dir"}},
		{"cwd in sibling r10", withCwd(live(10, 1, "criu", "criu"), "/var/lib/faultwin/r10/checkpoints/c1"), nil},
		{"cwd unclean path", withCwd(live(10, 1, "criu", "criu"), "/var/lib/faultwin/r10/../r1/x"), []string{"cwd under state dir"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			got := criteria.OfRun(snapshots.Snapshot{Processes: []snapshots.Process{tc.p}}, scopeR1, snapshots.Decoys{})
			if tc.why == nil {
				g.Expect(got).To(BeEmpty())
				return
			}
			g.Expect(got).To(HaveLen(1))
			g.Expect(got[0].Why).To(Equal(tc.why))
		})
	}
}

func TestOfRunRootAndFiles(t *testing.T) {
	g := NewWithT(t)
	p := live(11, 1, "sleep", "sleep", "infinity")
	p.Root = "/var/lib/faultwin/r1/sessions/s1/root"
	q := live(12, 1, "cat", "cat")
	q.Files = []string{"/var/lib/faultwin/r10/ledger.json", "/var/lib/faultwin/r1/checkpoints/c1/images/inventory.img"}
	r := live(13, 1, "cat", "cat")
	r.Files = []string{"/var/lib/faultwin/r10/ledger.json"}
	got := criteria.OfRun(snapshots.Snapshot{Processes: []snapshots.Process{p, q, r}}, scopeR1, snapshots.Decoys{})
	g.Expect(got).To(HaveLen(2))
	g.Expect(got[0].Why).To(Equal([]string{"root under state dir"}))
	g.Expect(got[1].Why).To(Equal([]string{"open file under state dir"}))
}

// A session's children carry no tag: they are the run's through the pid
// namespace whose init is the run's. A process in another namespace is not.
func TestOfRunPidNamespace(t *testing.T) {
	g := NewWithT(t)
	init := live(4150, 7, "refsup", "refsup", "session-init", "--tag", "faultwin:r1")
	init.NS, init.NSpid = map[string]uint64{"pid": 900}, []int{4150, 1}
	child := live(4163, 8, "sleep", "sleep", "infinity")
	child.NS, child.NSpid = map[string]uint64{"pid": 900}, []int{4163, 2}
	stranger := live(5000, 9, "sleep", "sleep", "infinity")
	stranger.NS, stranger.NSpid = map[string]uint64{"pid": 901}, []int{5000, 2}
	// An untagged init does not make its namespace the run's.
	otherInit := live(5001, 9, "sh", "sh")
	otherInit.NS, otherInit.NSpid = map[string]uint64{"pid": 901}, []int{5001, 1}
	got := criteria.OfRun(snapshots.Snapshot{Processes: []snapshots.Process{child, init, stranger, otherInit}}, scopeR1, snapshots.Decoys{})
	g.Expect(got).To(HaveLen(2))
	g.Expect(got[0].Process.PID).To(Equal(4163))
	g.Expect(got[0].Why).To(Equal([]string{"pid ns of pid 4150"}))
	g.Expect(got[1].Process.PID).To(Equal(4150))
}

// Decoys are never the run's, by (pid, start) or by flag; a reused pid is
// not the decoy.
func TestOfRunDecoys(t *testing.T) {
	g := NewWithT(t)
	byID := live(3907, 100, "sh", "sh", "--tag", "faultwin:r1")
	byFlag := live(3908, 101, "sh", "sh", "--tag", "faultwin:r1")
	byFlag.Decoy = true
	reused := live(3909, 555, "sh", "sh", "--tag", "faultwin:r1")
	d := snapshots.Decoys{Processes: []snapshots.DecoyProcess{
		{PID: model.PID{PID: 3907, StartTime: 100}},
		{PID: model.PID{PID: 3909, StartTime: 102}},
	}}
	got := criteria.OfRun(snapshots.Snapshot{Processes: []snapshots.Process{byID, byFlag, reused}}, scopeR1, d)
	g.Expect(got).To(HaveLen(1))
	g.Expect(got[0].Process.ID()).To(Equal(model.PID{PID: 3909, StartTime: 555}))
}

func TestOfRunEmptyScopeMatchesNothing(t *testing.T) {
	g := NewWithT(t)
	p := live(10, 1, "sh", "sh", "--tag", "")
	p.Cwd = "/var/lib/faultwin/r1"
	g.Expect(criteria.OfRun(snapshots.Snapshot{Processes: []snapshots.Process{p}}, model.Scope{StateDir: "/"}, snapshots.Decoys{})).To(BeEmpty())
}
