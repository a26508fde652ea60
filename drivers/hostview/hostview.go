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

// Gap is how long a workload with no live process at its first read is
// looked for again (the payloads count every 100 ms; one just started may
// not be its payload yet).
const Gap = 300 * time.Millisecond

// Once reads a workload's identity once: what it was before an operation
// (whether it runs is not asked; Counter2 stays 0).
func Once(name string, loc Locate) model.Workload { return firstRead(name, loc) }

// ErrNoProcess is wrapped by a Locate that found no live process of the
// workload.
var ErrNoProcess = errors.New("no live process")

// Identities reads several workloads' identities: a first read of each,
// then during (a call the wait need not wait for, or nil), then each
// workload's counter is awaited until it moves, for at most ProgressBound
// after its first read (model.Progress records the wait: how long, the CPU
// the workload got, the host's load, its processes stopped or frozen).
// Three races with the host are read through rather than recorded as
// findings:
//   - a workload just started may not be its payload yet when first read
//     (runc init execs the payload after the start call returns): with no
//     live process at the first read, it is looked for again until Gap
//     has passed, and if it is there then, that is its first read;
//   - processes caught while the kernel tears them down (the first read
//     came just after a kill returned) are gone during the wait: the
//     workload is then recorded with no live process, the pids the first
//     read saw kept in Err;
//   - a file whose boot nonce changes was left by the payload before: the
//     one that writes now is the workload, and its counter is awaited.
func Identities(names []string, loc func(name string) Locate, during func()) []model.Workload {
	return identities(names, loc, during, ProgressBound)
}

func identities(names []string, loc func(name string) Locate, during func(), bound time.Duration) []model.Workload {
	out := make([]model.Workload, len(names))
	xs := make([]*waiter, len(names))
	t0 := time.Now()
	runnable0 := runnable()
	for i, n := range names {
		xs[i] = &waiter{w: &out[i], loc: loc(n)}
		start(xs[i], n)
	}
	if during != nil {
		during()
	}
	for {
		now, active := time.Now(), false
		for i, x := range xs {
			switch {
			case x.done:
			case x.file == "" && now.Sub(t0) >= Gap:
				x.done = true // never there: its first read says why
			case x.file == "":
				if now.After(x.next) {
					start(x, names[i])
				}
				active = true
			default:
				x.poll(now, bound)
				if x.done {
					x.finish(bound, runnable0)
				}
				active = active || !x.done
			}
		}
		if !active {
			return out
		}
		time.Sleep(pollEvery)
	}
}

// start reads a workload's identity a first time and, when it is there,
// starts the wait for its progress.
func start(x *waiter, name string) {
	var file string
	*x.w, file = firstReadAt(name, x.loc)
	x.next = time.Now().Add(appearEvery)
	if file != "" {
		x.begin(file)
	}
}

func firstRead(name string, loc Locate) model.Workload {
	w, _ := firstReadAt(name, loc)
	return w
}

// firstReadAt reads a workload's identity once, and says from which file.
func firstReadAt(name string, loc Locate) (model.Workload, string) {
	w := model.Workload{Name: name, Taken: time.Now().UTC()}
	file, pids, err := loc()
	if err == nil {
		w.PIDs = pids
		w.Counter, w.Marker, w.Boot, err = readIdentity(file)
	}
	if err != nil {
		w.Err = err.Error()
		return w, ""
	}
	return w, file
}

func pidList(pids []int) string {
	s := make([]string, len(pids))
	for i, p := range pids {
		s[i] = strconv.Itoa(p)
	}
	return "[" + strings.Join(s, " ") + "]"
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
