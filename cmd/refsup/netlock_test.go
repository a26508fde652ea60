package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"

	gocriu "github.com/checkpoint-restore/go-criu/v7"
	"github.com/checkpoint-restore/go-criu/v7/rpc"
	"github.com/vishvananda/netns"
	"google.golang.org/protobuf/proto"

	"faultwin/fixtures/refsup/api"
	"faultwin/fixtures/refsup/criu"
	"faultwin/fixtures/refsup/network"
)

// What CRIU 4.2.1 does with its network lock in nftables mode, measured on
// refsup's sessions (each in a netns of its own, external to CRIU): a dump
// makes table "inet CRIU-<run id, cut to 21 characters>" inside the
// session's netns (never the host's), after collecting the tree and before
// dumping it. A dump that fails, the daemon's death at a notification
// included, deletes it; a successful dump leaves it (the network stays
// locked for the restore), and so does a CRIU that is SIGKILLed mid-call. A
// restore makes none here (it locks only with --empty-ns net) and only
// tries to delete the dump's table in the new netns.

// ownedLocks is the run's recorded CRIU network locks (refsup owned).
func (e *env) ownedLocks() []api.OwnedCRIUTable {
	e.t.Helper()
	var own api.Owned
	e.must(&own, "owned")
	return own.CRIUTables
}

// holdNetns returns a path to the session's netns that works after the
// bind under the state dir is gone: a descriptor of the namespace itself,
// which keeps the netns (and any table in it) alive after the sweep unmounts
// it, so what the sweep did to the table stays visible. It is opened through
// a thread that entered the netns, not through the bind, so it does not keep
// the bind mount busy. Cleanup deletes any CRIU table left there.
func (e *env) holdNetns(sid string) string {
	e.t.Helper()
	got := make(chan *os.File, 1)
	errc := make(chan error, 1)
	go func() {
		// never unlocked: the thread leaves the host netns, so it must end
		// with this goroutine
		runtime.LockOSThread()
		h, err := netns.GetFromPath(e.lay.Netns(sid))
		if err == nil {
			err = netns.Set(h)
			h.Close()
		}
		var f *os.File
		if err == nil {
			f, err = os.Open("/proc/thread-self/ns/net")
		}
		if err != nil {
			errc <- err
			return
		}
		got <- f
	}()
	var f *os.File
	select {
	case err := <-errc:
		e.t.Fatal(err)
	case f = <-got:
	}
	p := fmt.Sprintf("/proc/%d/fd/%d", os.Getpid(), f.Fd())
	e.t.Cleanup(func() {
		names, _ := network.CRIUTables(p)
		for _, n := range names {
			_, _ = network.DeleteCRIUTable(p, n)
		}
		f.Close()
	})
	return p
}

func testCRIULockLeft(t *testing.T, point string, bug bool) {
	e := newEnv(t)
	e.serve("--network-lock", "nftables")
	s := e.create()
	e.must(nil, "arm", "--fault", point)
	if err := e.cli(nil, "checkpoint", "--session", s.Session); err == nil || !strings.Contains(err.Error(), "died") {
		t.Fatalf("checkpoint should have died at %s: %v", point, err)
	}
	e.waitDaemonDeath()
	ns := e.holdNetns(s.Session)
	locks := e.ownedLocks()
	if len(locks) != 1 || locks[0].Netns != e.lay.Netns(s.Session) || len(locks[0].RunIDs) == 0 {
		t.Fatalf("recorded CRIU network locks: %+v", locks)
	}
	names, err := network.CRIUTables(ns)
	if err != nil {
		t.Fatal(err)
	}
	if len(names) != 1 || !network.CRIUTableOf(names[0], locks[0].RunIDs) {
		t.Fatalf("CRIU tables in the session's netns: %v, want one of run ids %v", names, locks[0].RunIDs)
	}
	if host, _ := network.CRIUTables(""); len(host) != 0 {
		t.Errorf("CRIU tables in the host netns: %v", host)
	}
	var envv []string
	if bug {
		envv = append(envv, "REFSUP_BUGS=leave-criu-table")
	}
	rep := e.sweep(envv...)
	after, err := network.CRIUTables(ns)
	if err != nil {
		t.Fatal(err)
	}
	reported := slices.Contains(rep.TablesDeleted, "inet "+names[0])
	if bug {
		if len(after) != 1 || reported {
			t.Errorf("with leave-criu-table the table should stay: left %v, report %v", after, rep.TablesDeleted)
		}
	} else if len(after) != 0 || !reported {
		t.Errorf("the sweep should delete %s and say so: left %v, report %v", names[0], after, rep.TablesDeleted)
	}
	if l := e.leftovers(); !l.empty() || len(rep.Errors) != 0 {
		t.Errorf("after the sweep: %+v (report %+v)", l, rep)
	}
	if rep2 := e.sweep(); !rep2.Empty() {
		t.Errorf("second sweep not empty: %+v", rep2)
	}
}

// The dump succeeded and the daemon died before tearing the session down:
// CRIU's lock is still on the session's netns.
func TestCRIULockAfterDump(t *testing.T)          { testCRIULockLeft(t, "checkpoint.after_dump", false) }
func TestBugLeaveCRIUTableAfterDump(t *testing.T) { testCRIULockLeft(t, "checkpoint.after_dump", true) }

// CRIU is SIGKILLed at its post-dump notification, then the daemon: nothing
// unlocks the network.
func TestCRIULockCRIUKilled(t *testing.T) {
	testCRIULockLeft(t, "checkpoint.criu_post_dump!criu", false)
}
func TestBugLeaveCRIUTableCRIUKilled(t *testing.T) {
	testCRIULockLeft(t, "checkpoint.criu_post_dump!criu", true)
}

// TestCRIULockLifecycle checkpoints and restores with the nftables lock and
// no fault: the restore works, the daemon deletes the lock the dump left
// when it tears the dumped session down, and no record or table is left.
func TestCRIULockLifecycle(t *testing.T) {
	e := newEnv(t)
	e.serve("--network-lock", "nftables")
	s := e.create()
	ck := e.checkpoint(s.Session)
	if locks := e.ownedLocks(); len(locks) != 0 {
		t.Errorf("after the checkpoint: recorded locks %+v", locks)
	}
	b, err := os.ReadFile(filepath.Join(e.lay.Logs(), "criu-dump-"+ck.Checkpoint+"-"+s.Session+".log"))
	if err != nil || !strings.Contains(string(b), "Lock network") {
		t.Errorf("the dump did not lock the network (err %v)", err)
	}
	r := e.restore(ck.Checkpoint)
	if locks := e.ownedLocks(); len(locks) != 0 {
		t.Errorf("after the restore: recorded locks %+v", locks)
	}
	if names, _ := network.CRIUTables(e.lay.Netns(r.Session)); len(names) != 0 {
		t.Errorf("CRIU tables in the clone's netns: %v", names)
	}
	if names, _ := network.CRIUTables(""); len(names) != 0 {
		t.Errorf("CRIU tables in the host netns: %v", names)
	}
	e.killDaemon()
	rep := e.sweep()
	if l := e.leftovers(); !l.empty() {
		t.Fatalf("after the sweep: %+v (report %+v)", l, rep)
	}
}

// TestSweepCRIUTablesOnlyTheRuns plants two tables in the host netns: one
// named for a run id of the run's recorded CRIU call (as CRIU names its
// lock), one for a run id the run never had. The sweep deletes the first
// and never touches the second.
func TestSweepCRIUTablesOnlyTheRuns(t *testing.T) {
	e := newEnv(t)
	e.serve("--network-lock", "nftables")
	s := e.create()
	e.must(nil, "arm", "--fault", "checkpoint.after_dump")
	_ = e.cli(nil, "checkpoint", "--session", s.Session)
	e.waitDaemonDeath()
	locks := e.ownedLocks()
	if len(locks) != 1 || len(locks[0].RunIDs) < 2 {
		t.Fatalf("recorded CRIU network locks: %+v", locks)
	}
	mine := network.CRIUTableName(locks[0].RunIDs[0])
	other := network.CRIUTableName("0badc0de-" + randID(2) + "-4000-8000-000000000000")
	for _, n := range []string{mine, other} {
		if err := network.AddEmptyInetTable("", n); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _, _ = network.DeleteCRIUTable("", n) })
	}
	rep := e.sweep()
	host, err := network.CRIUTables("")
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(host, mine) || !slices.Contains(rep.TablesDeleted, "inet "+mine) {
		t.Errorf("the run's table %s: host has %v, report %v", mine, host, rep.TablesDeleted)
	}
	if !slices.Contains(host, other) || slices.Contains(rep.TablesDeleted, "inet "+other) {
		t.Errorf("a table of no call of the run was touched: host has %v, report %v", host, rep.TablesDeleted)
	}
	if l := e.leftovers(); !l.empty() {
		t.Errorf("after the sweep: %+v", l)
	}
}

// TestCRIUIgnoresDefaultConfig plants /etc/criu/default.conf with an action
// script that records each action and fails it. A CRIU swrk started the way
// go-criu starts it applies the file (the control); refsup's checkpoint and
// restore must not.
func TestCRIUIgnoresDefaultConfig(t *testing.T) {
	needHost(t)
	const dir, conf = "/etc/criu", "/etc/criu/default.conf"
	prev, prevErr := os.ReadFile(conf)
	_, dirErr := os.Stat(dir)
	tmp := t.TempDir()
	marker := filepath.Join(tmp, "applied")
	script := filepath.Join(tmp, "harm.sh")
	if err := os.WriteFile(script, []byte("#!/bin/sh\necho \"$CRTOOLS_SCRIPT_ACTION\" >> "+marker+"\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if prevErr == nil {
			_ = os.WriteFile(conf, prev, 0o644)
			return
		}
		os.Remove(conf)
		if dirErr != nil {
			os.Remove(dir)
		}
	})
	if err := os.WriteFile(conf, []byte("action-script "+script+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	// control: plain go-criu dumping a sleep, with the planted file
	sleep := exec.Command("/bin/sleep", "100")
	sleep.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := sleep.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = sleep.Process.Kill(); _ = sleep.Wait() }()
	imgs, err := os.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer imgs.Close()
	cr := gocriu.MakeCriu()
	cr.SetCriuPath(criu.DefaultPath)
	err = cr.Dump(&rpc.CriuOpts{Pid: proto.Int32(int32(sleep.Process.Pid)), ImagesDirFd: proto.Int32(int32(imgs.Fd())),
		LogFile: proto.String("dump.log"), LogLevel: proto.Int32(4), LeaveRunning: proto.Bool(true)}, nil)
	got, _ := os.ReadFile(marker)
	if err == nil || !strings.Contains(string(got), "pre-dump") {
		t.Fatalf("control: the planted %s should make a plain swrk dump fail in its pre-dump script: err %v, actions %q", conf, err, got)
	}
	os.Remove(marker)

	e := newEnv(t)
	e.serve()
	s := e.create()
	ck := e.checkpoint(s.Session)
	r := e.restore(ck.Checkpoint)
	if got, err := os.ReadFile(marker); err == nil {
		t.Errorf("refsup's CRIU calls ran the planted action script: %q", got)
	}
	if r.Marker != s.Marker {
		t.Errorf("restored marker %q, want %q", r.Marker, s.Marker)
	}
}
