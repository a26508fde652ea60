package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"faultwin/fixtures/refsup/api"
	"faultwin/fixtures/refsup/cgroups"
	"faultwin/fixtures/refsup/ledger"
	"faultwin/fixtures/refsup/mounts"
	"faultwin/fixtures/refsup/network"
)

// TestSweepAfterDaemonKill kills the daemon with one cold and two restored
// sessions live, then checks that the sweep reaps exactly the run's
// processes, mounts, links and table, and spares three decoys: a process
// tagged for another run, a tmpfs at a path no ledger records, and a
// prefix-colliding sibling run dir with a process whose cwd is there.
func TestSweepAfterDaemonKill(t *testing.T) {
	e := newEnv(t)
	e.serve()
	cold := e.create()
	src := e.create()
	ck := e.checkpoint(src.Session)
	r1 := e.restore(ck.Checkpoint)
	r2 := e.restore(ck.Checkpoint)

	sibling := filepath.Join(e.root, e.run+"0")
	if err := os.MkdirAll(sibling, 0o755); err != nil {
		t.Fatal(err)
	}
	other := e.decoyProc("/", "--tag", "faultwin:"+e.run+"x")
	sib := e.decoyProc(sibling, "--tag", "faultwin:"+e.run+"0")
	unrecorded := filepath.Join(e.lay.Dir(), "unrecorded")
	e.decoyTmpfs(unrecorded)
	sibMnt := filepath.Join(sibling, "mnt")
	e.decoyTmpfs(sibMnt)

	// the stable processes of the three sessions must all be killed
	want := map[int]string{}
	for _, s := range []api.SessionInfo{cold, r1, r2} {
		var in api.SessionInfo
		e.must(&in, "inspect", "--session", s.Session)
		for _, p := range in.Procs {
			if p.Comm == "sh" || (len(p.Argv) > 1 && p.Argv[1] == "3600") {
				want[p.PID] = s.Session
			}
		}
	}
	if len(want) != 9 {
		t.Fatalf("expected 9 long-lived session processes, found %d", len(want))
	}
	e.killDaemon()
	before := e.leftovers(unrecorded)
	if len(before.Procs) < 9 || len(before.Mounts) != 10 || len(before.Links) != 3 || !before.Table {
		t.Fatalf("before the sweep the run should hold 3 sessions' processes, 10 mounts, 3 links, a table: %+v", before)
	}

	rep := e.sweep()
	decoyPIDs := map[int]bool{other.Process.Pid: true, sib.Process.Pid: true}
	for _, k := range rep.Killed {
		if decoyPIDs[k.PID.PID] {
			t.Errorf("sweep killed decoy %d", k.PID.PID)
		}
		if k.Comm != "sh" && k.Comm != "sleep" {
			t.Errorf("sweep killed %d %s (%s): not a session process", k.PID.PID, k.Comm, k.Why)
		}
		delete(want, k.PID.PID)
	}
	if len(want) != 0 {
		t.Errorf("session processes not reported killed: %v", want)
	}
	if len(rep.Unmounted) != 10 || len(rep.LinksDeleted) != 3 || len(rep.TablesDeleted) != 1 || !rep.LedgerRemoved {
		t.Errorf("report: unmounted %v links %v tables %v ledger removed %v", rep.Unmounted, rep.LinksDeleted, rep.TablesDeleted, rep.LedgerRemoved)
	}
	for _, u := range rep.Unmounted {
		if u == unrecorded || u == sibMnt {
			t.Errorf("decoy mount %s unmounted", u)
		}
	}
	if len(rep.Survivors) != 0 || len(rep.Refused) != 0 || len(rep.Errors) != 0 {
		t.Errorf("survivors %v refused %v errors %v", rep.Survivors, rep.Refused, rep.Errors)
	}
	if l := e.leftovers(unrecorded); !l.empty() {
		t.Errorf("after the sweep: %+v", l)
	}
	for _, d := range e.decoys {
		if !alive(t, d.Process.Pid) {
			t.Errorf("decoy %d died", d.Process.Pid)
		}
	}
	for _, m := range []string{unrecorded, sibMnt} {
		if !mounts.Mounted(m) {
			t.Errorf("decoy mount %s is gone", m)
		}
	}
	if rep2 := e.sweep(); !rep2.Empty() {
		t.Errorf("second sweep not empty: %+v", rep2)
	}
}

// TestSweepRefusesMaliciousLedger writes a ledger naming things outside the
// run and checks that the sweep touches none of them and reports each.
func TestSweepRefusesMaliciousLedger(t *testing.T) {
	e := newEnv(t)
	if err := os.MkdirAll(e.lay.Dir(), 0o755); err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(e.root, "outside")
	e.decoyTmpfs(outside)
	fwd, _ := network.ReadSysctl(network.IPForward)
	// a sibling run's cgroup (r<N>0 shares r<N>'s prefix), which must survive
	h := hierarchies(t)[0]
	sibling := h.SessionDir(e.run+"0", "s1")
	if err := cgroups.Make(h, sibling); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, d := range []string{sibling, h.RunDir(e.run + "0")} {
			if _, err := cgroups.Remove(d, time.Second); err != nil {
				t.Error(err)
			}
		}
		cgroups.RemoveTopIfEmpty(h)
	})
	l := &ledger.Ledger{Version: ledger.Version, Run: e.run, Tag: e.lay.Tag(), StateRoot: e.root, StateDir: e.lay.Dir(),
		Mounts:    []ledger.Mount{{Path: "/"}, {Path: "/proc"}, {Path: outside}, {Path: e.lay.Dir() + "0/x"}},
		Processes: []ledger.Process{{PID: 1, Start: 1}},
		Links:     []ledger.Link{{Name: "lo"}, {Name: "eth0"}},
		Tables:    []ledger.Table{{Family: "ip", Name: "faultwin_" + e.run + "0"}, {Family: "inet", Name: "filter"}},
		X11:       []ledger.X11{{Path: "/etc/hostname"}},
		Sysctls:   []ledger.Sysctl{{Key: "kernel/panic", Prev: "1", Set: "0"}},
		Cgroups: []ledger.Cgroup{{Path: h.Mount}, {Path: h.TopDir()}, {Path: sibling},
			{Path: h.RunDir(e.run) + "/../" + e.run + "0"}},
		CRIUTables: []ledger.CRIUTable{{Invocation: "x", Netns: "/proc/1/ns/net", Log: "/etc/passwd"}},
	}
	if err := ledger.WriteFile(e.lay.Ledger(), l); err != nil {
		t.Fatal(err)
	}
	rep := e.sweep()
	if !rep.Empty() || len(rep.Killed) != 0 {
		t.Errorf("sweep acted on a malicious ledger: %+v", rep)
	}
	if len(rep.Refused) != 16 {
		t.Errorf("%d refusals, want 16: %+v", len(rep.Refused), rep.Refused)
	}
	if !exists(sibling) {
		t.Errorf("the sweep removed the sibling run's cgroup %s", sibling)
	}
	for _, r := range rep.Refused {
		if r.Why == "" {
			t.Errorf("refusal without a reason: %+v", r)
		}
	}
	if !mounts.Mounted(outside) || !mounts.Mounted("/proc") || !network.LinkExists("lo") || !alive(t, 1) {
		t.Error("something the ledger named was touched")
	}
	if cur, _ := network.ReadSysctl(network.IPForward); cur != fwd {
		t.Errorf("ip_forward changed to %s", cur)
	}
	if _, err := os.Stat(e.lay.Ledger()); err != nil {
		t.Errorf("the ledger must be kept for a person to read: %v", err)
	}
}

func TestSweepCorruptLedger(t *testing.T) {
	e := newEnv(t)
	if err := os.MkdirAll(e.lay.Dir(), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(e.lay.Ledger(), []byte(`{"version":1,"run":`), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := e.trySweep()
	if err == nil || !strings.Contains(err.Error(), e.lay.Ledger()) || !strings.Contains(err.Error(), "move the file aside") {
		t.Fatalf("corrupt ledger: %v", err)
	}
	os.Remove(e.lay.Ledger())
}

// TestTimedRestoreKillCRIUFirst is window W4: CRIU's top process and then
// the supervisor are killed 80 ms into a restore. CRIU's forked restorers
// carry no paths in argv; the sweep must still leave nothing. A restore of
// the test's small session takes about 70-90 ms from swrk's start on a
// 2-core host, so 80 ms can land after CRIU returned, with no CRIU left to
// kill first: each such try is swept and checked too, and the window is
// tried again sooner (50, then 30 ms), until CRIU was killed mid-call.
func TestTimedRestoreKillCRIUFirst(t *testing.T) {
	for _, ms := range []int{80, 80, 50, 30} {
		if timedRestoreKillCRIUFirst(t, ms) {
			return
		}
	}
	t.Fatal("CRIU had always returned before the timed kill: the window was never reached")
}

// timedRestoreKillCRIUFirst runs W4 at ms and reports whether CRIU was still
// running to be killed first.
func timedRestoreKillCRIUFirst(t *testing.T, ms int) bool {
	e := newEnv(t)
	e.serve()
	s := e.create()
	ck := e.checkpoint(s.Session)
	e.must(nil, "arm", "--fault", fmt.Sprintf("restore.during_criu+%d!criu", ms))
	if err := e.cli(nil, "restore", "--checkpoint", ck.Checkpoint); err == nil || !strings.Contains(err.Error(), "died") {
		t.Fatalf("restore should have died: %v", err)
	}
	e.waitDaemonDeath()
	f := fired(e.trace())
	if f == nil || f.Point != "restore.during_criu" {
		t.Fatalf("fault did not fire as armed: %+v", e.trace())
	}
	var own struct{ Links []string }
	if err := e.cli(&own, "owned"); err != nil {
		t.Fatal(err)
	}
	for _, l := range own.Links {
		e.links[l] = true
	}
	time.Sleep(100 * time.Millisecond) // let orphaned restorers settle where they are stuck
	rep := e.sweep()
	if l := e.leftovers(); !l.empty() {
		b, _ := json.MarshalIndent(rep, "", " ")
		t.Fatalf("+%d ms: after the sweep: %+v\nreport: %s", ms, l, b)
	}
	if len(rep.Survivors) != 0 {
		t.Errorf("+%d ms: survivors: %+v", ms, rep.Survivors)
	}
	if rep2 := e.sweep(); !rep2.Empty() {
		t.Errorf("+%d ms: second sweep not empty: %+v", ms, rep2)
	}
	if !strings.Contains(f.Note, "killed first") {
		t.Logf("+%d ms: CRIU had returned before the kill (%s)", ms, f.Note)
		return false
	}
	return true
}

// TestSweepKillsNetnsJoiner: a process with no tag of the run that joined
// only a session's network namespace (nsenter --net, from the host's other
// namespaces) keeps that namespace alive after the session is gone; the
// sweep kills it as the run's, since the run made that namespace.
func TestSweepKillsNetnsJoiner(t *testing.T) {
	e := newEnv(t)
	e.serve()
	s := e.create()
	joiner := exec.Command("/usr/bin/nsenter", "--net="+s.Netns, "/bin/sleep", "1014")
	joiner.Env = []string{}
	if err := joiner.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = joiner.Process.Kill(); _, _ = joiner.Process.Wait() })
	done := make(chan error, 1)
	go func() { done <- joiner.Wait() }()
	time.Sleep(200 * time.Millisecond) // nsenter has exec'd sleep
	e.killDaemon()
	rep := e.sweep()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatalf("the sweep left pid %d, which joined session %s's network namespace: %+v", joiner.Process.Pid, s.Session, rep)
	}
	killed := false
	for _, k := range rep.Killed {
		if k.PID.PID == joiner.Process.Pid && strings.Contains(k.Why, "network namespace") {
			killed = true
		}
	}
	if !killed {
		t.Errorf("the sweep's report does not name pid %d killed through the network namespace: %+v", joiner.Process.Pid, rep.Killed)
	}
}
