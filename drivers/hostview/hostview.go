// Package hostview reads, from the host alone, what a user's recovery after
// a crash is judged against: which of a run's workloads have live
// processes, what their payloads last wrote from memory, and, when a call to
// the supervisor hangs, which processes it left waiting. Drivers fill the
// aftermath's host side with it, never from the supervisor's own answers.
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

// Proc is one process as /proc shows it.
type Proc struct {
	PID   int
	PPID  int
	Comm  string
	State string // the one-letter state of /proc/<pid>/stat
}

// Zombie reports whether p is dead and waits only to be reaped.
func (p Proc) Zombie() bool { return p.State == "Z" || p.State == "X" }

// ProcRoot is the proc mount hostview reads processes under: a test points
// it at a fake tree (testdata/proc), as CgroupRoot for the cgroups.
var ProcRoot = "/proc"

// Finder names the workload a process belongs to, or "" for none.
type Finder func(pid int) string

// ByEnv finds a process's workload by an environment variable it carries
// (key=name), among processes that also carry the run's variable.
func ByEnv(key, run string) Finder {
	want := []byte(model.RunEnvKey + "=" + run)
	prefix := []byte(key + "=")
	return func(pid int) string {
		b, err := os.ReadFile(filepath.Join(ProcRoot, strconv.Itoa(pid), "environ"))
		if err != nil || !bytes.Contains(b, want) {
			return ""
		}
		for _, kv := range bytes.Split(b, []byte{0}) {
			if v, ok := bytes.CutPrefix(kv, prefix); ok {
				return string(v)
			}
		}
		return ""
	}
}

// ByCgroup finds a process's workload by its cgroup: the component right
// below dir ("/faultwin/<run>") in any hierarchy it is a member of.
func ByCgroup(dir string) Finder {
	dir = strings.TrimSuffix(dir, "/") + "/"
	return func(pid int) string {
		b, err := os.ReadFile(filepath.Join(ProcRoot, strconv.Itoa(pid), "cgroup"))
		if err != nil {
			return ""
		}
		for _, line := range strings.Split(string(b), "\n") {
			parts := strings.SplitN(line, ":", 3)
			if len(parts) != 3 {
				continue
			}
			if rest, ok := strings.CutPrefix(parts[2], dir); ok && rest != "" {
				name, _, _ := strings.Cut(rest, "/")
				return name
			}
		}
		return ""
	}
}

// Procs lists every process (not thread) the host has now.
func Procs() ([]Proc, error) {
	ents, err := os.ReadDir(ProcRoot)
	if err != nil {
		return nil, err
	}
	var out []Proc
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if p, err := Read(pid); err == nil {
			out = append(out, p)
		}
	}
	return out, nil
}

// Read reads one process's stat.
func Read(pid int) (Proc, error) {
	st, err := procstat.Read(ProcRoot, pid)
	if err != nil {
		return Proc{}, err
	}
	return Proc{PID: pid, PPID: st.PPID, Comm: st.Comm, State: string(st.State)}, nil
}

// Workloads reads, in one pass over /proc, the live processes of each named
// workload; every name gets an entry, with no pids when none runs.
func Workloads(names []string, find Finder) ([]model.HostWorkload, error) {
	ps, err := Procs()
	if err != nil {
		return nil, err
	}
	by := map[string]*model.HostWorkload{}
	out := make([]model.HostWorkload, len(names))
	for i, n := range names {
		out[i] = model.HostWorkload{Name: n, PIDs: []int{}}
		by[n] = &out[i]
	}
	for _, p := range ps {
		if p.Zombie() {
			continue
		}
		if h := by[find(p.PID)]; h != nil {
			h.PIDs = append(h.PIDs, p.PID)
			if !slices.Contains(h.Comms, p.Comm) {
				h.Comms = append(h.Comms, p.Comm)
			}
		}
	}
	for i := range out {
		out[i].Frozen = len(out[i].PIDs) > 0 && !slices.ContainsFunc(out[i].PIDs, func(pid int) bool { return !Frozen(pid) })
	}
	return out, nil
}

// Locate returns where a workload's payload writes its identity now, and
// its live processes; err when it has none.
type Locate func() (file string, pids []int, err error)

// InRoot locates a workload's identity file through the root of its first
// live process (/proc/<pid>/root/<rel>): the workload's own view of its
// files, whatever storage the supervisor keeps them in.
func InRoot(name, rel string, find Finder) Locate {
	return func() (string, []int, error) {
		hs, err := Workloads([]string{name}, find)
		if err != nil {
			return "", nil, err
		}
		pids := hs[0].PIDs
		if len(pids) == 0 {
			return "", nil, fmt.Errorf("%w of %s on the host", ErrNoProcess, name)
		}
		// the payload's shell is the first: its sleeps come and go
		slices.Sort(pids)
		return filepath.Join(ProcRoot, strconv.Itoa(pids[0]), "root", rel), pids, nil
	}
}

// Gap is how long Identity waits between its two reads: the payloads count
// every 100 ms.
const Gap = 300 * time.Millisecond

// Once reads a workload's identity once: what it was before an operation
// (whether it runs is not asked; Counter2 stays 0).
func Once(name string, loc Locate) model.Workload { return firstRead(name, loc) }

// ErrNoProcess is wrapped by a Locate that found no live process of the
// workload.
var ErrNoProcess = errors.New("no live process")

// Identities reads several workloads' identities: a first read of each,
// then during (a call the gap need not wait for, or nil), then, once Gap
// has passed since the first reads, a second read of each. Two races with
// the host are read through rather than recorded as findings:
//   - a workload just started may not be its payload yet when first read
//     (runc init execs the payload after the start call returns): with no
//     live process at the first read, it is read again after the gap, and
//     if it is there then, that is its first read;
//   - processes caught while the kernel tears them down (the first read
//     came just after a kill returned) are gone at the second read: the
//     workload is then recorded with no live process, the pids the first
//     read saw kept in Err.
func Identities(names []string, loc func(name string) Locate, during func()) []model.Workload {
	out := make([]model.Workload, len(names))
	t0 := time.Now()
	for i, n := range names {
		out[i] = firstRead(n, loc(n))
	}
	if during != nil {
		during()
	}
	time.Sleep(Gap - time.Since(t0))
	for i, n := range names {
		w := &out[i]
		if w.Err != "" {
			again := firstRead(n, loc(n))
			if again.Err != "" {
				continue
			}
			*w = again
			time.Sleep(Gap)
		}
		boot, err := readAgain(w, loc(n))
		if err == nil && boot != w.Boot {
			// The file outlives its payload: a workload started again
			// (podman reuses a container's root) may not have written yet
			// when the first read came, which then read what the payload
			// before it left. The one that writes now is the workload:
			// read it twice.
			prev := w.Boot
			w.Counter, w.Boot = w.Counter2, boot
			time.Sleep(Gap)
			if boot, err = readAgain(w, loc(n)); err == nil && boot != w.Boot {
				err = fmt.Errorf("boot nonce changed at every read: %s, %s, then %s", prev, w.Boot, boot)
			}
		}
		switch {
		case errors.Is(err, ErrNoProcess):
			w.Err = fmt.Sprintf("second read: %v (the first read's pids %s were exiting)", err, pidList(w.PIDs))
			w.PIDs = nil
		case err != nil:
			w.Err = "second read: " + err.Error()
		}
	}
	return out
}

func firstRead(name string, loc Locate) model.Workload {
	w := model.Workload{Name: name, Taken: time.Now().UTC()}
	file, pids, err := loc()
	if err == nil {
		w.PIDs = pids
		w.Counter, w.Marker, w.Boot, err = readIdentity(file)
	}
	if err != nil {
		w.Err = err.Error()
	}
	return w
}

func pidList(pids []int) string {
	s := make([]string, len(pids))
	for i, p := range pids {
		s[i] = strconv.Itoa(p)
	}
	return "[" + strings.Join(s, " ") + "]"
}

// readAgain reads w's identity file again into its Counter2 and returns
// the boot nonce the file holds.
func readAgain(w *model.Workload, loc Locate) (string, error) {
	file, _, err := loc()
	if err != nil {
		return "", err
	}
	var boot, marker string
	w.Counter2, marker, boot, err = readIdentity(file)
	if err == nil && boot != w.Boot {
		w.Marker = marker
	}
	return boot, err
}

// readIdentity reads an identity file, again for a moment if it is caught
// between its payload's write and rename.
func readIdentity(file string) (int, string, string, error) {
	var err error
	for i := 0; i < 5; i++ {
		var b []byte
		if b, err = os.ReadFile(file); err == nil {
			f := strings.Fields(string(b))
			if len(f) == 3 {
				n, cerr := strconv.Atoi(f[0])
				if cerr == nil {
					return n, f[1], f[2], nil
				}
			}
			err = fmt.Errorf("%s holds %q, not \"<counter> <marker> <boot>\"", file, strings.TrimSpace(string(b)))
		}
		time.Sleep(20 * time.Millisecond)
	}
	return 0, "", "", err
}

// Stuck lists, for a call that hangs, its own process tree (root and every
// descendant) and every other live process of run, with what each waits
// in (wchan).
func Stuck(root int, run string) []model.StuckProc {
	ps, err := Procs()
	if err != nil {
		return nil
	}
	own := map[int]bool{root: true}
	for changed := true; changed; {
		changed = false
		for _, p := range ps {
			if !own[p.PID] && own[p.PPID] {
				own[p.PID], changed = true, true
			}
		}
	}
	inRun := ByEnv(model.RunEnvKey, run)
	var out []model.StuckProc
	for _, p := range ps {
		mine := own[p.PID]
		if !mine && (p.Zombie() || !carries(p.PID, run, inRun)) {
			continue
		}
		w, _ := os.ReadFile(filepath.Join(ProcRoot, strconv.Itoa(p.PID), "wchan"))
		argv, _ := os.ReadFile(filepath.Join(ProcRoot, strconv.Itoa(p.PID), "cmdline"))
		out = append(out, model.StuckProc{PID: p.PID, PPID: p.PPID, Comm: p.Comm, State: p.State,
			Wchan: strings.TrimSpace(string(w)), Argv: strings.TrimSpace(strings.ReplaceAll(string(argv), "\x00", " ")), Own: mine})
	}
	return out
}

// carries reports whether pid carries the run's variable (its value is
// the run itself, so ByEnv on the run key names the run).
func carries(pid int, run string, inRun Finder) bool { return inRun(pid) == run }
