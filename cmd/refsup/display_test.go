package main

import (
	"os"
	"os/exec"
	"testing"

	"faultwin/fixtures/refsup/api"
)

// TestDisplaySession makes a session with Xvfb and openbox, checkpoints and
// restores it, and checks the marker kept in the X server's memory (a
// root-window property) came back, then that the sweep removes the run's
// X11 socket links.
func TestDisplaySession(t *testing.T) {
	needHost(t)
	if _, err := exec.LookPath("Xvfb"); err != nil {
		t.Fatal("needs Xvfb: make deps installs it (xvfb)")
	}
	e := newEnv(t)
	e.serve()
	var s api.SessionInfo
	e.must(&s, "create", "--display")
	e.links[s.Veth] = true
	if s.X11 == "" || s.X11Marker != s.Marker {
		t.Fatalf("display session: x11 %q marker %q want %q", s.X11, s.X11Marker, s.Marker)
	}
	ck := e.checkpoint(s.Session)
	if _, err := os.Lstat(s.X11); !os.IsNotExist(err) {
		t.Errorf("checkpoint left the X11 link %s", s.X11)
	}
	r1 := e.restore(ck.Checkpoint)
	r2 := e.restore(ck.Checkpoint)
	for _, r := range []api.SessionInfo{r1, r2} {
		if r.X11Marker != s.Marker || r.Display != s.Display || r.X11 == "" {
			t.Errorf("restored %s: display %d x11 %q marker %q, want display %d marker %q",
				r.Session, r.Display, r.X11, r.X11Marker, s.Display, s.Marker)
		}
	}
	if r1.X11 == r2.X11 {
		t.Errorf("two clones share the host link %s", r1.X11)
	}
	e.killDaemon()
	rep := e.sweep()
	for _, r := range []api.SessionInfo{r1, r2} {
		if _, err := os.Lstat(r.X11); !os.IsNotExist(err) {
			t.Errorf("sweep left %s", r.X11)
		}
	}
	if l := e.leftovers(); !l.empty() {
		t.Fatalf("after the sweep: %+v (report %+v)", l, rep)
	}
	if rep2 := e.sweep(); !rep2.Empty() {
		t.Errorf("second sweep not empty: %+v", rep2)
	}
}
