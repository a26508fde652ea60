package snapshots

import (
	"strconv"
	"strings"
)

// Claim is one host object under a host-global name that a run made, as
// the harness saw the evidence: its finding key ("link fwr1a2b3c",
// "mount /run/netns/netns-…", "chain ip nat NETAVARK-…", "table ip nat",
// "socket /run/containerd/s/…", "state /run/containerd/fifo/…/fw1-stdin"),
// its identity, which the kernel does not give to another object while
// this one lives (ObjectID), and why it is the run's. A name alone is never
// a claim: podman0, docker0, cni0, /run/netns/* and a daemon's shim
// sockets are every user's names.
type Claim struct {
	Key string `json:"key"`
	ID  string `json:"id"`
	Why string `json:"why"`
}

// Same reports whether c and o name one object.
func (c Claim) Same(o Claim) bool { return c.Key == o.Key && c.ID == o.ID }

// Object is a host object under a host-global name as one snapshot shows
// it: what a claim is matched against.
type Object struct {
	Key  string
	ID   string
	Line string // how findings name it
}

// LinkID is a link's identity: its index in the host namespace, which the
// kernel does not hand out again while the link lives.
func LinkID(l Link) string { return "ifindex " + strconv.Itoa(l.Index) }

// ChainID is a chain's identity: its table's handle and its own.
func ChainID(t Table, chain string) string {
	h, ok := t.ChainHandles[chain]
	if !ok || t.Handle == 0 {
		return ""
	}
	return "table handle " + strconv.FormatUint(t.Handle, 10) + " chain handle " + strconv.FormatUint(h, 10)
}

// TableID is a table's identity: its handle.
func TableID(t Table) string {
	if t.Handle == 0 {
		return ""
	}
	return "table handle " + strconv.FormatUint(t.Handle, 10)
}

// TableKey is a table's finding key: "table ip nat".
func TableKey(t Table) string { return "table " + strings.TrimSpace(t.Family+" "+t.Name) }

// ChainKey is a chain's finding key: "chain ip nat NETAVARK-1D8721804F16F".
func ChainKey(t Table, chain string) string {
	return "chain " + strings.TrimSpace(t.Family+" "+t.Name) + " " + chain
}

// MountID is a named netns mount's identity: the namespace it pins
// ("net:[4026532600]").
func MountID(m Mount) string { return m.Pins }

// ClaimOf finds the record claiming the object key with identity id, and
// returns its run and why. An object with no identity is never claimed.
func ClaimOf(records []TieRecord, key, id string) (run, why string, ok bool) {
	if id == "" {
		return "", "", false
	}
	for _, r := range records {
		for _, c := range r.Claims {
			if c.Key == key && c.ID == id {
				return r.Run, c.Why, true
			}
		}
	}
	return "", "", false
}

// ClaimedBy reports whether run's record claims the object.
func ClaimedBy(records []TieRecord, run, key, id string) bool {
	if id == "" {
		return false
	}
	for _, r := range records {
		if r.Run != run {
			continue
		}
		for _, c := range r.Claims {
			if c.Key == key && c.ID == id {
				return true
			}
		}
	}
	return false
}
