package main

import (
	"testing"

	"faultwin/fixtures/refsup/api"
)

// A hibernate that nobody interrupts stops the session and makes the images
// its own; a wake brings it back in place with its memory; a save leaves it
// running. No intent is left after any of them.
func TestHibernateWakeSave(t *testing.T) {
	e := newEnv(t)
	e.serve()
	s := e.create()
	var before api.SessionInfo
	e.must(&before, "inspect", "--session", s.Session)
	if before.Boot == "" {
		t.Fatalf("payload wrote no boot nonce: %+v", before)
	}
	var h map[string]string
	e.must(&h, "hibernate", "--session", s.Session)
	var stopped api.SessionInfo
	e.must(&stopped, "inspect", "--session", s.Session)
	if stopped.State != "hibernated" || len(stopped.Procs) != 0 {
		t.Fatalf("after hibernate: state %s, %d processes", stopped.State, len(stopped.Procs))
	}
	var woken api.SessionInfo
	e.must(&woken, "wake", "--session", s.Session)
	if woken.State != "running" || woken.InitPID == before.InitPID || woken.Boot != before.Boot ||
		woken.Marker != before.Marker || woken.CounterMrk != before.Marker || woken.Counter < before.Counter {
		t.Fatalf("woken %+v, before %+v", woken, before)
	}
	var sv map[string]string
	e.must(&sv, "save", "--session", s.Session)
	var after api.SessionInfo
	e.must(&after, "inspect", "--session", s.Session)
	if after.State != "running" || after.InitPID != woken.InitPID || after.InitStart != woken.InitStart {
		t.Fatalf("save did not leave the session running as it was: %+v", after)
	}
	var owned api.Owned
	e.must(&owned, "owned")
	if len(owned.Intents) != 0 {
		t.Fatalf("intents left after finished captures: %+v", owned.Intents)
	}
}

// A daemon killed after the images are written leaves its intent; a daemon
// restarted with --recover wakes the session from them before it answers
// for it, and drops the intent.
func TestRecoverWakesInterruptedHibernate(t *testing.T) {
	e := newEnv(t)
	e.serve()
	s := e.create()
	var before api.SessionInfo
	e.must(&before, "inspect", "--session", s.Session)
	e.must(nil, "arm", "--fault", "hibernate.after_images")
	if err := e.cli(nil, "hibernate", "--session", s.Session); err == nil {
		t.Fatal("hibernate answered although armed to die")
	}
	e.waitDaemonDeath()
	var owned api.Owned
	e.must(&owned, "owned")
	if len(owned.Intents) != 1 || owned.Intents[0].Session != s.Session || owned.Intents[0].Verb != "hibernate" {
		t.Fatalf("intents at the death: %+v", owned.Intents)
	}
	e.serve("--recover")
	var after api.SessionInfo
	e.must(&after, "inspect", "--session", s.Session)
	if after.State != "running" || after.InitPID == before.InitPID || after.Boot != before.Boot || after.Counter < before.Counter {
		t.Fatalf("after the settle %+v, before %+v", after, before)
	}
	var left api.Owned // a fresh value: owned's omits intents when there are none
	e.must(&left, "owned")
	if len(left.Intents) != 0 {
		t.Fatalf("intent left after the settle: %+v", left.Intents)
	}
}
