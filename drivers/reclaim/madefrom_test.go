package reclaim

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"faultwin/internal/hosttest"
	"faultwin/internal/model"
	"faultwin/snapshots"
	"faultwin/snapshots/host"
)

// TestStateMadeFromTheStateDir: a supervisor that keeps a lock per
// workload outside its root, under a path made from the run's state dir
// (declared /run/<tool>/lock{state}/*), leaves it when killed: the judge
// names it the run's by that name, even one the preflight already saw (an
// earlier window of the same run), and the last resort removes it; a lock
// made from another run's state dir is not claimed, not removed.
func TestStateMadeFromTheStateDir(t *testing.T) {
	hosttest.Need(t, "writes under a host-global directory and reads the whole host")
	root := t.TempDir()
	lockDir := filepath.Join(t.TempDir(), "lock")
	roots := snapshots.DefaultRoots(root)
	roots.State = []string{lockDir + "{state}/*"}
	run, other := "rlock1", "rlock2"
	lock := func(r, name string) string {
		p := filepath.Join(lockDir, root, r, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, r := range []string{run, other} {
		if err := os.MkdirAll(filepath.Join(root, r), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	earlier := lock(run, "c0")
	theirs := lock(other, "c1")
	pre, err := host.Capture(context.Background(), "preflight", roots, snapshots.Decoys{})
	if err != nil {
		t.Fatal(err)
	}
	mine := lock(run, "c1")
	after, err := host.Capture(context.Background(), "after_death", roots, snapshots.Decoys{})
	if err != nil {
		t.Fatal(err)
	}
	after, err = Claim(roots, model.NewScope(root, run), pre, after)
	if err != nil {
		t.Fatal(err)
	}
	var claimed []string
	for _, rec := range after.Records {
		for _, c := range rec.Claims {
			claimed = append(claimed, strings.TrimPrefix(c.Key, "state "))
		}
	}
	slices.Sort(claimed)
	if want := []string{earlier, mine}; !slices.Equal(claimed, want) {
		t.Fatalf("claimed %q, want %q", claimed, want)
	}
	// The run's state dirs go as a sweep removes them; the locks stay.
	for _, r := range []string{run, other} {
		if err := os.RemoveAll(filepath.Join(root, r)); err != nil {
			t.Fatal(err)
		}
	}
	r := Names(roots, nil)
	got := slices.Sorted(slices.Values(r.FilesRemoved))
	if len(r.Errors) > 0 || !slices.Equal(got, []string{earlier, mine}) {
		t.Fatalf("last resort removed %q (errors %q), want the run's two locks", r.FilesRemoved, r.Errors)
	}
	if _, err := os.Lstat(theirs); err != nil {
		t.Fatalf("another run's lock was removed: %v", err)
	}
}
