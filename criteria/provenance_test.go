package criteria_test

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"

	"faultwin/criteria"
	"faultwin/internal/model"
	"faultwin/snapshots"
)

// neighbours is a host with a user's podman container on podman's default
// network (podman0, its veth, its named netns, netavark's chain for it), a
// plain veth pair of the user's and another containerd's shim socket and
// fifo, plus what run r7 made on its own network: its bridge fwr7, a port,
// its named netns, its network's chain and a stale shim socket.
func neighbours() snapshots.Snapshot {
	nat := snapshots.Table{Family: "ip", Name: "nat", Handle: 3,
		Chains:       []string{"NETAVARK-1D8721804F16F", "NETAVARK-77AA", "NETAVARK-HOSTPORT-DNAT"},
		ChainHandles: map[string]uint64{"NETAVARK-1D8721804F16F": 4, "NETAVARK-77AA": 9, "NETAVARK-HOSTPORT-DNAT": 2}}
	return snapshots.Snapshot{
		Label: "preflight", TakenAt: time.Unix(1, 0),
		Links: []snapshots.Link{
			{Name: "fwr7", Index: 40, Kind: "bridge"},
			{Name: "podman0", Index: 5, Kind: "bridge"},
			{Name: "veth0", Index: 6, Kind: "veth", Master: "podman0"},
			{Name: "veth1", Index: 41, Kind: "veth", Master: "fwr7"},
			{Name: "vethuser1", Index: 7, Kind: "veth"},
		},
		Mounts: []snapshots.Mount{
			{MountPoint: "/run/netns/netns-user", FSType: "nsfs", Pins: "net:[4026532300]"},
			{MountPoint: "/run/netns/netns-r7", FSType: "nsfs", Pins: "net:[4026532400]"},
		},
		Tables: []snapshots.Table{nat},
		Sockets: []snapshots.Socket{
			{Path: "/run/containerd/s/user", Inode: "0:25:100"},
			{Path: "/run/containerd/s/r7", Inode: "0:25:200"},
		},
		State: []snapshots.File{{Path: "/run/containerd/fifo/u1/fw1-stdin", Kind: "other", Inode: "0:25:300"}},
	}
}

func neighbourRoots() snapshots.Roots {
	r := podmanRoots(snapshots.DefaultRoots("/var/lib/faultwin"))
	r.Links = []string{"podman0", "fwr*", "veth*"}
	r.Sockets = []string{"/run/containerd/s/*"}
	r.State = []string{"/run/containerd/fifo/*/fw*"}
	return r
}

var r7Claims = snapshots.TieRecord{Run: "r7", Claims: []snapshots.Claim{
	{Key: "link fwr7", ID: "ifindex 40", Why: "a bridge named for the run"},
	{Key: "link veth1", ID: "ifindex 41", Why: "a port of the run's bridge fwr7, made during the run"},
	{Key: "mount /run/netns/netns-r7", ID: "net:[4026532400]", Why: "made during the run; no process but the run's in it"},
	{Key: "chain ip nat NETAVARK-77AA", ID: "table handle 3 chain handle 9", Why: "made during the run"},
	{Key: "socket /run/containerd/s/r7", ID: "0:25:200", Why: "made during the run; no process but the run's holds it"},
}}

// Beside a user's containers, the judge names only what a record claims:
// nothing of the user's is a leftover, and all of it is named as left
// alone. Judged by name (rows before provenance), the same host is all
// leftovers, as it was.
func TestLeftoversByProvenance(t *testing.T) {
	g := NewWithT(t)
	s, roots := neighbours(), neighbourRoots()
	g.Expect(criteria.Leftovers(s, roots)).To(BeEmpty(), "nothing is claimed: nothing is a run's")
	g.Expect(criteria.NotFaultwins(s, roots)).To(ConsistOf(
		"link fwr7 (bridge)", "link podman0 (bridge)", "link veth0 (veth)", "link veth1 (veth)", "link vethuser1 (veth)",
		"mount /run/netns/netns-r7 (nsfs)", "mount /run/netns/netns-user (nsfs)",
		"chain ip nat NETAVARK-1D8721804F16F", "chain ip nat NETAVARK-77AA",
		"socket /run/containerd/s/r7", "socket /run/containerd/s/user",
		"state entry /run/containerd/fifo/u1/fw1-stdin (other)",
	))

	s.Records = []snapshots.TieRecord{r7Claims}
	g.Expect(criteria.Leftovers(s, roots)).To(ConsistOf(
		"mount /run/netns/netns-r7 (nsfs): named netns: claimed by run r7 (made during the run; no process but the run's in it)",
		"link fwr7 (bridge): claimed by run r7 (a bridge named for the run)",
		"link veth1 (veth): claimed by run r7 (a port of the run's bridge fwr7, made during the run)",
		"chain ip nat NETAVARK-77AA: claimed by run r7 (made during the run)",
		"socket /run/containerd/s/r7: no process listens on it (a killed server's), claimed by run r7 (made during the run; no process but the run's holds it)",
	))
	g.Expect(criteria.NotFaultwins(s, roots)).To(ConsistOf(
		"link podman0 (bridge)", "link veth0 (veth)", "link vethuser1 (veth)",
		"mount /run/netns/netns-user (nsfs)", "chain ip nat NETAVARK-1D8721804F16F",
		"socket /run/containerd/s/user", "state entry /run/containerd/fifo/u1/fw1-stdin (other)",
	))

	// A claim names an object by identity: the same name on another
	// object (the bridge deleted, a user's made since) is not the run's.
	s.Links[0].Index = 90
	g.Expect(criteria.Leftovers(s, roots)).NotTo(ContainElement(HavePrefix("link fwr7")))

	byName := roots
	byName.ByProvenance = false
	g.Expect(criteria.Leftovers(neighbours(), byName)).To(ContainElements(
		"link podman0 (bridge): declared by the driver", "link vethuser1 (veth): declared by the driver",
		"mount /run/netns/netns-user (nsfs): named netns"))
	g.Expect(criteria.NotFaultwins(neighbours(), byName)).To(BeEmpty())
}

// In a window, P2, P3 and P7 judge only what the window's run claims: a
// user's container started beside the window (its veth, netns, chain and
// a fifo appearing during the run) moves no verdict, and what the run
// claims and left still fails them.
func TestWindowCriteriaByProvenance(t *testing.T) {
	g := NewWithT(t)
	in := passing(t)
	in.Roots = neighbourRoots()
	in.Roots.StateRoot = in.Scope.StateRoot
	in.Roots.Records = snapshots.RecordsDir(in.Roots.StateRoot)
	in.Scope.Run = "r7"
	in.Scope.StateDir = model.StateDir(in.Scope.StateRoot, "r7")
	in.Window.Criteria = append(in.Window.Criteria, model.P7)
	user := neighbours()
	afterBoth(&in, func(s *snapshots.Snapshot) {
		s.Links, s.Mounts, s.Tables, s.Sockets, s.State = user.Links, append(s.Mounts, user.Mounts...), user.Tables, user.Sockets, user.State
	})
	for _, id := range []string{model.P2, model.P3, model.P7} {
		r := result(t, in, id)
		g.Expect(r.Pass).To(BeTrue(), "%s with nothing claimed: %s %v", id, r.Summary, r.Evidence)
	}
	afterBoth(&in, func(s *snapshots.Snapshot) { s.Records = []snapshots.TieRecord{r7Claims} })
	g.Expect(result(t, in, model.P2).Pass).To(BeFalse(), "the run's claimed netns left")
	g.Expect(result(t, in, model.P3).Summary).To(Equal("3 links, tables, chains or X11 files left after the sweeps"))
	afterBoth(&in, func(s *snapshots.Snapshot) {
		s.Records = append(s.Records, snapshots.TieRecord{Run: "r7", Claims: []snapshots.Claim{
			{Key: "state /run/containerd/fifo/u1/fw1-stdin", ID: "0:25:300", Why: "made during the run"}}})
	})
	g.Expect(result(t, in, model.P7).Pass).To(BeFalse(), "the run's claimed fifo left")

	other := r7Claims
	other.Run = "r8"
	afterBoth(&in, func(s *snapshots.Snapshot) { s.Records = []snapshots.TieRecord{other} })
	g.Expect(result(t, in, model.P3).Pass).To(BeTrue(), "another run's claims are not this run's")
}
