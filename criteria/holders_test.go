package criteria_test

import (
	"strings"
	"testing"

	. "github.com/onsi/gomega"

	"faultwin/criteria"
	"faultwin/internal/model"
	"faultwin/snapshots"
)

// recordR1Session is run r1's record once its session's own mount
// namespace (4026532700) was read while the run lived: the session's root
// there, as that namespace mounts it (the harness's table never shows it).
var recordR1Session = snapshots.TieRecord{
	Run: "r1",
	Mounts: []snapshots.RecordedMount{
		{ID: 900123, Dev: "0:77", MountPoint: "/var/lib/faultwin/r1/sessions/s1/root"},
		{ID: 900555, Dev: "0:77", MountPoint: "/", NS: 4026532700},
	},
}

// A process outside the run (no tag, host namespaces, no run cgroup) that
// opened a file of the session's root through the session's own mount
// namespace (/proc/<pid>/root) is the mount's holder: never the run's (no
// sweep kills it), named by the judge and by P2, and the host is not clean
// while it holds the mount. One holding a file through the harness's
// mount of the run's filesystem stays the run's, as before.
func TestHolderOfARunsOwnMountIsNamedNotOwned(t *testing.T) {
	g := NewWithT(t)
	holder := live(300, 60, "cat", "cat")
	holder.Held = []snapshots.Held{{Dev: "8:1", Ino: 4242, Mnt: 900555}}
	forgotten := live(301, 60, "tail", "tail", "-f", "/log")
	forgotten.Held = []snapshots.Held{{Dev: "0:77", Ino: 12, Mnt: 900123}}
	s := snapshots.Snapshot{HostNS: hostNS, Records: []snapshots.TieRecord{recordR1Session},
		Processes: []snapshots.Process{holder, forgotten}}
	roots := snapshots.DefaultRoots("/var/lib/faultwin")

	g.Expect(whyOf(criteria.OfRun(s, scopeR1, snapshots.Decoys{}))).To(HaveKey(301))
	g.Expect(whyOf(criteria.OfRun(s, scopeR1, snapshots.Decoys{}))).NotTo(HaveKey(300), "a holder is not the run's: the sweep kills only the run's")
	g.Expect(whyOf(criteria.LeftoverProcesses(s, roots))).NotTo(HaveKey(300))

	want := "pid 300 (cat) holds open file ino 4242 on / of its mount ns 4026532700 (mount id 900555) of run r1: not the run's, left alone; the run's mount stays alive until it lets go"
	g.Expect(criteria.Leftovers(s, roots)).To(ContainElement(want), "a host with a run's mount kept alive is not clean")

	in := passing(t)
	afterBoth(&in, func(sn *snapshots.Snapshot) {
		sn.HostNS, sn.Records = hostNS, []snapshots.TieRecord{recordR1Session}
		sn.Processes = append(sn.Processes, holder)
	})
	r := result(t, in, model.P2)
	g.Expect(r.Judged && !r.Pass).To(BeTrue(), r.Summary)
	g.Expect(strings.Join(r.Evidence, "\n")).To(ContainSubstring(want))

	// Once it lets go, nothing is left; another run's record holds nothing
	// of r1; a record from before such mounts were recorded ties the same
	// process as the run's, as it was judged.
	gone := s
	gone.Processes = []snapshots.Process{forgotten}
	g.Expect(strings.Join(criteria.Leftovers(gone, roots), "\n")).NotTo(ContainSubstring("holds"))
	g.Expect(whyOf(criteria.OfRun(s, model.NewScope("/var/lib/faultwin", "r2"), snapshots.Decoys{}))).To(BeEmpty())
	old := s
	rec := recordR1Session
	rec.Mounts = []snapshots.RecordedMount{rec.Mounts[0], rec.Mounts[1]}
	rec.Mounts[1].NS = 0
	old.Records = []snapshots.TieRecord{rec}
	g.Expect(whyOf(criteria.OfRun(old, scopeR1, snapshots.Decoys{}))).To(HaveKey(300))
}
