package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/procfs"

	"faultwin/fixtures/refsup/api"
	"faultwin/fixtures/refsup/cgroups"
)

// inSessionCgroups checks that every live process of s sits in s's cgroup
// of every hierarchy, and that s reports those dirs.
func (e *env) inSessionCgroups(s api.SessionInfo) {
	e.t.Helper()
	hs := hierarchies(e.t)
	var want []string
	for _, h := range hs {
		want = append(want, h.SessionDir(e.run, s.Session))
	}
	if !slices.Equal(s.Cgroups, want) {
		e.t.Errorf("session %s reports cgroups %v, want %v", s.Session, s.Cgroups, want)
	}
	path := cgroups.RunPath(e.run) + "/" + s.Session
	checked := 0
	for _, p := range s.Procs {
		ms, err := cgroups.Of(p.PID)
		if err != nil || exiting(p.PID) {
			// A short-lived sleep of the counter loop, gone or exiting
			// since: on cgroup v1 an exiting task reads as the root
			// cgroup's, whatever cgroup it lived in.
			continue
		}
		checked++
		for _, h := range hs {
			if got := cgroups.In(ms, h); got != path {
				e.t.Errorf("session %s: pid %d (%s) is in %s cgroup %q, want %q", s.Session, p.PID, p.Comm, h, got, path)
			}
		}
	}
	if checked < 3 {
		e.t.Errorf("session %s: only %d processes checked: %+v", s.Session, checked, s.Procs)
	}
}

// exiting reports whether pid is gone or has begun to exit. The kernel never
// clears PF_EXITING, so reading it after /proc/<pid>/cgroup tells whether
// that read may have seen an exiting task.
func exiting(pid int) bool {
	const pfExiting = 0x4
	pr, err := procfs.NewProc(pid)
	if err != nil {
		return true
	}
	st, err := pr.Stat()
	return err != nil || st.Flags&pfExiting != 0 || st.State == "Z" || st.State == "X"
}

func exists(p string) bool { _, err := os.Stat(p); return err == nil }

func TestCgroupPerSession(t *testing.T) {
	e := newEnv(t)
	e.serve()
	hs := hierarchies(t)
	if len(hs) == 0 {
		t.Fatal("no cgroup hierarchy found")
	}
	s1 := e.create()
	s2 := e.create()
	e.inSessionCgroups(s1)
	e.inSessionCgroups(s2)
	var own struct{ Cgroups []string }
	e.must(&own, "owned")
	for _, h := range hs {
		for _, d := range []string{h.RunDir(e.run), h.SessionDir(e.run, s1.Session), h.SessionDir(e.run, s2.Session)} {
			if !slices.Contains(own.Cgroups, d) {
				t.Errorf("owned does not list %s: %v", d, own.Cgroups)
			}
			if !exists(d) {
				t.Errorf("%s missing", d)
			}
		}
	}
	e.must(nil, "destroy", "--session", s1.Session)
	for _, h := range hs {
		if exists(h.SessionDir(e.run, s1.Session)) {
			t.Errorf("destroy left %s", h.SessionDir(e.run, s1.Session))
		}
		if !exists(h.SessionDir(e.run, s2.Session)) {
			t.Errorf("destroying %s removed %s's cgroup", s1.Session, s2.Session)
		}
	}
	e.must(nil, "destroy", "--session", s2.Session)
	for _, h := range hs {
		if exists(h.RunDir(e.run)) {
			t.Errorf("destroying the last session left the run's cgroup %s", h.RunDir(e.run))
		}
	}
	e.must(&own, "owned")
	if len(own.Cgroups) != 0 {
		t.Errorf("owned still lists %v", own.Cgroups)
	}
	left := e.leftovers()
	left.Ledger = false // the daemon lives
	if !left.empty() {
		t.Errorf("after destroying every session: %+v", left)
	}
}

// TestCgroupSweepAfterKill kills the daemon and checks the sweep removes the
// session's and the run's cgroups, and owns a process that nothing but its
// cgroup ties to the run.
func TestCgroupSweepAfterKill(t *testing.T) {
	e := newEnv(t)
	e.serve()
	s := e.create()
	hs := hierarchies(t)
	stray := exec.Command("/bin/sleep", "1000")
	stray.Dir, stray.Env = "/", []string{"PATH=/usr/bin:/bin"}
	if err := stray.Start(); err != nil {
		t.Fatal(err)
	}
	reaped := make(chan struct{})
	go func() { _ = stray.Wait(); close(reaped) }()
	t.Cleanup(func() { _ = stray.Process.Kill(); <-reaped })
	for _, h := range hs {
		if err := cgroups.Join(h.SessionDir(e.run, s.Session), stray.Process.Pid); err != nil {
			t.Fatal(err)
		}
	}
	e.killDaemon()
	rep := e.sweep()
	why := ""
	for _, k := range rep.Killed {
		if k.PID.PID == stray.Process.Pid {
			why = k.Why
		}
	}
	if !strings.HasPrefix(why, "in run cgroup") {
		t.Errorf("the stray in the session's cgroup was not killed for its cgroup: %q (killed %+v)", why, rep.Killed)
	}
	for _, h := range hs {
		for _, d := range []string{h.SessionDir(e.run, s.Session), h.RunDir(e.run)} {
			if !slices.Contains(rep.CgroupsRemoved, d) {
				t.Errorf("report does not name %s as removed: %v", d, rep.CgroupsRemoved)
			}
			if exists(d) {
				t.Errorf("sweep left %s", d)
			}
		}
	}
	if l := e.leftovers(); !l.empty() {
		t.Errorf("after the sweep: %+v", l)
	}
	if rep2 := e.sweep(); !rep2.Empty() {
		t.Errorf("second sweep not empty: %+v", rep2)
	}
}

// TestCgroupRestore restores a checkpoint of a session that was in its own
// cgroups: each clone's tree must be in the clone's cgroups, CRIU must not
// make the dumped session's cgroups again, and its log must show no cgroup
// error.
func TestCgroupRestore(t *testing.T) {
	e := newEnv(t)
	e.serve()
	s := e.create()
	e.inSessionCgroups(s)
	ck := e.checkpoint(s.Session)
	hs := hierarchies(t)
	for _, h := range hs {
		if exists(h.SessionDir(e.run, s.Session)) {
			t.Errorf("checkpoint left the consumed session's cgroup %s", h.SessionDir(e.run, s.Session))
		}
	}
	r1 := e.restore(ck.Checkpoint)
	r2 := e.restore(ck.Checkpoint)
	for _, r := range []api.SessionInfo{r1, r2} {
		var in api.SessionInfo
		e.must(&in, "inspect", "--session", r.Session)
		e.inSessionCgroups(in)
		b, err := os.ReadFile(filepath.Join(e.lay.Logs(), "criu-restore-"+ck.Checkpoint+"-"+r.Session+".log"))
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(b), "\n") {
			if strings.Contains(line, "cgyard") || (strings.Contains(line, "Error") && strings.Contains(line, "cg")) {
				t.Errorf("restore of %s: CRIU handled cgroups: %s", r.Session, line)
			}
		}
	}
	for _, h := range hs {
		if exists(h.SessionDir(e.run, s.Session)) {
			t.Errorf("restore made the dumped session's cgroup %s again", h.SessionDir(e.run, s.Session))
		}
	}
	e.must(nil, "destroy", "--session", r1.Session)
	for _, h := range hs {
		if exists(h.SessionDir(e.run, r1.Session)) {
			t.Errorf("destroy left %s", h.SessionDir(e.run, r1.Session))
		}
	}
	e.killDaemon()
	rep := e.sweep()
	if l := e.leftovers(); !l.empty() {
		t.Fatalf("after the sweep: %+v (report %+v)", l, rep)
	}
}
