package reclaim

import (
	"slices"
	"strconv"
	"strings"

	"faultwin/criteria"
	"faultwin/internal/model"
	"faultwin/snapshots"
	"faultwin/snapshots/host"
)

// Claim adds to the run's tie record the objects under the roots'
// host-global names that s shows and pre (the window's preflight) did not,
// and that no evidence gives to someone else, each by an identity the
// kernel does not reuse while it lives, and returns s with its records
// carrying them: the criteria judge s with what s itself showed. A host
// has neighbours (a user's own containers, a node's CNI veths,
// another containerd's shims), so appearing during the run is necessary,
// never enough on its own:
//   - a bridge is the run's only when named for the run, a port only of
//     such a bridge, and a link on no bridge is never claimed;
//   - a named netns is not the run's when a process not of the run is in it;
//   - a socket (or a state entry that is one) is not the run's when a
//     process not of the run holds it.
//
// Claim judges one capture; a window's later captures go through a
// Claimer, which remembers what an earlier one saw someone else hold.
func Claim(roots snapshots.Roots, sc model.Scope, pre, s snapshots.Snapshot) (snapshots.Snapshot, error) {
	return (&Claimer{Roots: roots, Scope: sc, Pre: pre}).Claim(s)
}

// Claimer claims for one run across a window's captures. An object a
// capture saw held by (or holding) a process not of the run is someone
// else's for the rest of the window: a neighbour's shim socket left stale
// once its shim exits, or a neighbour's netns its processes left, is not
// the run's because a later capture finds nobody holding it.
type Claimer struct {
	Roots   snapshots.Roots
	Scope   model.Scope
	Pre     snapshots.Snapshot
	foreign map[[2]string]bool // (key, identity) seen someone else's
}

// Claim is Claim for the Claimer's run, with what earlier captures saw.
func (c *Claimer) Claim(s snapshots.Snapshot) (snapshots.Snapshot, error) {
	roots, sc := c.Roots, c.Scope
	if !roots.ByProvenance || roots.Records == "" || sc.Run == "" {
		return s, nil
	}
	if c.foreign == nil {
		c.foreign = map[[2]string]bool{}
	}
	rec := snapshots.TieRecord{Run: sc.Run, Claims: claims(roots, sc, c.Pre, s, c.foreign)}
	if len(rec.Claims) == 0 {
		return s, nil
	}
	if _, err := writeRecord(roots.Records, rec); err != nil {
		return s, err
	}
	s.Records = slices.Clone(s.Records)
	for i := range s.Records {
		if s.Records[i].Run == sc.Run {
			r := s.Records[i]
			r.Claims = slices.Clone(r.Claims)
			r.Merge(rec)
			s.Records[i] = r
			return s, nil
		}
	}
	s.Records = append(s.Records, rec)
	return s, nil
}

// claims decides what of s the run made (see Claim); foreign gains what s
// shows someone else holding, and what it holds is never claimed.
func claims(roots snapshots.Roots, sc model.Scope, pre, s snapshots.Snapshot, foreign map[[2]string]bool) []snapshots.Claim {
	seen := map[[2]string]bool{}
	for _, o := range objects(pre, roots) {
		seen[[2]string{o.Key, o.ID}] = true
	}
	appeared := func(key, id string) bool {
		return id != "" && !seen[[2]string{key, id}] && !foreign[[2]string{key, id}]
	}
	ofRun := map[int]bool{}
	for _, o := range criteria.OfRun(s, sc, snapshots.Decoys{}) {
		ofRun[o.Process.PID] = true
	}
	var out []snapshots.Claim
	add := func(key, id, why string) { out = append(out, snapshots.Claim{Key: key, ID: id, Why: why}) }

	bridges := map[string]bool{}
	for _, l := range s.Links {
		if l.Kind == "bridge" && ownLink(roots, l) && strings.Contains(l.Name, sc.Run) {
			bridges[l.Name] = true
			add("link "+l.Name, snapshots.LinkID(l), "a bridge named for the run")
		}
	}
	for _, l := range s.Links {
		if l.Kind != "bridge" && ownLink(roots, l) && bridges[l.Master] && appeared("link "+l.Name, snapshots.LinkID(l)) {
			add("link "+l.Name, snapshots.LinkID(l), "a port of the run's bridge "+l.Master+", made during the run")
		}
	}
	for _, m := range s.Mounts {
		mp := strings.TrimSuffix(m.MountPoint, "/")
		if m.Foreign || !matchAny(roots.Netns, mp) || model.Within(mp, roots.StateRoot) || !appeared("mount "+mp, snapshots.MountID(m)) {
			continue
		}
		if slices.ContainsFunc(host.NSMembers("net", pinned(m.Pins)), func(pid int) bool { return !ofRun[pid] }) {
			foreign[[2]string{"mount " + mp, snapshots.MountID(m)}] = true
			continue // someone else's namespace, made while the run ran
		}
		add("mount "+mp, snapshots.MountID(m), "made during the run; no process but the run's in it")
	}
	for _, t := range s.Tables {
		if t.Netns != "" || len(t.Chains) == 0 {
			continue
		}
		if appeared(snapshots.TableKey(t), snapshots.TableID(t)) {
			add(snapshots.TableKey(t), snapshots.TableID(t), "made during the run")
		}
		for _, ch := range t.Chains {
			if matchAny(roots.Chains, ch) && appeared(snapshots.ChainKey(t, ch), snapshots.ChainID(t, ch)) {
				add(snapshots.ChainKey(t, ch), snapshots.ChainID(t, ch), "made during the run")
			}
		}
	}
	var socks []string
	for _, so := range s.Sockets {
		socks = append(socks, so.Path)
	}
	for _, f := range s.State {
		if f.Kind == "socket" {
			socks = append(socks, f.Path)
		}
	}
	holders, _ := host.SocketHolders("/proc", socks) // none read: appearance decides
	foreignHeld := func(p string) bool {
		return slices.ContainsFunc(holders[p], func(pid int) bool { return !ofRun[pid] })
	}
	for _, so := range s.Sockets {
		if !matchAny(roots.Sockets, so.Path) {
			continue
		}
		if foreignHeld(so.Path) {
			foreign[[2]string{"socket " + so.Path, so.Inode}] = true
		} else if appeared("socket "+so.Path, so.Inode) {
			add("socket "+so.Path, so.Inode, "made during the run; no process but the run's holds it")
		}
	}
	for _, f := range s.State {
		key := "state " + strings.TrimSuffix(f.Path, "/")
		if f.Kind == "socket" && f.Inode != "" && foreignHeld(f.Path) {
			foreign[[2]string{key, f.Inode}] = true
		}
		switch {
		case model.Within(f.Path, roots.StateRoot) || f.Inode == "" || (f.Kind == "socket" && foreignHeld(f.Path)):
		case model.MadeFrom(f.Path, sc.StateDir):
			add(key, f.Inode, "its path holds the run's state dir")
		case model.MadeFrom(f.Path, roots.StateRoot):
			// made from another run's state dir: that run's
		case appeared(key, f.Inode):
			add(key, f.Inode, "made during the run")
		}
	}
	return out
}

// objects lists what s shows under the roots' host-global names, as
// (key, identity) pairs, for the comparison with the preflight.
func objects(s snapshots.Snapshot, roots snapshots.Roots) []snapshots.Object {
	var out []snapshots.Object
	for _, l := range s.Links {
		out = append(out, snapshots.Object{Key: "link " + l.Name, ID: snapshots.LinkID(l)})
	}
	for _, m := range s.Mounts {
		out = append(out, snapshots.Object{Key: "mount " + strings.TrimSuffix(m.MountPoint, "/"), ID: snapshots.MountID(m)})
	}
	for _, t := range s.Tables {
		out = append(out, snapshots.Object{Key: snapshots.TableKey(t), ID: snapshots.TableID(t)})
		for _, ch := range t.Chains {
			out = append(out, snapshots.Object{Key: snapshots.ChainKey(t, ch), ID: snapshots.ChainID(t, ch)})
		}
	}
	for _, so := range s.Sockets {
		out = append(out, snapshots.Object{Key: "socket " + so.Path, ID: so.Inode})
	}
	for _, f := range s.State {
		out = append(out, snapshots.Object{Key: "state " + strings.TrimSuffix(f.Path, "/"), ID: f.Inode})
	}
	return out
}

// ownLink reports whether a link is under the described names and not a
// refsup-style run link (those carry the run in their prefix already).
func ownLink(roots snapshots.Roots, l snapshots.Link) bool {
	return !(roots.LinkPrefix != "" && strings.HasPrefix(l.Name, roots.LinkPrefix)) && matchAny(roots.Links, l.Name)
}

// pinned reads the inode of an nsfs mount's "net:[4026532600]".
func pinned(pins string) uint64 {
	_, rest, ok := strings.Cut(pins, ":[")
	if !ok {
		return 0
	}
	n, _ := strconv.ParseUint(strings.TrimSuffix(rest, "]"), 10, 64)
	return n
}
