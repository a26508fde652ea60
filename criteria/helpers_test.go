package criteria_test

import (
	"testing"

	"faultwin/criteria"
	"faultwin/snapshots"
)

// passing is the recorded W4_30 row of a run whose sweep was correct; edge
// cases start from it and change one thing.
func passing(t *testing.T) criteria.Input {
	t.Helper()
	return load(t, "w4_30_pass")
}

// result evaluates in and returns the result with the given id.
func result(t *testing.T, in criteria.Input, id string) criteria.Result {
	t.Helper()
	r, ok := criteria.Evaluate(in).Result(id)
	if !ok {
		t.Fatalf("no result %s", id)
	}
	return r
}

// afterBoth applies f to both after-sweep snapshots.
func afterBoth(in *criteria.Input, f func(s *snapshots.Snapshot)) {
	f(&in.AfterSweep)
	f(&in.AfterSweep2)
}

func live(pid int, start uint64, comm string, argv ...string) snapshots.Process {
	return snapshots.Process{PID: pid, StartTime: start, PPID: 1, State: "S", Comm: comm, Argv: argv, Cwd: "/", Root: "/"}
}
