package main

import (
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"faultwin/fixtures/refsup/api"
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
	// The kill must land while the restore still runs. A restore that
	// finished first is a lost race, not a pass: checkpoint the restored
	// session again and kill sooner, and fail if no attempt landed.
	var ck api.CheckpointInfo
	var err error
	for attempt, wait := range []time.Duration{60, 30, 10, 0} {
		ck = e.checkpoint(s.Session)
		var restored api.SessionInfo
		err = swrkKilledMidRestore(t, e, ck.Checkpoint, wait*time.Millisecond, &restored)
		if err != nil {
			break
		}
		t.Logf("attempt %d: the restore finished before swrk was killed %s after it started; again, sooner", attempt+1, wait*time.Millisecond)
		s = restored
	}
	if err == nil {
		t.Fatal("every restore finished before its swrk was killed: the watchdog was never exercised")
	}
	if strings.Contains(err.Error(), "daemon closed the connection") {
		t.Fatalf("the daemon died: %v", err)
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

// swrkKilledMidRestore restores checkpoint, kills CRIU's swrk process wait
// after it appears, and returns the restore's error (nil: it finished
// first, and restored is the session it made).
func swrkKilledMidRestore(t *testing.T, e *env, checkpoint string, wait time.Duration, restored *api.SessionInfo) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- e.cli(restored, "restore", "--checkpoint", checkpoint) }()
	fs, _ := proc.Host()
	killed := 0
	deadline := time.Now().Add(5 * time.Second)
	for killed == 0 && time.Now().Before(deadline) {
		for _, c := range proc.Children(e.daemon.Process.Pid) {
			in, err := fs.Read(c)
			// `refsup swrk <fd>`, or the criu it execs: `criu --no-default-config swrk <fd>`
			if err == nil && slices.Contains(in.Argv, "swrk") {
				time.Sleep(wait)
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
		return err
	case <-time.After(40 * time.Second):
		t.Fatal("restore still blocked 40s after swrk was killed: no watchdog")
		return nil
	}
}
