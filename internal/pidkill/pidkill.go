// Package pidkill is the one exact kill of the harness: SIGKILL to a
// process named by (pid, start time), through a pidfd, so a recycled pid is
// never hit. The pidfd is opened first and the start time compared
// afterwards: if the pid was recycled before the open, the start differs
// and nothing is sent; if it is recycled after, the pidfd still names the
// recorded process. It imports only internal/model.
package pidkill

import (
	"errors"
	"fmt"
	"time"

	"golang.org/x/sys/unix"

	"faultwin/internal/model"
)

// Stat is what a caller's procfs reader says of a pid: its start time in
// clock ticks since boot, its state letter and its comm.
type Stat struct {
	Start uint64
	State byte
	Comm  string
}

// StatFunc reads pid's stat; an error means it is gone or unreadable.
type StatFunc func(pid int) (Stat, error)

// Why a process was not signalled, or not seen gone. Each error Kill
// returns wraps one of these or is a system call's own failure.
var (
	// ErrGone: the pid names no process (before the open, or by the stat
	// read after it).
	ErrGone = errors.New("gone before the kill")
	// ErrReused: the pid now names another process (another start time).
	ErrReused = errors.New("not signalled")
	// ErrExited: the process was a zombie already (state Z or X) as its
	// kill came.
	ErrExited = errors.New("already exited before the kill")
	// ErrVanished: the process exited between the check and the signal.
	ErrVanished = errors.New("exited before the signal")
	// ErrAlive: the process was signalled but not seen gone within the
	// wait.
	ErrAlive = errors.New("still running")
)

// Result is what one Kill did.
type Result struct {
	Comm     string    // the comm the stat read gave once the pidfd was open
	KilledAt time.Time // when SIGKILL was sent; zero if it was not
	Gone     bool      // seen exited: before the signal, or within the wait
	Err      error     // nil: signalled (and, with a wait, seen gone)
}

// NotThere reports whether err says the recorded process no longer exists:
// it exited, or its pid names another process now. Nothing of it is left to
// kill.
func NotThere(err error) bool {
	return errors.Is(err, ErrGone) || errors.Is(err, ErrReused) || errors.Is(err, ErrExited) || errors.Is(err, ErrVanished)
}

// Kill sends SIGKILL to id through a pidfd after stat shows the pid still
// has id's start time and is not a zombie, then waits up to wait for the
// pidfd to turn readable (the process exited); a wait of zero or less
// does not wait.
func Kill(id model.PID, stat StatFunc, wait time.Duration) Result {
	var r Result
	fd, err := unix.PidfdOpen(id.PID, 0)
	if err != nil {
		if errors.Is(err, unix.ESRCH) {
			r.Err = ErrGone
		} else {
			r.Err = fmt.Errorf("pidfd_open: %w", err)
		}
		return r
	}
	defer unix.Close(fd)
	st, err := stat(id.PID)
	switch {
	case err != nil:
		r.Err = fmt.Errorf("%w (stat: %v)", ErrGone, err)
		return r
	case st.Start != id.StartTime:
		r.Err = fmt.Errorf("pid %d now has start time %d, not the recorded %d: %w", id.PID, st.Start, id.StartTime, ErrReused)
		return r
	}
	r.Comm = st.Comm
	if st.State == 'Z' || st.State == 'X' {
		r.Gone, r.Err = true, ErrExited
		return r
	}
	if err := unix.PidfdSendSignal(fd, unix.SIGKILL, nil, 0); err != nil {
		if errors.Is(err, unix.ESRCH) {
			r.Gone, r.Err = true, ErrVanished
		} else {
			r.Err = fmt.Errorf("pidfd_send_signal: %w", err)
		}
		return r
	}
	r.KilledAt = time.Now()
	if wait <= 0 {
		return r
	}
	r.Gone, err = waitGone(fd, wait)
	switch {
	case err != nil:
		r.Err = fmt.Errorf("waiting for exit: %w", err)
	case !r.Gone:
		r.Err = fmt.Errorf("%w %v after SIGKILL", ErrAlive, wait)
	}
	return r
}

// waitGone polls a pidfd, which turns readable when its process exits.
func waitGone(fd int, bound time.Duration) (bool, error) {
	deadline := time.Now().Add(bound)
	for {
		ms := int((time.Until(deadline) + time.Millisecond - 1) / time.Millisecond)
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		n, err := unix.Poll(fds, max(ms, 0))
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return false, err
		}
		if n > 0 && fds[0].Revents&unix.POLLIN != 0 {
			return true, nil
		}
		if time.Now().After(deadline) {
			return false, nil
		}
	}
}

// WaitAll waits up to limit until every process of ids has exited, each
// watched through a pidfd opened while its start time still matched, and
// returns the ones that had not. A pid that names no process, or another
// one, is gone already.
func WaitAll(ids []model.PID, stat StatFunc, limit time.Duration) []model.PID {
	deadline := time.Now().Add(limit)
	var alive []model.PID
	for _, id := range ids {
		fd, err := unix.PidfdOpen(id.PID, 0)
		if err != nil {
			continue // ESRCH: gone
		}
		st, err := stat(id.PID)
		if err != nil || st.Start != id.StartTime || st.State == 'Z' || st.State == 'X' {
			unix.Close(fd)
			continue
		}
		gone, err := waitGone(fd, max(time.Until(deadline), 0))
		unix.Close(fd)
		if err == nil && !gone {
			alive = append(alive, id)
		}
	}
	return alive
}
