package main

import (
	"net"
	"reflect"
	"testing"

	"github.com/vishvananda/netlink"

	"faultwin/fixtures/refsup/api"
	"faultwin/fixtures/refsup/network"
)

// stable returns the in-namespace pids of a session's long-lived processes
// (its shells and the hour-long sleep), leaving out the counter loop's
// short sleeps, which come and go.
func stable(s api.SessionInfo) []int {
	var out []int
	for _, p := range s.Procs {
		if p.Comm == "sh" || (p.Comm == "sleep" && len(p.Argv) > 1 && p.Argv[1] == "3600") {
			out = append(out, p.NSpid)
		}
	}
	return out
}

func TestCreateCheckpointRestoreDestroy(t *testing.T) {
	e := newEnv(t)
	e.serve()
	cold := e.create()
	if cold.State != "running" || cold.InitPID == 0 || cold.Marker == "" || cold.CounterMrk != cold.Marker {
		t.Fatalf("cold session: %+v", cold)
	}
	var before api.SessionInfo
	e.must(&before, "inspect", "--session", cold.Session)
	ck := e.checkpoint(cold.Session)
	if ck.Counter < 1 || ck.Marker != cold.Marker {
		t.Fatalf("checkpoint: %+v", ck)
	}
	if l := e.leftovers(e.lay.Layer(ck.Checkpoint)); len(l.Procs) != 0 || len(l.Links) != 0 {
		t.Fatalf("checkpoint did not consume the session: %+v", l)
	}

	r := e.restore(ck.Checkpoint)
	// identity: same marker in environ and written from memory, counter
	// continued, same in-namespace pids, new host pid
	if r.Marker != cold.Marker || r.CounterMrk != cold.Marker {
		t.Errorf("marker after restore %q/%q, want %q", r.Marker, r.CounterMrk, cold.Marker)
	}
	if r.Counter <= ck.Counter {
		t.Errorf("counter %d after restore, dump had %d: it restarted", r.Counter, ck.Counter)
	}
	if got, want := stable(r), stable(before); !reflect.DeepEqual(got, want) || len(want) < 3 {
		t.Errorf("in-namespace pids %v after restore, want %v", got, want)
	}
	if r.InitPID == cold.InitPID || r.Clone == "" || r.From != ck.Checkpoint || r.State != "ready" {
		t.Errorf("restored session: %+v", r)
	}
	// network: the new veth is addressed, its peer too, and the table is there
	l, err := netlink.LinkByName(r.Veth)
	if err != nil {
		t.Fatalf("veth %s: %v", r.Veth, err)
	}
	addrs, _ := netlink.AddrList(l, netlink.FAMILY_V4)
	if len(addrs) != 1 || addrs[0].IPNet.String() != r.Addr {
		t.Errorf("veth %s addresses %v, want %s", r.Veth, addrs, r.Addr)
	}
	if ok, _ := network.TableExists(e.lay.Table()); !ok {
		t.Errorf("table %s missing", e.lay.Table())
	}
	c, err := net.DialTimeout("tcp", net.JoinHostPort(network.PeerAddr(network.PeerAddrN(r.Veth)).IP.String(), "9"), 300e6)
	if c != nil {
		c.Close()
	}
	_ = err // nothing listens in the session: a refusal (not a timeout) proves the path works
	if err != nil && !isRefused(err) {
		t.Errorf("no path to the session over %s: %v", r.Veth, err)
	}

	var list api.ListInfo
	e.must(&list, "list")
	if len(list.Sessions) != 1 || len(list.Checkpoints) != 1 {
		t.Errorf("list: %+v", list)
	}
	e.must(nil, "destroy", "--session", r.Session)
	left := e.leftovers(e.lay.Layer(ck.Checkpoint))
	left.Ledger = false // the checkpoint is still owned
	if !left.empty() {
		t.Fatalf("destroy left %+v", left)
	}
	e.killDaemon()
	rep := e.sweep()
	if len(rep.Killed) != 0 || len(rep.Unmounted) != 1 || !rep.LedgerRemoved {
		t.Errorf("sweep after destroy: %+v", rep)
	}
	if l := e.leftovers(); !l.empty() {
		t.Fatalf("after sweep: %+v", l)
	}
	if rep2 := e.sweep(); !rep2.Empty() {
		t.Fatalf("second sweep not empty: %+v", rep2)
	}
}
