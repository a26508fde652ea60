package hostview

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// Identities reads through two races with the host: a workload whose
// payload appears only after its first read, and one whose processes were
// exiting at the first read and are gone during the wait. The counter
// starts moving once the first reads are in (during), as a payload writes.
func TestIdentitiesReadThroughStartAndExit(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "counter")
	write := func(n int) error {
		if err := os.WriteFile(file+".new", []byte(fmt.Sprintf("%d m1 boot1\n", n)), 0o644); err != nil {
			return err
		}
		return os.Rename(file+".new", file)
	}
	if err := write(1); err != nil {
		t.Fatal(err)
	}
	stop, stopped := make(chan struct{}), make(chan struct{})
	count := func() {
		defer close(stopped)
		for n := 2; ; n++ {
			if write(n) != nil {
				return
			}
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}
	t.Cleanup(func() { close(stop); <-stopped })
	var mu sync.Mutex
	reads := map[string]int{}
	me := os.Getpid()    // a live process, neither stopped nor frozen
	const gone = 1 << 30 // above any pid_max: a process no longer there
	loc := func(name string) Locate {
		return func() (string, []int, error) {
			mu.Lock()
			defer mu.Unlock()
			reads[name]++
			switch {
			case name == "never",
				name == "late" && reads[name] == 1,
				name == "exiting" && reads[name] > 1:
				return "", nil, fmt.Errorf("%w of %s on the host", ErrNoProcess, name)
			case name == "exiting":
				return file, []int{gone}, nil
			}
			return file, []int{me}, nil
		}
	}
	// With an hour's bound, it returns only because each wait ends on
	// its evidence: late's counter moves, exiting is gone, never is not
	// there once Gap has passed.
	ws := identities([]string{"late", "exiting", "never"}, loc, func() { go count() }, time.Hour)
	late, exiting, never := ws[0], ws[1], ws[2]
	if !late.Running() || late.Err != "" || late.Progress == nil {
		t.Errorf("a workload that started after its first read: %+v, want it read as running", late)
	}
	if exiting.Running() || len(exiting.PIDs) != 0 || !strings.Contains(exiting.Err, fmt.Sprintf("the first read's pids [%d] were exiting", gone)) {
		t.Errorf("a workload gone during the wait: %+v, want no pids and the first read's in Err", exiting)
	}
	if never.Running() || !strings.Contains(never.Err, "no live process of never") || never.Progress != nil {
		t.Errorf("a workload never there: %+v, want its first read's error and no wait", never)
	}
}

// The wait for a workload's progress ends the moment its counter moves: a
// counter written once, after the first read, ends a wait bounded at an
// hour, at that value.
func TestProgressEndsWhenTheCounterMoves(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "counter")
	if err := os.WriteFile(file, []byte("7 m1 boot1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	me := os.Getpid()
	loc := func() (string, []int, error) { return file, []int{me}, nil }
	moved := make(chan struct{})
	go func() {
		<-moved
		time.Sleep(50 * time.Millisecond) // some polls see it still
		_ = os.WriteFile(file+".new", []byte("8 m1 boot1\n"), 0o644)
		_ = os.Rename(file+".new", file)
	}()
	w := identities([]string{"w1"}, func(string) Locate { return loc }, func() { close(moved) }, time.Hour)[0]
	if !w.Running() || w.Counter != 7 || w.Counter2 != 8 || w.Progress == nil {
		t.Fatalf("%+v, want counter 7 then 8 with its wait recorded", w)
	}
	p := w.Progress
	if p.BoundMS != int(time.Hour.Milliseconds()) || p.Polls < 2 || p.Load == "" || p.Runnable < 1 || p.QueuedMS == nil ||
		len(p.Stopped)+len(p.Frozen) > 0 || w.Starved() != "" {
		t.Errorf("the wait recorded %+v (%s)", *p, p.Text())
	}
}
