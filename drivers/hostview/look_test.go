package hostview

import (
	"context"
	"errors"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"faultwin/internal/hosttest"
	"faultwin/internal/model"
)

// The one look loop, on a fake /proc: a list that does not parse, or has
// a line no workload matches, is a look that cannot be trusted
// (ParseErr); a failed list call ends the looks; a workload the list adds
// is read on the host too; a look whose host did not change is not
// repeated, and one whose host changed under the call is, up to LookTries.
func TestLook(t *testing.T) {
	useFakeHost(t)
	ps, err := Procs()
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(ps, func(p Proc) bool { return !p.Zombie() })
	if i < 0 {
		t.Fatal("no live process in testdata/proc")
	}
	live := ps[i].PID
	for _, c := range []struct {
		name      string
		exit      int
		changing  bool // w1's process is there only after an odd number of calls
		parse     func(t *testing.T) func(string) ([]model.Reported, []string, error)
		looks     int
		parseErr  string
		hostNames []string
	}{
		{"clean", 0, false, parsed(nil, nil, nil), 1, "", []string{"w1"}},
		{"unparsed", 0, false, parsed(nil, nil, errors.New("list output: bad")), 1, "list output: bad", []string{"w1"}},
		{"unmatched line", 0, false, parsed(nil, []string{"??? x"}, nil), 1, `1 line(s) of the list match no entry of the description: "??? x"`, []string{"w1"}},
		{"failed call", 1, true, func(t *testing.T) func(string) ([]model.Reported, []string, error) {
			return func(string) ([]model.Reported, []string, error) {
				t.Fatal("parsed a failed call's output")
				return nil, nil, nil
			}
		}, 1, "", []string{"w1"}},
		{"added by the list", 0, false, parsed([]model.Reported{{Name: "w2", State: "running", Raw: "up"}}, nil, nil), 1, "", []string{"w1", "w2"}},
		{"host changing under the call", 0, true, parsed(nil, nil, nil), LookTries, "", []string{"w1"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			a := &model.Aftermath{}
			call := func() int {
				a.Calls = append(a.Calls, model.UserCall{Argv: []string{"list"}, Exit: c.exit, Output: "out"})
				return len(a.Calls) - 1
			}
			find := func(pid int) string {
				if pid == live && (!c.changing || len(a.Calls)%2 == 1) {
					return "w1"
				}
				return ""
			}
			Look(context.Background(), a, "after_death", []string{"w1"}, find, Lister{Call: call, Parse: c.parse(t)})
			if len(a.Looks) != c.looks {
				t.Fatalf("%d looks, want %d", len(a.Looks), c.looks)
			}
			lk := a.Looks[0]
			if lk.ParseErr != c.parseErr {
				t.Errorf("ParseErr %q, want %q", lk.ParseErr, c.parseErr)
			}
			if c.changing != !lk.Still() {
				t.Errorf("look still %v, want %v: pre %+v post %+v", lk.Still(), !c.changing, lk.HostPre, lk.HostPost)
			}
			var names []string
			for _, h := range lk.HostPost {
				names = append(names, h.Name)
			}
			if strings.Join(names, ",") != strings.Join(c.hostNames, ",") || len(lk.HostPre) != len(c.hostNames) {
				t.Errorf("host read for %q (pre %d), want %q", names, len(lk.HostPre), c.hostNames)
			}
		})
	}
}

// parsed is a list parser that answers as given.
func parsed(rep []model.Reported, bad []string, err error) func(*testing.T) func(string) ([]model.Reported, []string, error) {
	return func(*testing.T) func(string) ([]model.Reported, []string, error) {
		return func(string) ([]model.Reported, []string, error) { return rep, bad, err }
	}
}

// Run reports why a call failed and records it: a non-zero exit, a start
// that failed, and a call still running at its bound, killed.
func TestRunBounded(t *testing.T) {
	hosttest.Need(t, "starts processes")
	if _, err := Run(context.Background(), exec.Command("/bin/true"), "r", time.Second); err != nil {
		t.Errorf("true: %v", err)
	}
	uc, err := Run(context.Background(), exec.Command("/bin/sh", "-c", "echo no; exit 3"), "r", time.Second)
	if err == nil || uc.Exit != 3 || strings.TrimSpace(uc.Output) != "no" {
		t.Errorf("exit 3: %+v, %v", uc, err)
	}
	uc, err = Run(context.Background(), exec.Command("/nonexistent/x"), "r", time.Second)
	if err == nil || uc.Exit != -1 {
		t.Errorf("no such command: %+v, %v", uc, err)
	}
	uc, err = Run(context.Background(), exec.Command("/bin/sleep", "30"), "r", 200*time.Millisecond)
	if err == nil || !uc.TimedOut || !strings.Contains(err.Error(), "still running after 200ms: killed by the harness") || uc.MS > 5000 {
		t.Errorf("bound: %+v, %v", uc, err)
	}
}
