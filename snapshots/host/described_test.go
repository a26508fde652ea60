package host

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/google/nftables"
	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"faultwin/snapshots"
)

// Names of the host-global things the described-roots tests make; none
// shares a prefix with another package's test links or tables.
const (
	testPodLink  = "fwtestpod0"
	testPodPeer  = "fwtestpeer0"
	testNatTable = "fwtest_nat"
)

// addPodVeth makes the veth pair name/peer and deletes it at cleanup. A
// veth, not a dummy: kernels without the dummy module have veth, which
// the supervisors need anyway.
// Equivalent to: ip link add <name> type veth peer name <peer>.
func addPodVeth(t *testing.T, name, peer string) {
	t.Helper()
	if l, err := netlink.LinkByName(name); err == nil {
		_ = netlink.LinkDel(l) // left by an earlier, interrupted run
	}
	if err := netlink.LinkAdd(&netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: name}, PeerName: peer}); err != nil {
		t.Fatalf("adding veth %s: %v", name, err)
	}
	t.Cleanup(func() {
		if l, err := netlink.LinkByName(name); err == nil {
			if err := netlink.LinkDel(l); err != nil {
				t.Errorf("deleting %s: %v", name, err)
			}
		}
	})
}

// addChains makes the table "ip fwtest_nat" with the given regular chains
// and deletes it, chains and all, at cleanup.
// Equivalent to: nft add table ip fwtest_nat; nft add chain ip fwtest_nat <c>.
func addChains(t *testing.T, chains ...string) {
	t.Helper()
	conn, err := nftables.New()
	if err != nil {
		t.Fatal(err)
	}
	tb := &nftables.Table{Family: nftables.TableFamilyIPv4, Name: testNatTable}
	if old, err := conn.ListTableOfFamily(testNatTable, nftables.TableFamilyIPv4); err == nil && old != nil {
		conn.DelTable(tb) // left by an earlier, interrupted run
		_ = conn.Flush()
	}
	conn.AddTable(tb)
	for _, c := range chains {
		conn.AddChain(&nftables.Chain{Name: c, Table: tb})
	}
	if err := conn.Flush(); err != nil {
		t.Fatalf("adding table %s with chains %q: %v", testNatTable, chains, err)
	}
	t.Cleanup(func() {
		conn.DelTable(tb)
		if err := conn.Flush(); err != nil {
			t.Errorf("deleting table %s: %v", testNatTable, err)
		}
	})
}

// TestCaptureDescribedLinks: a link named by a Roots.Links glob is listed
// besides the prefixed ones, also when there is no prefix, and not without
// the glob.
func TestCaptureDescribedLinks(t *testing.T) {
	e := newEnv(t)
	addPodVeth(t, testPodLink, testPodPeer)

	named := func(s snapshots.Snapshot) (snapshots.Link, bool) {
		i := slices.IndexFunc(s.Links, func(l snapshots.Link) bool { return l.Name == testPodLink })
		if i < 0 {
			return snapshots.Link{}, false
		}
		return s.Links[i], true
	}
	if l, ok := named(capture(t, e.roots, snapshots.Decoys{})); ok {
		t.Errorf("listed without a glob: %+v", l)
	}

	e.roots.Links = []string{"podman0", "fwtestpod*"}
	l, ok := named(capture(t, e.roots, snapshots.Decoys{}))
	if !ok || l.Kind != "veth" || l.Index == 0 {
		t.Errorf("link %s = %+v (listed %v)", testPodLink, l, ok)
	}

	e.roots.LinkPrefix = ""
	s := capture(t, e.roots, snapshots.Decoys{})
	if _, ok := named(s); !ok {
		t.Errorf("a glob without a prefix must still list %s: %+v", testPodLink, s.Links)
	}
	for _, l := range s.Links {
		if !matchAny(e.roots.Links, l.Name) {
			t.Errorf("listed %s, which no glob matches", l.Name)
		}
	}
}

// TestCaptureChains: with chain globs, a host table carries its matching
// chains, sorted; without them no table carries any.
func TestCaptureChains(t *testing.T) {
	needRoot(t)
	addChains(t, "NETAVARKTEST-1", "OTHER-1", "NETAVARKTEST-0")

	table := func(ts []snapshots.Table) snapshots.Table {
		t.Helper()
		i := slices.IndexFunc(ts, func(tb snapshots.Table) bool { return tb.Family == "ip" && tb.Name == testNatTable })
		if i < 0 {
			t.Fatalf("table ip %s not listed: %+v", testNatTable, ts)
		}
		return ts[i]
	}

	inc := &incomplete{}
	ts := captureHostTables(snapshots.Roots{Chains: []string{"NETAVARKTEST-*", "NOSUCH*"}}, inc)
	if got := table(ts).Chains; !slices.Equal(got, []string{"NETAVARKTEST-0", "NETAVARKTEST-1"}) {
		t.Errorf("chains = %q", got)
	}
	for _, tb := range ts {
		for _, c := range tb.Chains {
			if !matchAny([]string{"NETAVARKTEST-*"}, c) {
				t.Errorf("table %s %s lists chain %s, which no glob matches", tb.Family, tb.Name, c)
			}
		}
	}
	if inc.list() != nil {
		t.Errorf("incomplete: %q", inc.list())
	}

	for name, ts := range map[string][]snapshots.Table{
		"no globs":      captureHostTables(snapshots.Roots{}, inc),
		"captureTables": captureTables(inc),
	} {
		for _, tb := range ts {
			if tb.Chains != nil {
				t.Errorf("%s: table %s %s lists chains %q", name, tb.Family, tb.Name, tb.Chains)
			}
		}
		table(ts)
	}
}

// TestCaptureNetnsMount: an nsfs mount at a path a Roots.Netns glob
// matches is listed, with its type, and not without the glob.
func TestCaptureNetnsMount(t *testing.T) {
	e := newEnv(t)
	dir := e.mkdir(t, e.base, "run-netns")
	target := filepath.Join(dir, "netns-fwsnap")
	if err := os.WriteFile(target, nil, 0o444); err != nil {
		t.Fatal(err)
	}
	// The harness's own netns: a named netns without making a namespace.
	if err := unix.Mount("/proc/self/ns/net", target, "", unix.MS_BIND, ""); err != nil {
		t.Fatalf("bind-mounting the netns at %s: %v", target, err)
	}
	t.Cleanup(func() {
		if err := unix.Unmount(target, unix.MNT_DETACH); err != nil {
			t.Errorf("unmounting %s: %v", target, err)
		}
	})

	find := func(s snapshots.Snapshot) (snapshots.Mount, bool) {
		i := slices.IndexFunc(s.Mounts, func(m snapshots.Mount) bool { return m.MountPoint == target })
		if i < 0 {
			return snapshots.Mount{}, false
		}
		return s.Mounts[i], true
	}
	if m, ok := find(capture(t, e.roots, snapshots.Decoys{})); ok {
		t.Errorf("listed without a glob: %+v", m)
	}
	e.roots.Netns = []string{filepath.Join(dir, "netns-*")}
	s := capture(t, e.roots, snapshots.Decoys{})
	m, ok := find(s)
	if !ok || m.FSType != "nsfs" || m.Foreign {
		t.Errorf("netns mount = %+v (listed %v) in %+v", m, ok, s.Mounts)
	}
	if len(s.Incomplete) != 0 {
		t.Errorf("incomplete: %q", s.Incomplete)
	}
}

// TestFakeNetnsMounts: named netns mounts are kept by their glob, in the
// host mount namespace and in a foreign one alike; lookalike paths are not.
func TestFakeNetnsMounts(t *testing.T) {
	procs, ps, _ := fakeProcs(t)
	roots := fakeRoots
	roots.Netns = []string{"/run/netns/netns-*"}
	inc := &incomplete{}
	var got []string
	for _, m := range captureMounts("testdata/proc", ps.self, procs, roots, fakeDecoys, newRunFS(), inc) {
		s := m.MountPoint + " " + m.FSType
		if m.Foreign {
			s += " foreign"
		}
		got = append(got, s)
	}
	if len(inc.reasons) != 0 {
		t.Errorf("incomplete: %q", inc.reasons)
	}
	want := []string{
		"/mnt/yard cgroup",
		"/run/netns/netns-0c1d2e3f-4a5b nsfs", // not /run/netns/cni-0c1d nor /run/netnsX/netns-1
		"/srv/decoymnt tmpfs",
		"/srv/fwdecoy/m tmpfs",
		"/tmp/.criu.mntns.abc tmpfs",
		"/var/lib/fwfake/r1/img/.criu.cgyard.xyz/cpu cgroup",
		"/var/lib/fwfake/r1/root overlay",
		"/run/netns/netns-77 nsfs foreign",
		"/var/lib/fwfake/r1/secret tmpfs foreign",
	}
	if !slices.Equal(got, want) {
		t.Errorf("mounts:\n got %q\nwant %q", got, want)
	}
}
