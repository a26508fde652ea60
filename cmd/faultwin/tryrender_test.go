package main

import (
	"bytes"
	"strings"
	"testing"

	"faultwin/drivers"
	"faultwin/internal/model"
)

// A failed step names the field to look at with its exit and the last
// line it wrote; its output is cut to its last lines with the log file
// for the rest.
func TestRenderFailedStepNamesTheField(t *testing.T) {
	out := strings.Repeat("noise\n", 6) + "Error: no such image\n"
	var b bytes.Buffer
	renderStep(&b, drivers.TryStep{What: "precondition cold 1", Look: []string{"precondition.cold", "base"},
		Argv: []string{"podman", "run", "-c", "echo a b"}, Exit: 125, Seconds: 0.05, Output: out,
		Log: "/tmp/l/03-precondition-cold-1.log", Err: "exit status 125"})
	got := b.String()
	for _, want := range []string{
		"FAIL precondition cold 1 (exit 125 after 0.05 s)",
		"$ podman run -c 'echo a b'",
		"| ... 3 lines before, in /tmp/l/03-precondition-cold-1.log",
		"| Error: no such image",
		"precondition.cold: exit 125 after 0.05 s: Error: no such image; look at precondition.cold and base",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("no %q in:\n%s", want, got)
		}
	}
	if strings.Count(got, "| ") != tryOutputLines+1 {
		t.Errorf("want the last %d lines and where the rest is:\n%s", tryOutputLines, got)
	}
}

// The roles that appeared, the phases seen in order and a phase never
// seen with its evidence's field; a call whose output a child kept open
// names the holder; an excused failure is shown, not failed.
func TestRenderRolesPhasesAndHolders(t *testing.T) {
	s := drivers.TryStep{What: "operation restore", Exit: 0, Seconds: 0.2, Output: "fw1\n",
		HeldOpen: []model.Holder{{PID: 812, Comm: "monitor"}},
		Roles:    []drivers.TryRole{{Role: "criu", PID: 90, Comm: "criu", Argv: []string{"criu", "restore"}, Cgroup: "/faultwin/r1"}},
		Phases: []drivers.TryPhase{{Name: "prepare", Seen: true}, {Name: "conmon", Seen: true, At: 0.12, Evidence: "conmon pid 3"},
			{Name: "criu_restoring", Evidence: "appeared criu", Field: "operations.restore.phases[4].appeared and roles.criu"}}}
	var b bytes.Buffer
	renderStep(&b, s)
	got := b.String()
	for _, want := range []string{
		"FAIL operation restore",
		"exited after 0.20 s but its stdout/stderr stayed open: held by pid 812 (monitor)",
		"role criu: pid 90 comm criu cgroup /faultwin/r1 argv criu restore",
		"phases seen, in order: prepare +0.000 s, conmon +0.120 s (conmon pid 3)",
		"phase criu_restoring never seen (appeared criu): look at operations.restore.phases[4].appeared and roles.criu",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("no %q in:\n%s", want, got)
		}
	}
	// A supervisor that refuses the operation ends it before its phases:
	// they are not reached, not a field to look at (the refusal's own line is).
	b.Reset()
	refused := s
	refused.Exit, refused.Err, refused.Look = 1, "exit status 1", []string{"operations.restore.run", "base"}
	refused.Output = "Error response from daemon: content already exists\n"
	renderStep(&b, refused)
	got = b.String()
	for _, want := range []string{
		"phases not reached, the operation having ended (exit 1 after 0.20 s): criu_restoring",
		"operations.restore.run: exit 1 after 0.20 s: Error response from daemon: content already exists; look at operations.restore.run and base",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("no %q in:\n%s", want, got)
		}
	}
	if strings.Contains(got, "never seen") {
		t.Errorf("a phase after a refused operation rendered as never seen:\n%s", got)
	}
	b.Reset()
	renderStep(&b, drivers.TryStep{What: "sweep 1", Look: []string{"sweep[0]"}, Exit: 125, Err: "exit status 125", Excused: "judged by what it leaves"})
	if got := b.String(); !strings.HasPrefix(got, "  warn sweep 1") || !strings.Contains(got, "not counted: judged by what it leaves") {
		t.Errorf("an excused failure renders as:\n%s", got)
	}
}

// What a description keeps by design is told apart from what its sweep
// left, by its shared keys.
func TestSplitKept(t *testing.T) {
	left, kept := splitKept([]string{
		"cgroup /sys/fs/cgroup/pids/faultwin/r1: of run r1",
		"cgroup /sys/fs/cgroup/pids/faultwin/r1/libpod-ab: of run r1",
		"pid 5 (start 9) sh: env tag r1",
	}, []string{"cgroup /sys/fs/cgroup/*/faultwin/*"})
	if len(kept) != 1 || len(left) != 2 || !strings.Contains(kept[0], "faultwin/r1:") {
		t.Errorf("left %q, kept %q", left, kept)
	}
}

// A run whose phase went unseen is forgiven only when that was its one
// failure and the same run made again saw everything: a description
// fault shows on every run.
func TestMissedOnce(t *testing.T) {
	seen := []drivers.TryPhase{{Name: "prepare", Seen: true}, {Name: "runc_kill", Seen: true}}
	unseen := []drivers.TryPhase{{Name: "prepare", Seen: true}, {Name: "runc_kill", Field: "roles.runc_kill"}}
	ok := []drivers.TryStep{{Run: "r1", What: "setup 1"}, {Run: "r1", What: "operation rm", Phases: seen}}
	missed := []drivers.TryStep{{Run: "r2", What: "setup 1"}, {Run: "r2", What: "operation rm", Phases: unseen}}
	broken := []drivers.TryStep{{Run: "r3", What: "setup 1", Err: "exit 1"}, {Run: "r3", What: "operation rm", Phases: unseen}}
	if got := neverSeen(missed); len(got) != 1 || got[0] != "rm.runc_kill" {
		t.Fatalf("neverSeen: %q", got)
	}
	for _, c := range []struct {
		name         string
		first, again []drivers.TryStep
		want         bool
	}{
		{"missed, then seen", missed, ok, true},
		{"missed twice", missed, missed, false},
		{"seen the first time", ok, ok, false},
		{"a step failed too", broken, ok, false},
		{"the second run failed a step", missed, broken[:1], false},
		{"no second run", missed, nil, false},
	} {
		if got := missedOnce(c.first, c.again); got != c.want {
			t.Errorf("%s: missedOnce %v, want %v", c.name, got, c.want)
		}
	}
}
