package main

import (
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"faultwin/fixtures/refsup/proc"
)

// TestSwrkDeathWithDaemonAlive kills only CRIU's swrk process mid-restore.
// go-criu's Restore() would then block for ever while CRIU's forks hold the
// socket; the watchdog must notice, kill the forks, fail the restore and
// leave the daemon serving.
func TestSwrkDeathWithDaemonAlive(t *testing.T) {
	e := newEnv(t)
	e.serve()
	s := e.create()
	ck := e.checkpoint(s.Session)
	// poll for swrk and kill it shortly after it starts, mid-restore
	done := make(chan error, 1)
	go func() { done <- e.cli(nil, "restore", "--checkpoint", ck.Checkpoint) }()
	fs, _ := proc.Host()
	killed := 0
	deadline := time.Now().Add(5 * time.Second)
	for killed == 0 && time.Now().Before(deadline) {
		for _, c := range proc.Children(e.daemon.Process.Pid) {
			in, err := fs.Read(c)
			// `refsup swrk <fd>`, or the criu it execs: `criu --no-default-config swrk <fd>`
			if err == nil && slices.Contains(in.Argv, "swrk") {
				time.Sleep(60 * time.Millisecond)
				_ = syscall.Kill(c, syscall.SIGKILL)
				killed = c
			}
		}
		time.Sleep(2 * time.Millisecond)
	}
	if killed == 0 {
		t.Fatal("never saw the swrk process")
	}
	select {
	case err := <-done:
		if err == nil {
			t.Skip("the restore finished before swrk was killed; nothing to check")
		}
		if strings.Contains(err.Error(), "daemon closed the connection") {
			t.Fatalf("the daemon died: %v", err)
		}
	case <-time.After(40 * time.Second):
		t.Fatal("restore still blocked 40s after swrk was killed: no watchdog")
	}
	var list struct{ Sessions []any }
	e.must(&list, "list")
	if len(list.Sessions) != 0 {
		t.Errorf("failed restore left sessions: %+v", list.Sessions)
	}
	left := e.leftovers(e.lay.Layer(ck.Checkpoint))
	if len(left.Procs) != 0 || len(left.Links) != 0 {
		t.Errorf("failed restore left %+v", left)
	}
}
