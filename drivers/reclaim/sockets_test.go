package reclaim

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"faultwin/internal/hosttest"
	"faultwin/snapshots"
)

// TestStaleSockets: a socket a killed server left under a name a driver
// claims (containerd's shims under /run/containerd/s) is a leftover to the
// judge and is removed by the last resort; a socket a process still
// listens on is neither.
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
	live := listen("live")
	defer live.Close()
	listen("stale").Close()
	stale, alive := filepath.Join(dir, "stale"), filepath.Join(dir, "live")
	want := "socket " + stale + ": no process listens on it (a killed server's), declared by the driver"

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
	if _, err := os.Lstat(alive); err != nil {
		t.Fatalf("the listened-on socket was removed: %v", err)
	}
	if j, err = Judge(context.Background(), "test", roots); err != nil || !j.Clean() {
		t.Fatalf("after the last resort: %q %v", j.Left, err)
	}
}
