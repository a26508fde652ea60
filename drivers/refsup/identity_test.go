package refsup

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"faultwin/internal/hosttest"
	"faultwin/internal/model"
)

// TestIdentityWaitsForAStalledSession stops a live session's processes
// for longer than the 300 ms its two reads were once apart, as a host
// whose cores are all busy can: the session is not stuck, and its identity
// must say it runs once it gets the CPU again, and say how long that took.
func TestIdentityWaitsForAStalledSession(t *testing.T) {
	hosttest.Need(t, "a real refsup session: namespaces, mounts, a veth, CRIU")
	dir := t.TempDir()
	bin := filepath.Join(dir, "refsup")
	if out, err := exec.Command("go", "build", "-o", bin, "../../cmd/refsup").CombinedOutput(); err != nil {
		t.Fatalf("building refsup: %v\n%s", err, out)
	}
	root := filepath.Join(dir, "state")
	if err := os.MkdirAll(root, 0o755); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	d := New(bin, root, filepath.Join(dir, "logs"), nil)
	t.Cleanup(func() {
		_ = d.Stop()
		if rep, err := d.Sweep(context.Background()); err != nil || len(rep.Survivors) > 0 {
			t.Errorf("sweep after the test: %v, survivors %v", err, rep.Survivors)
		}
		_ = d.Close()
	})
	if _, err := d.Prepare(ctx, "tid"+time.Now().Format("150405"), model.Precondition{Cold: 1}); err != nil {
		t.Fatal(err)
	}
	session := d.sessions[0]
	info, err := d.inspect(session, 10*time.Second)
	if err != nil || len(info.Procs) == 0 {
		t.Fatalf("inspect %s: %v (%d processes)", session, err, len(info.Procs))
	}
	signal := func(sig syscall.Signal) {
		for _, p := range info.Procs {
			_ = syscall.Kill(p.PID, sig)
		}
	}
	signal(syscall.SIGSTOP)
	defer signal(syscall.SIGCONT)
	const stalled = 700 * time.Millisecond
	go func() { time.Sleep(stalled); signal(syscall.SIGCONT) }()
	id := d.Identity(ctx, session)
	if id.Err != "" || !id.InitAlive {
		t.Fatalf("identity: %+v", id)
	}
	if id.Counter2 == id.Counter {
		t.Fatalf("a session stalled for %v read as not running: counter %d then %d after %.0f ms", stalled, id.Counter, id.Counter2, id.WaitedMS)
	}
	if id.WaitedMS < float64(stalled.Milliseconds())/2 || id.WaitedMS > 2500 {
		t.Fatalf("waited %.0f ms for a session stalled %v", id.WaitedMS, stalled)
	}
	// Running freely, the counter moves within a step of the payload.
	id = d.Identity(ctx, session)
	if id.Counter2 == id.Counter || id.WaitedMS > 500 {
		t.Fatalf("a running session: counter %d then %d after %.0f ms", id.Counter, id.Counter2, id.WaitedMS)
	}
}
