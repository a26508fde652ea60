// Package reexec runs this binary again as one of its helpers (a daemon's
// reaper, a test's mapper), so that faultwin ships one binary and a test
// binary can be its own helper. A helper is registered by name; a binary
// that starts helpers calls Init first thing in main (and in TestMain),
// which becomes the helper when the environment names one. Nothing runs
// from a package's init, so a binary that never calls Init is never taken
// over, and Command refuses to start a helper of such a binary rather than
// run the binary's own work (or its tests) again.
package reexec

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
)

// Env names the helper a process of this binary is to be.
const Env = "FAULTWIN_REEXEC"

var (
	mu      sync.Mutex
	helpers = map[string]func(args []string) int{}
	inited  atomic.Bool
)

// Register makes main the helper called name: in a process started by
// Command(name, args...), Init runs main(args) and exits with its code.
// Registering a name twice is a programming error.
func Register(name string, main func(args []string) int) {
	mu.Lock()
	defer mu.Unlock()
	if _, dup := helpers[name]; dup {
		panic("reexec: helper " + name + " registered twice")
	}
	helpers[name] = main
}

// Init runs the helper the environment names, and exits with its code; it
// returns when the environment names none (the binary's own run). main and
// TestMain call it before anything else.
func Init() {
	inited.Store(true)
	name := os.Getenv(Env)
	if name == "" {
		return
	}
	mu.Lock()
	main, ok := helpers[name]
	mu.Unlock()
	if !ok {
		fmt.Fprintf(os.Stderr, "faultwin: %s=%s names no helper of this binary (it has %s)\n", Env, name, strings.Join(Names(), ", "))
		os.Exit(2)
	}
	os.Exit(main(os.Args[1:]))
}

// Names lists the registered helpers, sorted.
func Names() []string {
	mu.Lock()
	defer mu.Unlock()
	return slices.Sorted(maps.Keys(helpers))
}

// ErrNoInit is Command's refusal in a binary whose main (or TestMain)
// never called Init: its helper would run the binary's own work again.
var ErrNoInit = errors.New("this binary never called reexec.Init, so a helper started from it would run its own work (or its tests) again: call reexec.Init first in its main, or hosttest.Main from its TestMain")

// Command is this binary run again as helper name with args, its
// environment env (nil: none) with the helper named in it.
func Command(name string, env []string, args ...string) (*exec.Cmd, error) {
	if !inited.Load() {
		return nil, fmt.Errorf("helper %s: %w", name, ErrNoInit)
	}
	mu.Lock()
	_, ok := helpers[name]
	mu.Unlock()
	if !ok {
		return nil, fmt.Errorf("helper %s is not registered in this binary", name)
	}
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("helper %s: finding this binary: %w", name, err)
	}
	cmd := exec.Command(exe, args...)
	cmd.Env = append(Without(env), Env+"="+name)
	return cmd, nil
}

// Without is env without the helper's name: what a helper passes on to
// the processes it starts, so they are not helpers too.
func Without(env []string) []string {
	out := make([]string, 0, len(env))
	for _, e := range env {
		if !strings.HasPrefix(e, Env+"=") {
			out = append(out, e)
		}
	}
	return out
}
