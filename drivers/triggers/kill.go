package triggers

import (
	"errors"
	"time"

	"faultwin/internal/model"
	"faultwin/internal/pidkill"
)

// kill SIGKILLs id through a pidfd (pidkill.Kill: only if the pid still has
// id's start time) and waits up to goneWait for it to exit.
func kill(sc *scanner, role string, id model.PID, comm string, goneWait time.Duration) model.Victim {
	v := model.Victim{Role: role, PID: id, Comm: comm}
	if id.PID <= 0 {
		v.Err = "no process to kill"
		return v
	}
	r := pidkill.Kill(id, sc.pidStat, goneWait)
	v.KilledAt, v.Gone = r.KilledAt, r.Gone
	v.Exited = errors.Is(r.Err, pidkill.ErrExited)
	if v.Comm == "" && !v.Exited {
		v.Comm = r.Comm
	}
	if r.Err != nil {
		v.Err = r.Err.Error()
	}
	return v
}

// pidStat is the scanner's stat read in pidkill's terms.
func (s *scanner) pidStat(pid int) (pidkill.Stat, error) {
	st, err := s.readStat(pid)
	return pidkill.Stat{Start: st.StartTime, State: st.State, Comm: st.Comm}, err
}
