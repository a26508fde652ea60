package host

import (
	"bytes"
	"cmp"
	"errors"
	"io"
	"net"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/nftables"
	"github.com/moby/sys/mountinfo"
	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"faultwin/internal/model"
	"faultwin/snapshots"
)

// linkDumpTries bounds the dumps of one link listing.
const linkDumpTries = 5

// captureLinks lists the links of the harness's network namespace whose
// name starts with roots.LinkPrefix (none when the prefix is empty) or
// matches a roots.Links glob, sorted by name. A dump the kernel marks
// interrupted (links came or went during it, as when a run's veths die with
// its namespaces) is taken again; one still interrupted after that keeps
// what it got and marks the snapshot incomplete.
// Equivalent to: ip -o link show | grep ': <prefix>'.
func captureLinks(roots snapshots.Roots, inc *incomplete) []snapshots.Link {
	out := []snapshots.Link{}
	links, err := netlink.LinkList()
	for try := 1; try < linkDumpTries && errors.Is(err, netlink.ErrDumpInterrupted); try++ {
		time.Sleep(time.Duration(try) * 5 * time.Millisecond)
		links, err = netlink.LinkList()
	}
	if err != nil {
		if !errors.Is(err, netlink.ErrDumpInterrupted) {
			inc.add("links: %v", err)
			return out
		}
		inc.add("links: dump interrupted, list may be partial: %v", err)
	}
	if roots.LinkPrefix == "" && len(roots.Links) == 0 {
		return out
	}
	names := map[int]string{}
	for _, l := range links {
		if a := l.Attrs(); a != nil {
			names[a.Index] = a.Name
		}
	}
	for _, l := range links {
		a := l.Attrs()
		if a == nil {
			continue
		}
		if !(roots.LinkPrefix != "" && strings.HasPrefix(a.Name, roots.LinkPrefix)) && !matchAny(roots.Links, a.Name) {
			continue
		}
		lk := snapshots.Link{Name: a.Name, Index: a.Index, Kind: l.Type(), Up: a.Flags&net.FlagUp != 0}
		if roots.ByProvenance && a.MasterIndex != 0 {
			lk.Master = cmp.Or(names[a.MasterIndex], "ifindex "+strconv.Itoa(a.MasterIndex))
		}
		out = append(out, lk)
	}
	slices.SortFunc(out, func(a, b snapshots.Link) int {
		return cmp.Or(strings.Compare(a.Name, b.Name), cmp.Compare(a.Index, b.Index))
	})
	return out
}

// captureTables is captureHostTables without chain globs: tables only.
func captureTables(inc *incomplete) []snapshots.Table {
	return captureHostTables(snapshots.Roots{}, inc)
}

// captureHostTables lists every nftables table of the harness's network
// namespace (CRIU's "CRIU-*" network-lock tables included), sorted by family
// and name, each with its chains that match a roots.Chains glob, sorted. A
// supervisor such as netavark adds its chains to host tables it does not own
// ("ip nat"), so a table list alone cannot show what it left.
// Equivalent to: nft list tables; nft list chains.
func captureHostTables(roots snapshots.Roots, inc *incomplete) []snapshots.Table {
	out := []snapshots.Table{}
	conn, err := nftables.New()
	if err != nil {
		inc.add("tables: %v", err)
		return out
	}
	tables, err := conn.ListTables()
	if err != nil {
		inc.add("tables: %v", err)
		return out
	}
	chains := map[tableID][]string{}
	if len(roots.Chains) > 0 {
		chains = chainsMatching(conn, roots.Chains, inc)
	}
	var handles map[tableID]uint64
	var chainHandles map[tableID]map[string]uint64
	if roots.ByProvenance && len(roots.Chains) > 0 {
		if handles, chainHandles, err = nftHandles(); err != nil {
			inc.add("%v", err)
		}
	}
	for _, t := range tables {
		tb := snapshots.Table{Family: FamilyName(t.Family), Name: t.Name}
		id := tableID{tb.Family, tb.Name}
		tb.Chains = chains[id]
		if len(tb.Chains) > 0 && handles != nil {
			tb.Handle = handles[id]
			tb.ChainHandles = map[string]uint64{}
			for _, c := range tb.Chains {
				tb.ChainHandles[c] = chainHandles[id][c]
			}
		}
		out = append(out, tb)
	}
	slices.SortFunc(out, func(a, b snapshots.Table) int {
		return cmp.Or(strings.Compare(a.Family, b.Family), strings.Compare(a.Name, b.Name))
	})
	return out
}

// tableID names a table by family and name.
type tableID struct{ Family, Name string }

// chainsMatching lists, per table, the sorted names of the chains that
// match one of globs. A table made between the table and chain dumps has no
// entry in the table list and is seen by the next snapshot.
func chainsMatching(conn *nftables.Conn, globs []string, inc *incomplete) map[tableID][]string {
	out := map[tableID][]string{}
	chains, err := conn.ListChains()
	if err != nil {
		inc.add("chains: %v", err)
		return out
	}
	for _, c := range chains {
		if c.Table == nil || !matchAny(globs, c.Name) {
			continue
		}
		id := tableID{FamilyName(c.Table.Family), c.Table.Name}
		out[id] = append(out[id], c.Name)
	}
	for _, names := range out {
		slices.Sort(names)
	}
	return out
}

// matchAny reports whether name matches one of the path.Match globs a
// driver declares. A malformed glob matches nothing here; the criteria
// refuse to judge with it.
func matchAny(globs []string, name string) bool {
	for _, g := range globs {
		if ok, err := path.Match(g, name); err == nil && ok {
			return true
		}
	}
	return false
}

// FamilyName spells an nftables table family the way nft(8) does: "ip",
// "ip6", "inet", "arp", "bridge", "netdev".
func FamilyName(f nftables.TableFamily) string {
	switch f {
	case nftables.TableFamilyIPv4:
		return "ip"
	case nftables.TableFamilyIPv6:
		return "ip6"
	case nftables.TableFamilyINet:
		return "inet"
	case nftables.TableFamilyARP:
		return "arp"
	case nftables.TableFamilyBridge:
		return "bridge"
	case nftables.TableFamilyNetdev:
		return "netdev"
	}
	return "family" + strconv.Itoa(int(f))
}

// captureNetnsTables lists the faultwin and CRIU tables (names starting
// roots.TablePrefix or "CRIU-") of every network namespace other than the
// harness's own that a process lives in or an nsfs mount keeps alive. CRIU
// makes its network-lock table inside the dumped session's namespace, where
// the host's table list never shows it; it lives as long as that namespace.
// Equivalent to: for each netns, ip netns exec <ns> nft list tables.
func captureNetnsTables(proc string, self uint64, netns map[uint64]int, roots snapshots.Roots, inc *incomplete) []snapshots.Table {
	out := []snapshots.Table{}
	seen := map[uint64]bool{self: true}
	var handles []netnsHandle
	for ino, pid := range netns {
		if seen[ino] {
			continue
		}
		seen[ino] = true
		handles = append(handles, netnsHandle{ino: ino, path: filepath.Join(proc, strconv.Itoa(pid), "ns", "net"), via: "via pid " + strconv.Itoa(pid)})
	}
	mounts, err := mountinfo.GetMountsFromReader(mustOpen(filepath.Join(proc, "self", "mountinfo"), inc), mountinfo.FSTypeFilter("nsfs"))
	if err == nil {
		for _, m := range mounts {
			ino, ok := nsInode(m.Root, "net")
			if !ok || seen[ino] {
				continue
			}
			seen[ino] = true
			handles = append(handles, netnsHandle{ino: ino, path: m.Mountpoint, via: "at " + m.Mountpoint})
		}
	}
	for _, h := range handles {
		tables, err := tablesIn(h.path)
		if err != nil {
			if !gone(err) {
				inc.add("netns tables: ns %d %s: %v", h.ino, h.via, err)
			}
			continue
		}
		for _, t := range tables {
			if (roots.TablePrefix != "" && strings.HasPrefix(t.Name, roots.TablePrefix)) || strings.HasPrefix(t.Name, model.CRIUTablePrefix) {
				out = append(out, snapshots.Table{Family: FamilyName(t.Family), Name: t.Name,
					Netns: "ns " + strconv.FormatUint(h.ino, 10) + " " + h.via})
			}
		}
	}
	slices.SortFunc(out, func(a, b snapshots.Table) int {
		return cmp.Or(strings.Compare(a.Family, b.Family), strings.Compare(a.Name, b.Name), strings.Compare(a.Netns, b.Netns))
	})
	return out
}

type netnsHandle struct {
	ino  uint64
	path string // a file that names the namespace: /proc/<pid>/ns/net or an nsfs mount
	via  string
}

// tablesIn lists the nftables tables of the network namespace named by path.
func tablesIn(path string) ([]*nftables.Table, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	defer unix.Close(fd)
	conn, err := nftables.New(nftables.WithNetNSFd(fd))
	if err != nil {
		return nil, err
	}
	defer conn.CloseLasting()
	return conn.ListTables()
}

// nsInode parses an nsfs mount's root ("net:[4026531840]").
func nsInode(root, kind string) (uint64, bool) {
	rest, ok := strings.CutPrefix(strings.TrimPrefix(root, "/"), kind+":[")
	if !ok || !strings.HasSuffix(rest, "]") {
		return 0, false
	}
	n, err := strconv.ParseUint(strings.TrimSuffix(rest, "]"), 10, 64)
	return n, err == nil
}

func mustOpen(path string, inc *incomplete) io.Reader {
	f, err := os.ReadFile(path)
	if err != nil {
		inc.add("netns tables: %v", err)
		return strings.NewReader("")
	}
	return bytes.NewReader(f)
}
