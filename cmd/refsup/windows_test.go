package main

import (
	"os"
	"strings"
	"testing"

	"faultwin/fixtures/refsup/api"
)

// window is one fault window (W1..W16: the supervisor SIGKILLed at a named
// point of a restore, checkpoint, destroy or sweep), driven end to end: a
// fresh daemon, the precondition, the armed fault, the death, the sweep.
type window struct {
	id      string
	fault   string // FAULTWIN_FAULT_AT syntax
	op      string // restore, checkpoint, destroy, idle, sweep
	failRst bool   // restore --fail-after-criu (W13)
	display bool   // sessions get Xvfb + openbox
}

var windows = []window{
	{"W1", "restore.before_overlay", "restore", false, false},
	{"W2", "restore.after_overlay", "restore", false, false},
	{"W3_30", "restore.during_criu+30", "restore", false, false},
	{"W3_80", "restore.during_criu+80", "restore", false, false},
	{"W3_150", "restore.during_criu+150", "restore", false, false},
	{"W3_250", "restore.during_criu+250", "restore", false, false},
	{"W4_30", "restore.during_criu+30!criu", "restore", false, false},
	{"W4_80", "restore.during_criu+80!criu", "restore", false, false},
	{"W4_150", "restore.during_criu+150!criu", "restore", false, false},
	{"W4_250", "restore.during_criu+250!criu", "restore", false, false},
	{"W5", "restore.after_criu", "restore", false, false},
	{"W6", "restore.after_register", "restore", false, false},
	{"W7", "restore.mid_reseed", "restore", false, false},
	{"W8", "checkpoint.after_dump", "checkpoint", false, false},
	{"W9", "checkpoint.after_root_unmount", "checkpoint", false, false},
	{"W10", "checkpoint.after_layer_bind", "checkpoint", false, false},
	{"W11", "destroy.after_kill", "destroy", false, false},
	{"W12", "destroy.after_root_unmount", "destroy", false, false},
	{"W13", "restore.failed_teardown", "restore", true, false},
	{"W14", "sweep.after_kill", "sweep", false, false},
	{"W15", "sweep.after_unmount", "sweep", false, false},
	{"W16", "sweep.after_links", "sweep", false, false},
	{"idle", "idle.kill", "idle", false, false},
	{"create_after_net", "create.after_net", "create", false, false},
	{"create_after_launch", "create.after_launch", "create", false, false},
	{"W4_80_display", "restore.during_criu+80!criu", "restore", false, true},
	{"W7_display", "restore.mid_reseed", "restore", false, true},
	{"W8_display", "checkpoint.after_dump", "checkpoint", false, true},
	{"W13_display", "restore.failed_teardown", "restore", true, true},
}

func TestFaultWindows(t *testing.T) {
	needHost(t)
	for _, w := range windows {
		t.Run(w.id, func(t *testing.T) { runWindow(t, w) })
	}
}

func runWindow(t *testing.T, w window) {
	e := newEnv(t)
	e.serve()
	create := e.create
	if w.display {
		create = func() api.SessionInfo {
			var s api.SessionInfo
			e.must(&s, "create", "--display")
			e.links[s.Veth] = true
			return s
		}
	}
	s := create()
	var target string
	switch w.op {
	case "restore":
		src := create()
		target = e.checkpoint(src.Session).Checkpoint
	case "checkpoint", "destroy":
		target = s.Session
	}
	if w.op != "sweep" {
		e.must(nil, "arm", "--fault", w.fault)
	}
	var err error
	switch w.op {
	case "restore":
		args := []string{"--checkpoint", target}
		if w.failRst {
			args = append(args, "--fail-after-criu")
		}
		err = e.cli(nil, "restore", args...)
	case "checkpoint", "destroy":
		err = e.cli(nil, w.op, "--session", target)
	case "idle":
		err = e.cli(nil, "idle")
	case "create":
		err = e.cli(nil, "create")
	case "sweep":
		e.killDaemon()
		_, err = e.trySweep("FAULTWIN_FAULT_AT=" + w.fault)
	}
	if err == nil {
		t.Fatalf("%s: the operation returned instead of dying", w.id)
	}
	if w.op != "sweep" {
		e.waitDaemonDeath()
	}
	tp := e.trace()
	f := fired(tp)
	if f == nil || f.Point != strings.Split(strings.Split(w.fault, "+")[0], "!")[0] {
		t.Fatalf("%s: fault did not fire at its point; trace: %+v", w.id, tp)
	}
	var own struct{ Links, X11 []string }
	if err := e.cli(&own, "owned"); err != nil {
		t.Fatal(err)
	}
	for _, l := range own.Links {
		e.links[l] = true
	}
	rep := e.sweep()
	if l := e.leftovers(); !l.empty() {
		t.Fatalf("%s: after the sweep: %+v\nreport: %+v", w.id, l, rep)
	}
	for _, x := range own.X11 {
		if _, err := os.Lstat(x); !os.IsNotExist(err) {
			t.Errorf("%s: X11 link %s left", w.id, x)
		}
	}
	if len(rep.Survivors) != 0 || len(rep.Errors) != 0 {
		t.Errorf("%s: survivors %v errors %v", w.id, rep.Survivors, rep.Errors)
	}
	if rep2 := e.sweep(); !rep2.Empty() {
		t.Errorf("%s: second sweep not empty: %+v", w.id, rep2)
	}
}

// TestFaultFromEnvironment arms through FAULTWIN_FAULT_AT on serve: the
// first operation passing the point dies there, whichever it is.
func TestFaultFromEnvironment(t *testing.T) {
	e := newEnv(t)
	e.serveEnv([]string{"FAULTWIN_FAULT_AT=checkpoint.after_layer_bind"})
	s := e.create() // passes no checkpoint point: must survive
	if err := e.cli(nil, "checkpoint", "--session", s.Session); err == nil {
		t.Fatal("checkpoint returned instead of dying")
	}
	e.waitDaemonDeath()
	if f := fired(e.trace()); f == nil || f.Point != "checkpoint.after_layer_bind" {
		t.Fatalf("trace: %+v", e.trace())
	}
	e.sweep()
	if l := e.leftovers(); !l.empty() {
		t.Fatalf("after the sweep: %+v", l)
	}
}
