package model

import (
	"fmt"
	"strconv"
	"strings"
)

// StepCPUMS is the CPU time one step of a payload's counter loop takes on
// this host: the shell forks mv and sleep every step, about 10 ms of CPU
// (its own and its reaped children's utime+stime, measured over 2 s of the
// loop). A workload that got less during the wait for its progress could
// not have advanced one step, whatever it is.
const StepCPUMS = 10

// Progress is how a workload's progress was awaited after its first read:
// the counter is polled until it moves, up to a bound, and what could
// stop it moving other than the workload being stuck is read beside it
// (how much CPU it got, how busy the host was, whether its processes were
// stopped or frozen). Rows recorded before it have none, and are judged
// as they were: a counter that did not move in a fixed 300 ms.
type Progress struct {
	// BoundMS is how long the wait may last; WaitedMS how long it did (it
	// ends the moment the counter moves, or its processes are seen stopped
	// or frozen for a while).
	BoundMS  int     `json:"bound_ms"`
	WaitedMS float64 `json:"waited_ms"`
	Polls    int     `json:"polls"`
	// CPUMS is the CPU time the workload's processes got during the wait:
	// utime+stime of /proc/<pid>/stat, with the reaped children's
	// cutime+cstime (its loop's mv and sleep), summed over its processes.
	CPUMS float64 `json:"cpu_ms"`
	// QueuedMS is the time its processes spent runnable waiting for a CPU
	// during the wait (/proc/<pid>/schedstat's run delay), nil when the
	// kernel does not say: what tells a starved workload from one asleep.
	QueuedMS *float64 `json:"queued_ms,omitempty"`
	// Load is /proc/loadavg at the wait's end; Runnable the most tasks
	// runnable (/proc/stat procs_running) at its start or end.
	Load     string `json:"load"`
	Runnable int    `json:"runnable"`
	// Stopped are its processes in a stop state (T, t) at the last poll;
	// Frozen those in a frozen cgroup (v1 freezer.state FROZEN, v2
	// cgroup.events frozen 1).
	Stopped []int `json:"stopped,omitempty"`
	Frozen  []int `json:"frozen,omitempty"`
	// Err says what of the above could not be read.
	Err string `json:"err,omitempty"`
}

// Text is the wait as a line of evidence.
func (p *Progress) Text() string {
	s := fmt.Sprintf("waited %.0f of %d ms, %.0f ms of CPU", p.WaitedMS, p.BoundMS, p.CPUMS)
	if p.QueuedMS != nil {
		s += fmt.Sprintf(", %.0f ms waiting for a CPU", *p.QueuedMS)
	}
	s += "; load " + p.Load + ", " + strconv.Itoa(p.Runnable) + " runnable"
	if len(p.Stopped) > 0 {
		s += "; stopped: pids " + intList(p.Stopped)
	}
	if len(p.Frozen) > 0 {
		s += "; frozen: pids " + intList(p.Frozen)
	}
	if p.Err != "" {
		s += "; " + p.Err
	}
	return s
}

// Starved says why w's counter not moving proves nothing, or "": its
// progress was awaited (Progress recorded), it did not move, none of its
// processes was stopped or frozen, and it got too little CPU to advance one
// step while it waited for one (at least half the wait runnable in the
// run queue; when the kernel does not say, too little CPU alone). A
// workload asleep with nothing to wait for got no CPU either, and is not
// starved: its counter not moving is its own doing.
func (w Workload) Starved() string {
	p := w.Progress
	if p == nil || w.Err != "" || w.Boot == "" || w.Counter2 != w.Counter ||
		len(p.Stopped) > 0 || len(p.Frozen) > 0 || p.CPUMS >= StepCPUMS {
		return ""
	}
	if p.QueuedMS != nil && *p.QueuedMS < p.WaitedMS/2 {
		return ""
	}
	load, _, _ := strings.Cut(p.Load, " ")
	s := fmt.Sprintf("starved: %s got %.0f ms of CPU in the %.1f s wait for its counter", w.Name, p.CPUMS, p.WaitedMS/1000)
	if p.QueuedMS != nil {
		s += fmt.Sprintf(" (%.0f ms runnable, waiting for a CPU)", *p.QueuedMS)
	}
	return s + "; load " + load + ", " + strconv.Itoa(p.Runnable) + " runnable: whether it runs on is not known"
}

func intList(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = strconv.Itoa(x)
	}
	return "[" + strings.Join(s, " ") + "]"
}
