// Command neighbours records and compares the identities of a user's own
// objects on the host (scripts/neighbours.sh): links by ifindex, named
// netns by inode, nft tables and chains by handle, shim sockets by inode.
// An object faultwin deleted, or deleted and made again under the same
// name, shows as a difference.
//
//	neighbours before FILE     what is on the host before the neighbours start
//	neighbours record BEFORE FILE  the neighbours' objects: what is new since BEFORE
//	neighbours compare FILE    exit 1 when one of them is gone or changed
//	neighbours clean BEFORE    delete the nft tables that were not there before
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"syscall"

	"github.com/google/nftables"
	"github.com/vishvananda/netlink"

	"faultwin/snapshots/host"
)

// Host is what identifies each object, by kind and name.
type Host struct {
	Links   map[string]string `json:"links"`   // name -> "ifindex N master M"
	Netns   map[string]uint64 `json:"netns"`   // /run/netns/NAME -> inode
	Tables  map[string]uint64 `json:"tables"`  // "ip nat" -> handle
	Chains  map[string]uint64 `json:"chains"`  // "ip nat CHAIN" -> handle
	Sockets map[string]uint64 `json:"sockets"` // /run/containerd/s/X -> inode
}

func read() (Host, error) {
	h := Host{Links: map[string]string{}, Netns: map[string]uint64{}, Tables: map[string]uint64{}, Chains: map[string]uint64{}, Sockets: map[string]uint64{}}
	links, err := netlink.LinkList()
	if err != nil {
		return h, fmt.Errorf("links: %w", err)
	}
	names := map[int]string{}
	for _, l := range links {
		names[l.Attrs().Index] = l.Attrs().Name
	}
	for _, l := range links {
		a := l.Attrs()
		h.Links[a.Name] = fmt.Sprintf("ifindex %d master %s", a.Index, names[a.MasterIndex])
	}
	for dir, into := range map[string]map[string]uint64{"/run/netns": h.Netns, "/run/containerd/s": h.Sockets} {
		paths, _ := filepath.Glob(filepath.Join(dir, "*"))
		for _, p := range paths {
			var st syscall.Stat_t
			if err := syscall.Stat(p, &st); err == nil {
				into[p] = st.Ino
			}
		}
	}
	tables, chains, err := host.NFTHandles()
	if err != nil {
		return h, fmt.Errorf("nft handles: %w", err)
	}
	for t, hd := range tables {
		h.Tables[t.Family+" "+t.Name] = hd
	}
	for t, cs := range chains {
		for c, hd := range cs {
			h.Chains[t.Family+" "+t.Name+" "+c] = hd
		}
	}
	return h, nil
}

// since keeps what now has and before had not (by name and identity).
func since(before, now Host) Host {
	out := Host{Links: map[string]string{}, Netns: map[string]uint64{}, Tables: map[string]uint64{}, Chains: map[string]uint64{}, Sockets: map[string]uint64{}}
	for k, v := range now.Links {
		if before.Links[k] != v {
			out.Links[k] = v
		}
	}
	for _, m := range [][3]map[string]uint64{{before.Netns, now.Netns, out.Netns}, {before.Tables, now.Tables, out.Tables},
		{before.Chains, now.Chains, out.Chains}, {before.Sockets, now.Sockets, out.Sockets}} {
		for k, v := range m[1] {
			if b, ok := m[0][k]; !ok || b != v {
				m[2][k] = v
			}
		}
	}
	return out
}

// differences lists what of want is gone or changed in now.
func differences(want, now Host) []string {
	var out []string
	for _, k := range sortedKeys(want.Links) {
		if got, ok := now.Links[k]; !ok {
			out = append(out, fmt.Sprintf("link %s (%s) is gone", k, want.Links[k]))
		} else if got != want.Links[k] {
			out = append(out, fmt.Sprintf("link %s was %s, is %s", k, want.Links[k], got))
		}
	}
	for _, c := range []struct {
		kind      string
		want, now map[string]uint64
		id        string
	}{{"netns", want.Netns, now.Netns, "inode"}, {"nft table", want.Tables, now.Tables, "handle"},
		{"nft chain", want.Chains, now.Chains, "handle"}, {"socket", want.Sockets, now.Sockets, "inode"}} {
		for _, k := range sortedKeys(c.want) {
			if got, ok := c.now[k]; !ok {
				out = append(out, fmt.Sprintf("%s %s (%s %d) is gone", c.kind, k, c.id, c.want[k]))
			} else if got != c.want[k] {
				out = append(out, fmt.Sprintf("%s %s was %s %d, is %s %d (deleted and made again)", c.kind, k, c.id, c.want[k], c.id, got))
			}
		}
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

func load(p string) (Host, error) {
	var h Host
	b, err := os.ReadFile(p)
	if err == nil {
		err = json.Unmarshal(b, &h)
	}
	return h, err
}

func save(p string, h Host) error {
	b, err := json.MarshalIndent(h, "", " ")
	if err != nil {
		return err
	}
	return os.WriteFile(p, b, 0o644)
}

// clean deletes the nft tables made since before (the user's engines
// leave them when they stop; iptables-nft makes them whole).
// engineTables are the nft tables the neighbours' engines make when they
// start and leave when they stop: iptables-nft's (the engines' and the CNI
// plugins' chains) and netavark's.
var engineTables = map[string]bool{"nat": true, "filter": true, "mangle": true, "raw": true, "security": true, "netavark": true}

func clean(before Host) error {
	now, err := read()
	if err != nil {
		return err
	}
	conn, err := nftables.New()
	if err != nil {
		return err
	}
	fams := map[string]nftables.TableFamily{"ip": nftables.TableFamilyIPv4, "ip6": nftables.TableFamilyIPv6, "inet": nftables.TableFamilyINet}
	for t := range since(before, now).Tables {
		var fam, name string
		if _, err := fmt.Sscan(t, &fam, &name); err != nil || fams[fam] == 0 {
			continue
		}
		if !engineTables[name] {
			// not what the user's engines make when they start: a run's
			// (faultwin_<run>, CRIU-<run>) or anyone else's, never ours
			// to delete
			fmt.Println("neighbours: left nft table", t, "(made since the neighbours started, not by their engines)")
			continue
		}
		conn.DelTable(&nftables.Table{Family: fams[fam], Name: name})
		fmt.Println("neighbours: deleted nft table", t, "(made since the neighbours started)")
	}
	return conn.Flush()
}

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "neighbours:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	if len(args) < 2 {
		return fmt.Errorf("usage: neighbours before FILE | record BEFORE FILE | compare FILE | clean BEFORE")
	}
	switch args[0] {
	case "before":
		h, err := read()
		if err != nil {
			return err
		}
		return save(args[1], h)
	case "record":
		if len(args) != 3 {
			return fmt.Errorf("usage: neighbours record BEFORE FILE")
		}
		before, err := load(args[1])
		if err != nil {
			return err
		}
		now, err := read()
		if err != nil {
			return err
		}
		mine := since(before, now)
		fmt.Printf("neighbours: recorded %d links, %d netns, %d nft tables, %d chains, %d shim sockets\n",
			len(mine.Links), len(mine.Netns), len(mine.Tables), len(mine.Chains), len(mine.Sockets))
		return save(args[2], mine)
	case "compare":
		want, err := load(args[1])
		if err != nil {
			return err
		}
		now, err := read()
		if err != nil {
			return err
		}
		if d := differences(want, now); len(d) > 0 {
			for _, l := range d {
				fmt.Fprintln(os.Stderr, "neighbours: the user's", l)
			}
			return fmt.Errorf("%d of the user's objects gone or changed", len(d))
		}
		return nil
	case "clean":
		before, err := load(args[1])
		if err != nil {
			return err
		}
		return clean(before)
	}
	return fmt.Errorf("unknown command %q", args[0])
}
