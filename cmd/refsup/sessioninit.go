package main

import "faultwin/fixtures/refsup/session"

// cmdSessionInit is the hidden verb a session's PID 1 runs before it execs
// the payload; it never returns on success.
func cmdSessionInit(args []string) error { return session.Init(args) }
