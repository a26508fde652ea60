package triggers

import (
	"errors"
	"fmt"
	"time"

	"golang.org/x/sys/unix"

	"faultwin/internal/model"
)

// kill SIGKILLs id through a pidfd and waits up to goneWait for it to exit.
// The pidfd is opened first and the start time compared afterwards: if the
// pid was recycled before the open, the start differs and nothing is sent;
// if it is recycled after, the pidfd still names the recorded process.
func kill(sc *scanner, role string, id model.PID, comm string, goneWait time.Duration) model.Victim {
	v := model.Victim{Role: role, PID: id, Comm: comm}
	if id.PID <= 0 {
		v.Err = "no process to kill"
		return v
	}
	fd, err := unix.PidfdOpen(id.PID, 0)
	if err != nil {
		if errors.Is(err, unix.ESRCH) {
			v.Err = "gone before the kill"
		} else {
			v.Err = fmt.Sprintf("pidfd_open: %v", err)
		}
		return v
	}
	defer unix.Close(fd)
	st, err := sc.readStat(id.PID)
	switch {
	case err != nil:
		v.Err = fmt.Sprintf("gone before the kill (stat: %v)", err)
		return v
	case st.start != id.StartTime:
		v.Err = fmt.Sprintf("pid %d now has start time %d, not the recorded %d: not signalled", id.PID, st.start, id.StartTime)
		return v
	case st.state == 'Z' || st.state == 'X':
		v.Gone, v.Exited = true, true
		v.Err = "already exited before the kill"
		return v
	}
	if v.Comm == "" {
		v.Comm = st.comm
	}
	if err := unix.PidfdSendSignal(fd, unix.SIGKILL, nil, 0); err != nil {
		if errors.Is(err, unix.ESRCH) {
			v.Gone = true
			v.Err = "exited before the signal"
		} else {
			v.Err = fmt.Sprintf("pidfd_send_signal: %v", err)
		}
		return v
	}
	v.KilledAt = time.Now()
	gone, err := waitGone(fd, goneWait)
	v.Gone = gone
	switch {
	case err != nil:
		v.Err = fmt.Sprintf("waiting for exit: %v", err)
	case !gone:
		v.Err = fmt.Sprintf("still running %v after SIGKILL", goneWait)
	}
	return v
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
