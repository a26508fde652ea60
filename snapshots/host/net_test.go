package host

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/nftables"
	"github.com/vishvananda/netlink"

	"faultwin/snapshots"
)

// Names of this package's test links and tables; other packages' tests make
// dvh<N> links at the same time, so these never share their prefix.
const (
	testLink0 = "fwsnap0"
	testLink1 = "fwsnap1"
	testTable = "fwsnaptest"
	testCRIU  = "CRIU-fwsnaptest"
)

// addVeth makes the veth pair fwsnap0/fwsnap1 (fwsnap0 up) and deletes it
// at cleanup. Equivalent to: ip link add fwsnap0 type veth peer name fwsnap1.
func addVeth(t *testing.T) {
	t.Helper()
	if l, err := netlink.LinkByName(testLink0); err == nil {
		_ = netlink.LinkDel(l) // left by an earlier, interrupted run
	}
	veth := &netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: testLink0}, PeerName: testLink1}
	if err := netlink.LinkAdd(veth); err != nil {
		t.Fatalf("adding veth: %v", err)
	}
	t.Cleanup(func() {
		if l, err := netlink.LinkByName(testLink0); err == nil {
			if err := netlink.LinkDel(l); err != nil {
				t.Errorf("deleting %s: %v", testLink0, err)
			}
		}
	})
	if err := netlink.LinkSetUp(veth); err != nil {
		t.Fatalf("setting %s up: %v", testLink0, err)
	}
}

// addTables makes "inet fwsnaptest" and "inet CRIU-fwsnaptest" and deletes
// them at cleanup. Equivalent to: nft add table inet fwsnaptest.
func addTables(t *testing.T) {
	t.Helper()
	conn, err := nftables.New()
	if err != nil {
		t.Fatal(err)
	}
	tables := []*nftables.Table{
		{Family: nftables.TableFamilyINet, Name: testTable},
		{Family: nftables.TableFamilyINet, Name: testCRIU},
	}
	for _, tb := range tables {
		conn.AddTable(tb)
	}
	if err := conn.Flush(); err != nil {
		t.Fatalf("adding tables: %v", err)
	}
	t.Cleanup(func() {
		for _, tb := range tables {
			conn.DelTable(tb)
		}
		if err := conn.Flush(); err != nil {
			t.Errorf("deleting tables: %v", err)
		}
	})
}

func TestCaptureLinksAndTables(t *testing.T) {
	e := newEnv(t)
	addVeth(t)
	addTables(t)
	s := capture(t, e.roots, snapshots.Decoys{})

	if len(s.Links) != 2 {
		t.Fatalf("links with prefix fwsnap: %+v", s.Links)
	}
	l0, l1 := s.Links[0], s.Links[1]
	if l0.Name != testLink0 || l0.Kind != "veth" || !l0.Up || l0.Index == 0 {
		t.Errorf("link 0 = %+v", l0)
	}
	if l1.Name != testLink1 || l1.Kind != "veth" || l1.Up {
		t.Errorf("link 1 = %+v", l1)
	}
	for _, name := range []string{testTable, testCRIU} {
		if !slices.ContainsFunc(s.Tables, func(t snapshots.Table) bool {
			return t.Family == "inet" && t.Name == name && t.Netns == "" && len(t.Chains) == 0
		}) {
			t.Errorf("table inet %s not listed: %+v", name, s.Tables)
		}
	}
	if !slices.IsSortedFunc(s.Tables, func(a, b snapshots.Table) int {
		if a.Family != b.Family {
			return strings.Compare(a.Family, b.Family)
		}
		return strings.Compare(a.Name, b.Name)
	}) {
		t.Errorf("tables not sorted: %+v", s.Tables)
	}

	// An empty prefix lists no links at all rather than every link.
	e.roots.LinkPrefix = ""
	if s := capture(t, e.roots, snapshots.Decoys{}); len(s.Links) != 0 {
		t.Errorf("empty prefix listed %+v", s.Links)
	}
}

func TestFamilyName(t *testing.T) {
	for f, want := range map[nftables.TableFamily]string{
		nftables.TableFamilyINet: "inet", nftables.TableFamilyIPv4: "ip", nftables.TableFamilyIPv6: "ip6",
		nftables.TableFamilyARP: "arp", nftables.TableFamilyBridge: "bridge", nftables.TableFamilyNetdev: "netdev",
		99: "family99",
	} {
		if got := FamilyName(f); got != want {
			t.Errorf("FamilyName(%d) = %q, want %q", f, got, want)
		}
	}
}
