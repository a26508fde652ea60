package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"faultwin/fixtures/refsup/api"
)

// cmdSubreaper runs argv as its child the way a service manager runs a
// daemon: it is the child subreaper of everything the daemon starts, so when
// the daemon dies its orphans (sessions, CRIU and CRIU's forks) become this
// process's children instead of init's, and whatever the sweep then kills is
// reaped at once rather than when the host's init gets to it. It reports the
// daemon's own end on stdout and keeps reaping until stdin closes.
//
//	refsup subreaper [--setenv K=V]... -- <argv>
func cmdSubreaper(stdout, stderr io.Writer, args []string) error {
	var env []string
	for len(args) > 0 && args[0] != "--" {
		if args[0] == "--setenv" && len(args) > 1 {
			env = append(env, args[1])
			args = args[2:]
			continue
		}
		return fmt.Errorf("subreaper: unexpected %q (usage: subreaper [--setenv K=V]... -- argv)", args[0])
	}
	if len(args) < 2 {
		return errors.New("subreaper: no command after --")
	}
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("subreaper: becoming a child subreaper: %w", err)
	}
	cmd := exec.Command(args[1], args[2:]...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = stderr, stderr
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("subreaper: starting %s: %w", args[1], err)
	}
	var mu sync.Mutex
	enc := json.NewEncoder(stdout)
	say := func(s api.SubreaperStatus) {
		mu.Lock()
		defer mu.Unlock()
		_ = enc.Encode(s)
	}
	say(api.SubreaperStatus{Started: cmd.Process.Pid})

	done := make(chan struct{})
	go func() {
		// stdin closing is the driver saying the window is over.
		_, _ = io.Copy(io.Discard, bufio.NewReader(os.Stdin))
		close(done)
	}()
	daemon := cmd.Process.Pid
	for {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
		switch {
		case errors.Is(err, syscall.EINTR):
			continue
		case err != nil && !errors.Is(err, syscall.ECHILD):
			return fmt.Errorf("subreaper: wait4: %w", err)
		case pid > 0:
			if pid == daemon {
				st := api.SubreaperStatus{Exited: true, ExitCode: ws.ExitStatus()}
				if ws.Signaled() {
					st.Signaled, st.Signal, st.ExitCode = true, unix.SignalName(ws.Signal()), -1
				}
				say(st)
			}
			continue
		}
		// Nothing to reap right now. Children still running when the driver
		// hangs up go to init, as they would without a service manager.
		select {
		case <-done:
			return nil
		case <-time.After(10 * time.Millisecond):
		}
	}
}
