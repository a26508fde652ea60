package criteria_test

import (
	"strings"
	"testing"

	. "github.com/onsi/gomega"

	"faultwin/criteria"
	"faultwin/internal/model"
	"faultwin/snapshots"
)

// Host namespaces of the hand-made snapshots below: every kind of the
// harness's and pid 1's. Runs' namespaces are 4026532xxx.
var hostNS = []uint64{4026531834, 4026531835, 4026531836, 4026531837, 4026531838, 4026531839, 4026531840, 4026531841}

// inNS returns p living in the given namespaces.
func inNS(p snapshots.Process, ns map[string]uint64) snapshots.Process {
	p.NS = ns
	return p
}

func whyOf(got []criteria.Owned) map[int][]string {
	out := map[int][]string{}
	for _, o := range got {
		out[o.Process.PID] = o.Why
	}
	return out
}

// A process that joined only the run's net, ipc or uts namespace carries no
// mark of its own: the namespace, whose oldest member is the run's, ties it.
func TestOfRunSharedNamespaces(t *testing.T) {
	for _, kind := range []string{"net", "ipc", "uts", "cgroup", "user", "time"} {
		t.Run(kind, func(t *testing.T) {
			g := NewWithT(t)
			run := inNS(live(100, 50, "refsup", "refsup", "--tag", "faultwin:r1"), map[string]uint64{kind: 4026532500})
			joiner := inNS(live(200, 60, "sleep", "sleep"), map[string]uint64{kind: 4026532500})
			stranger := inNS(live(300, 60, "sleep", "sleep"), map[string]uint64{kind: 4026532501})
			s := snapshots.Snapshot{HostNS: hostNS, Processes: []snapshots.Process{run, joiner, stranger}}
			got := whyOf(criteria.OfRun(s, scopeR1, snapshots.Decoys{}))
			g.Expect(got).To(HaveLen(2))
			g.Expect(got[200]).To(Equal([]string{kind + " ns of pid 100"}))
		})
	}
}

// The host's own namespaces tie nothing, and neither does anything in a row
// recorded before the host's namespaces were (no HostNS).
func TestOfRunHostNamespacesTieNothing(t *testing.T) {
	g := NewWithT(t)
	run := inNS(live(100, 50, "refsup", "refsup", "--tag", "faultwin:r1"), map[string]uint64{"net": 4026531840})
	mate := inNS(live(200, 60, "sshd", "sshd"), map[string]uint64{"net": 4026531840})
	s := snapshots.Snapshot{HostNS: hostNS, Processes: []snapshots.Process{run, mate}}
	g.Expect(criteria.OfRun(s, scopeR1, snapshots.Decoys{})).To(HaveLen(1))

	run.NS, mate.NS = map[string]uint64{"net": 4026532500}, map[string]uint64{"net": 4026532500}
	old := snapshots.Snapshot{Processes: []snapshots.Process{run, mate}}
	g.Expect(criteria.OfRun(old, scopeR1, snapshots.Decoys{})).To(HaveLen(1))
}

// A namespace whose oldest member is not the run's is not the run's: a run
// process that entered a service's namespace never makes the service the
// run's (the sweep would kill it).
func TestOfRunEnteredNamespaceStaysItsOwners(t *testing.T) {
	g := NewWithT(t)
	service := inNS(live(80, 10, "dnsmasq", "dnsmasq"), map[string]uint64{"net": 4026532600})
	run := inNS(live(100, 50, "nsenter", "nsenter", "--tag", "faultwin:r1"), map[string]uint64{"net": 4026532600})
	s := snapshots.Snapshot{HostNS: hostNS, Processes: []snapshots.Process{service, run}}
	got := criteria.OfRun(s, scopeR1, snapshots.Decoys{})
	g.Expect(got).To(HaveLen(1))
	g.Expect(got[0].Process.PID).To(Equal(100))
}

// A named namespace the run bound under its state dir (an nsfs mount) ties
// whoever lives there, even with no process of the run left in it; a pin of
// a host namespace, or one under a sibling run's dir, does not.
func TestOfRunPinnedNamespace(t *testing.T) {
	g := NewWithT(t)
	joiner := inNS(live(200, 60, "sleep", "sleep"), map[string]uint64{"net": 4026532700})
	sibling := inNS(live(201, 60, "sleep", "sleep"), map[string]uint64{"net": 4026532701})
	host := inNS(live(202, 60, "sshd", "sshd"), map[string]uint64{"net": 4026531840})
	s := snapshots.Snapshot{HostNS: hostNS, Processes: []snapshots.Process{joiner, sibling, host}, Mounts: []snapshots.Mount{
		{MountPoint: "/var/lib/faultwin/r1/netns/s1", FSType: "nsfs", Pins: "net:[4026532700]"},
		{MountPoint: "/var/lib/faultwin/r10/netns/s1", FSType: "nsfs", Pins: "net:[4026532701]"},
		{MountPoint: "/var/lib/faultwin/r1/netns/host", FSType: "nsfs", Pins: "net:[4026531840]"},
	}}
	got := criteria.OfRun(s, scopeR1, snapshots.Decoys{})
	g.Expect(got).To(HaveLen(1))
	g.Expect(got[0].Why).To(Equal([]string{"net ns bound at /var/lib/faultwin/r1/netns/s1"}))
	g.Expect(got[0].ViaMount).To(Equal("/var/lib/faultwin/r1/netns/s1"))
}

// Files open or mapped on the run's own filesystem are the run's by device
// and inode, whatever path reached them; a file on a sibling run's
// filesystem, or on a device no run mount names, is not.
func TestOfRunHeldFiles(t *testing.T) {
	g := NewWithT(t)
	fd := live(200, 60, "cat", "cat")
	fd.Held = []snapshots.Held{{Dev: "0:90", Ino: 7}, {Dev: "0:55", Ino: 456}}
	mapped := live(201, 60, "python3", "python3")
	mapped.Held = []snapshots.Held{{Dev: "0:56", Ino: 12, Map: true}}
	sibling := live(202, 60, "cat", "cat")
	sibling.Held = []snapshots.Held{{Dev: "0:57", Ino: 1}}
	decoy := live(203, 60, "cat", "cat")
	decoy.Held, decoy.Decoy = []snapshots.Held{{Dev: "0:55", Ino: 9}}, true
	s := snapshots.Snapshot{HostNS: hostNS, Processes: []snapshots.Process{fd, mapped, sibling, decoy}, Mounts: []snapshots.Mount{
		{MountPoint: "/var/lib/faultwin/r1/root", FSType: "overlay", Dev: "0:55"},
		{MountPoint: "/var/lib/faultwin/r1/stage", FSType: "tmpfs", Dev: "0:56"},
		{MountPoint: "/var/lib/faultwin/r10/stage", FSType: "tmpfs", Dev: "0:57"},
	}}
	got := whyOf(criteria.OfRun(s, scopeR1, snapshots.Decoys{}))
	g.Expect(got).To(HaveLen(2))
	g.Expect(got[200]).To(Equal([]string{"open file on run fs dev 0:55 ino 456"}))
	g.Expect(got[201]).To(Equal([]string{"mapping on run fs dev 0:56 ino 12"}))
}

// Ties chain: a zombie child of a process tied by a namespace is the run's,
// and the preflight (any run) names both with their ties.
func TestLeftoversNameNamespaceAndFileTies(t *testing.T) {
	g := NewWithT(t)
	run := inNS(live(100, 50, "refsup", "refsup", "--tag", "faultwin:r1"), map[string]uint64{"uts": 4026532500})
	joiner := inNS(live(200, 60, "sleep", "sleep"), map[string]uint64{"uts": 4026532500})
	zombie := live(201, 61, "sh", "sh")
	zombie.PPID, zombie.State = 200, "Z"
	holder := live(300, 70, "cat", "cat")
	holder.Held = []snapshots.Held{{Dev: "0:55", Ino: 456}}
	s := snapshots.Snapshot{HostNS: hostNS, Processes: []snapshots.Process{run, joiner, zombie, holder}, Mounts: []snapshots.Mount{
		{MountPoint: "/var/lib/faultwin/r1/stage", FSType: "tmpfs", Dev: "0:55"},
	}}
	roots := snapshots.DefaultRoots("/var/lib/faultwin")
	got := whyOf(criteria.LeftoverProcesses(s, roots))
	g.Expect(got[200]).To(Equal([]string{"uts ns of pid 100"}))
	g.Expect(got[201]).To(Equal([]string{"zombie of pid 200"}))
	g.Expect(got[300]).To(Equal([]string{"open file on run fs dev 0:55 ino 456"}))
	left := strings.Join(criteria.Leftovers(s, roots), "\n")
	g.Expect(left).To(ContainSubstring(`pid 200 (start 60) sleep argv="sleep" cwd=/: uts ns of pid 100 [live]`))
	g.Expect(left).To(ContainSubstring(`pid 300 (start 70) cat argv="cat" cwd=/: open file on run fs dev 0:55 ino 456 [live]`))
}

// recordR1 is run r1's tie record: its net namespace and the mount of its
// session's tmpfs, both by the kernel's never-reused ids.
var recordR1 = snapshots.TieRecord{
	Run:    "r1",
	NS:     []snapshots.RecordedNS{{Kind: "net", Ino: 4026532600, ID: 7001}},
	Mounts: []snapshots.RecordedMount{{ID: 900123, Dev: "0:77", MountPoint: "/var/lib/faultwin/state/r1/sessions/s1/root"}},
}

// Once the run's sweep killed everything it marked and removed its state
// dir, a process left in its recorded namespace, or holding a file through
// its recorded mount, is still the run's: for the window's criteria, the
// preflight and the sweep (ViaRun names the run). The same inode under
// another id is a later namespace, and another run's record ties nothing
// to this run.
func TestRecordsTieAfterTheRunIsGone(t *testing.T) {
	g := NewWithT(t)
	joiner := inNS(live(200, 60, "sleep", "sleep"), map[string]uint64{"net": 4026532600})
	joiner.NSID = map[string]uint64{"net": 7001}
	reused := inNS(live(201, 90, "sleep", "sleep"), map[string]uint64{"net": 4026532600})
	reused.NSID = map[string]uint64{"net": 7999}
	holder := live(300, 60, "tail", "tail", "-f", "/log")
	holder.Held = []snapshots.Held{{Dev: "0:31", Ino: 12, Mnt: 900123}}
	other := live(301, 60, "tail", "tail", "-f", "/log")
	other.Held = []snapshots.Held{{Dev: "0:31", Ino: 12, Mnt: 900124}}
	s := snapshots.Snapshot{HostNS: hostNS, Records: []snapshots.TieRecord{recordR1},
		Processes: []snapshots.Process{joiner, holder, other}}

	got := criteria.OfRun(s, scopeR1, snapshots.Decoys{})
	g.Expect(whyOf(got)).To(Equal(map[int][]string{
		200: {"net ns 4026532600 (id 7001) recorded for run r1"},
		300: {"open file on run r1's recorded mount /var/lib/faultwin/state/r1/sessions/s1/root (mount id 900123) ino 12"},
	}))
	for _, o := range got {
		g.Expect(o.ViaRun).To(Equal("r1"))
	}
	g.Expect(criteria.LeftoverProcesses(s, snapshots.DefaultRoots("/var/lib/faultwin/state"))).To(HaveLen(2))

	later := snapshots.Snapshot{HostNS: hostNS, Records: []snapshots.TieRecord{recordR1}, Processes: []snapshots.Process{reused}}
	g.Expect(criteria.OfRun(later, scopeR1, snapshots.Decoys{})).To(BeEmpty(), "the recorded inode under another id is a later namespace")
	r2 := model.NewScope("/var/lib/faultwin", "r2")
	g.Expect(criteria.OfRun(s, r2, snapshots.Decoys{})).To(BeEmpty(), "r1's record ties nothing to r2")
	s.Records = nil
	g.Expect(criteria.OfRun(s, scopeR1, snapshots.Decoys{})).To(BeEmpty(), "without the record nothing ties them")
}
