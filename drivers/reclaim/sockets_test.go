package reclaim

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"faultwin/internal/hosttest"
	"faultwin/internal/model"
	"faultwin/snapshots"
	"faultwin/snapshots/host"
)

// TestStaleSockets: a socket a killed server of the run left under a name a
// driver watches (containerd's shims under /run/containerd/s) is a
// leftover to the judge and is removed by the last resort; a socket a
// process still listens on is neither, and neither is a stale socket that
// was there before the run (another daemon's, not faultwin's).
func TestStaleSockets(t *testing.T) {
	hosttest.Need(t, "binds unix sockets and reads the whole host")
	root := t.TempDir()
	dir := filepath.Join(t.TempDir(), "s")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	roots := snapshots.DefaultRoots(root)
	roots.Sockets = []string{filepath.Join(dir, "*")}
	listen := func(name string) *net.UnixListener {
		l, err := net.ListenUnix("unix", &net.UnixAddr{Name: filepath.Join(dir, name), Net: "unix"})
		if err != nil {
			t.Fatal(err)
		}
		l.SetUnlinkOnClose(false) // as a SIGKILLed server leaves it
		return l
	}
	listen("users").Close()
	pre, err := host.Capture(context.Background(), "preflight", roots, snapshots.Decoys{})
	if err != nil {
		t.Fatal(err)
	}
	live := listen("live")
	defer live.Close()
	neighbour := listen("neighbour")
	listen("stale").Close()
	stale, alive, users := filepath.Join(dir, "stale"), filepath.Join(dir, "live"), filepath.Join(dir, "users")
	after, err := host.Capture(context.Background(), "after_death", roots, snapshots.Decoys{})
	if err != nil {
		t.Fatal(err)
	}
	// The listeners are this test, no process of the run: their sockets
	// are not claimed; the stale one is. A neighbour's server that exits
	// later in the window leaves its socket stale: a later capture of the
	// same window must not claim it either, though nobody holds it then.
	c := &Claimer{Roots: roots, Scope: model.NewScope(root, "rsock1"), Pre: pre}
	if _, err := c.Claim(after); err != nil {
		t.Fatal(err)
	}
	neighbour.Close()
	after2, err := host.Capture(context.Background(), "after_sweep", roots, snapshots.Decoys{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Claim(after2); err != nil {
		t.Fatal(err)
	}
	want := "socket " + stale + ": no process listens on it (a killed server's), claimed by run rsock1 (made during the run; no process but the run's holds it)"

	j, err := Judge(context.Background(), "test", roots)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(j.Left, []string{want}) {
		t.Fatalf("judge: %q, want only %q", j.Left, want)
	}
	r := Names(roots, nil)
	if len(r.Errors) > 0 || !slices.Equal(r.FilesRemoved, []string{stale}) {
		t.Fatalf("last resort removed %q (errors %q), want only %s", r.FilesRemoved, r.Errors, stale)
	}
	for _, p := range []string{alive, users, filepath.Join(dir, "neighbour")} {
		if _, err := os.Lstat(p); err != nil {
			t.Fatalf("a socket not the run's was removed: %v", err)
		}
	}
	if j, err = Judge(context.Background(), "test", roots); err != nil || !j.Clean() {
		t.Fatalf("after the last resort: %q %v", j.Left, err)
	}
}
