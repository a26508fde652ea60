package hostview

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"faultwin/internal/model"
	"faultwin/internal/procstat"
)

// ProgressBound is how long Identities waits, after a workload's first
// read, for its counter to move. The payloads write every 100 ms; on a host
// whose every core is busy a workload just restored may take well over the
// 300 ms the reads were once apart to write its next step, and a counter
// that did not move in that time was judged stuck. The wait ends the
// moment the counter moves, so a live workload costs what it takes to
// write once.
const ProgressBound = 2 * time.Second

// pollEvery is how often the wait reads the counter file and the states of
// the workload's processes: a few small reads of /proc a poll.
const pollEvery = 10 * time.Millisecond

// appearEvery is how often a workload with no live process at its first
// read is looked for again (a scan of /proc), until Gap has passed.
const appearEvery = 50 * time.Millisecond

// heldFor is how long every live process of a workload must be seen
// stopped or frozen before the wait ends on it: nothing of it runs until
// something resumes it, so waiting out the bound would tell nothing more.
const heldFor = 200 * time.Millisecond

// userHZ is the unit of /proc/<pid>/stat's CPU times: the kernel reports
// them in USER_HZ, 100 on every architecture Linux exports /proc from.
const userHZ = 100

// waiter awaits one workload's progress.
type waiter struct {
	w     *model.Workload
	loc   Locate
	file  string // the identity file, as the last locate found it
	pids  []int  // its processes, as the last locate found them
	start time.Time
	cpu0  cpuSample
	held  time.Time // since when every live process was seen stopped or frozen
	prev  string    // the boot nonce before the file changed payloads
	next  time.Time // a workload not yet there: when to look for it again
	polls int
	done  bool
	err   error // what ended the wait other than a read of the counter
}

// begin starts the wait from a first read that found the workload.
func (x *waiter) begin(file string) {
	x.file, x.pids, x.start = file, slices.Clone(x.w.PIDs), time.Now()
	x.cpu0 = sampleCPU(x.pids)
}

// poll reads the counter once, and the states of the workload's processes;
// it ends the wait when the counter moved, when every live process has
// been stopped or frozen for heldFor, or at the bound.
func (x *waiter) poll(now time.Time, bound time.Duration) {
	x.polls++
	n, marker, boot, err := readOnce(x.file)
	if err != nil {
		// read through a process's root: that process is gone (a sleep
		// of the loop); locate the workload again
		if !x.relocate() {
			return
		}
		if n, marker, boot, err = readOnce(x.file); err != nil {
			if now.Sub(x.start) >= bound {
				x.done, x.err = true, err
			}
			return
		}
	}
	if boot != x.w.Boot {
		// The file outlives its payload: a workload started again
		// (podman reuses a container's root) may not have written yet
		// when the first read came, which then read what the payload
		// before it left. The one that writes now is the workload.
		if x.prev != "" {
			x.done, x.err = true, fmt.Errorf("boot nonce changed at every read: %s, %s, then %s", x.prev, x.w.Boot, boot)
			return
		}
		x.prev = x.w.Boot
		x.w.Counter, x.w.Boot, x.w.Marker = n, boot, marker
		return
	}
	x.w.Counter2 = n
	if n != x.w.Counter || now.Sub(x.start) >= bound {
		x.done = true
		return
	}
	stopped, frozen, live := states(x.pids)
	if live == 0 {
		if !x.relocate() {
			return
		}
		stopped, frozen, live = states(x.pids)
	}
	switch {
	case live == 0 || len(stopped)+len(frozen) < live:
		x.held = time.Time{}
	case x.held.IsZero():
		x.held = now
	case now.Sub(x.held) >= heldFor:
		x.done = true
	}
}

// relocate finds the workload's identity file and processes again; a
// workload with none ends the wait.
func (x *waiter) relocate() bool {
	file, pids, err := x.loc()
	if err != nil {
		x.done, x.err = true, err
		return false
	}
	x.file, x.pids = file, pids
	return true
}

// finish records the wait: its bound and length, the CPU the workload got
// and how long it waited for one, the host's load, and which of its
// processes are stopped or frozen. A workload with no live process left is
// recorded so, the first read's pids kept in Err, as its processes were
// exiting.
func (x *waiter) finish(bound time.Duration, runnable0 int) {
	p := &model.Progress{BoundMS: int(bound.Milliseconds()), Polls: x.polls,
		WaitedMS: float64(time.Since(x.start).Microseconds()) / 1000}
	x.w.Progress = p
	var errs []string
	if x.err == nil {
		if _, pids, err := x.loc(); err != nil {
			x.err = err
		} else {
			x.pids = pids
		}
	}
	switch {
	case errors.Is(x.err, ErrNoProcess):
		x.w.Err = fmt.Sprintf("second read: %v (the first read's pids %s were exiting)", x.err, pidList(x.w.PIDs))
		x.w.PIDs = nil
	case x.err != nil:
		x.w.Err = "second read: " + x.err.Error()
	}
	p.Stopped, p.Frozen, _ = states(x.pids)
	cpu1 := sampleCPU(x.pids)
	p.CPUMS, p.QueuedMS = cpuGained(x.cpu0, cpu1)
	if cpu1.err != nil {
		errs = append(errs, cpu1.err.Error())
	}
	load, err := os.ReadFile(filepath.Join(ProcRoot, "loadavg"))
	if err != nil {
		errs = append(errs, "load: "+err.Error())
	}
	if f := strings.Fields(string(load)); len(f) >= 4 {
		p.Load = strings.Join(f[:4], " ")
	}
	p.Runnable = max(runnable0, runnable())
	p.Err = strings.Join(errs, "; ")
}

// readOnce reads an identity file once: the wait polls it, so a file
// caught mid-write is read again at the next poll.
func readOnce(file string) (int, string, string, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return 0, "", "", err
	}
	f := strings.Fields(string(b))
	if len(f) == 3 {
		if n, err := strconv.Atoi(f[0]); err == nil {
			return n, f[1], f[2], nil
		}
	}
	return 0, "", "", fmt.Errorf("%s holds %q, not \"<counter> <marker> <boot>\"", file, strings.TrimSpace(string(b)))
}

// states reads which of pids are stopped (state T, or t: stopped by a
// tracer) and which sit in a frozen cgroup, and how many are alive.
func states(pids []int) (stopped, frozen []int, live int) {
	for _, pid := range pids {
		st, err := procstat.Read(ProcRoot, pid)
		if err != nil || st.Zombie() {
			continue
		}
		live++
		switch {
		case st.State == 'T' || st.State == 't':
			stopped = append(stopped, pid)
		case Frozen(pid):
			frozen = append(frozen, pid)
		}
	}
	return stopped, frozen, live
}

// cpuSample is the CPU time of a workload's processes at one moment: each
// process's own and its reaped children's (clock ticks), and each one's
// threads' time runnable waiting for a CPU (nanoseconds).
type cpuSample struct {
	ticks  map[int]uint64
	queued map[int]uint64
	err    error
}

func sampleCPU(pids []int) cpuSample {
	s := cpuSample{ticks: map[int]uint64{}, queued: map[int]uint64{}}
	for _, pid := range pids {
		st, err := procstat.Read(ProcRoot, pid)
		if err != nil || st.Zombie() {
			continue
		}
		s.ticks[pid] = st.CPUTicks()
		q, err := runDelay(pid)
		if err != nil {
			s.err = err
			continue
		}
		s.queued[pid] = q
	}
	return s
}

// runDelay sums, over pid's threads, the time they spent runnable waiting
// for a CPU: the second field of /proc/<pid>/task/<tid>/schedstat.
func runDelay(pid int) (uint64, error) {
	dir := filepath.Join(ProcRoot, strconv.Itoa(pid), "task")
	tids, err := os.ReadDir(dir)
	if err != nil {
		return 0, fmt.Errorf("schedstat: %w", err)
	}
	var sum uint64
	for _, t := range tids {
		b, err := os.ReadFile(filepath.Join(dir, t.Name(), "schedstat"))
		if err != nil {
			if errors.Is(err, os.ErrNotExist) && t.Name() != strconv.Itoa(pid) {
				continue // a thread that just exited
			}
			return 0, fmt.Errorf("schedstat: %w", err)
		}
		f := bytes.Fields(b)
		if len(f) < 2 {
			return 0, fmt.Errorf("schedstat of %s/%s holds %q", dir, t.Name(), b)
		}
		v, err := strconv.ParseUint(string(f[1]), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("schedstat of %s/%s: %w", dir, t.Name(), err)
		}
		sum += v
	}
	return sum, nil
}

// cpuGained is the CPU time (ms) the processes of b got since a, and their
// time waiting for a CPU (nil when it could not be read): a process in
// both counts what it gained, one born since counts whole.
func cpuGained(a, b cpuSample) (float64, *float64) {
	var ticks, queued uint64
	for pid, t := range b.ticks {
		t0, ok := a.ticks[pid]
		switch {
		case !ok:
			ticks += t
		case t > t0:
			ticks += t - t0
		}
	}
	cpu := float64(ticks) * 1000 / userHZ
	if a.err != nil || b.err != nil {
		return cpu, nil
	}
	for pid, q := range b.queued {
		q0, ok := a.queued[pid]
		switch {
		case !ok:
			queued += q
		case q > q0:
			queued += q - q0
		}
	}
	ms := float64(queued) / 1e6
	return cpu, &ms
}

// runnable is the number of tasks runnable on the host now (procs_running
// of /proc/stat), 0 when unread.
func runnable() int {
	b, err := os.ReadFile(filepath.Join(ProcRoot, "stat"))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "procs_running "); ok {
			n, _ := strconv.Atoi(strings.TrimSpace(v))
			return n
		}
	}
	return 0
}
