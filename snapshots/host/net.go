package host

import (
	"cmp"
	"errors"
	"net"
	"slices"
	"strconv"
	"strings"

	"github.com/google/nftables"
	"github.com/vishvananda/netlink"

	"faultwin/snapshots"
)

// captureLinks lists the links of the harness's network namespace whose
// name starts with roots.LinkPrefix (none when the prefix is empty), sorted
// by name. An interrupted dump keeps what it got and marks the snapshot
// incomplete.
// Equivalent to: ip -o link show | grep ': <prefix>'.
func captureLinks(roots snapshots.Roots, inc *incomplete) []snapshots.Link {
	out := []snapshots.Link{}
	links, err := netlink.LinkList()
	if err != nil {
		if !errors.Is(err, netlink.ErrDumpInterrupted) {
			inc.add("links: %v", err)
			return out
		}
		inc.add("links: dump interrupted, list may be partial: %v", err)
	}
	if roots.LinkPrefix == "" {
		return out
	}
	for _, l := range links {
		a := l.Attrs()
		if a == nil || !strings.HasPrefix(a.Name, roots.LinkPrefix) {
			continue
		}
		out = append(out, snapshots.Link{
			Name: a.Name, Index: a.Index, Kind: l.Type(), Up: a.Flags&net.FlagUp != 0,
		})
	}
	slices.SortFunc(out, func(a, b snapshots.Link) int {
		return cmp.Or(strings.Compare(a.Name, b.Name), cmp.Compare(a.Index, b.Index))
	})
	return out
}

// captureTables lists every nftables table of the harness's network
// namespace (CRIU's "CRIU-*" network-lock tables included), sorted by family
// and name.
// Equivalent to: nft list tables.
func captureTables(inc *incomplete) []snapshots.Table {
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
	for _, t := range tables {
		out = append(out, snapshots.Table{Family: FamilyName(t.Family), Name: t.Name})
	}
	slices.SortFunc(out, func(a, b snapshots.Table) int {
		return cmp.Or(strings.Compare(a.Family, b.Family), strings.Compare(a.Name, b.Name))
	})
	return out
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
