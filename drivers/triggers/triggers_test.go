package triggers

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"faultwin/internal/model"
	"faultwin/internal/procstat"
)

func start(t *testing.T, p Plan, op model.PID) Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	w, err := Start(ctx, p, op)
	if err != nil {
		t.Fatal(err)
	}
	return w.Wait()
}

func appeared(r Result, role string) (Appearance, bool) {
	for _, a := range r.Appeared {
		if a.Role == role {
			return a, true
		}
	}
	return Appearance{}, false
}

// The operation's own process dies no sooner than the delay after Start,
// by SIGKILL, and is seen gone; with no delay it dies at once.
func TestOperationDelayKillsOperation(t *testing.T) {
	needRoot(t)
	for _, delay := range []time.Duration{150 * time.Millisecond, 0} {
		t.Run(delay.String(), func(t *testing.T) {
			run := newRun(t)
			op := spawn(t, run, nil, "/bin/sleep", "30")
			r := start(t, Plan{Run: run, Watch: Operation, Delay: delay, Kill: []string{Operation}}, op.id)
			if !r.Fired {
				t.Fatalf("not fired: %s", r.Reason)
			}
			if len(r.Victims) != 1 {
				t.Fatalf("victims %+v", r.Victims)
			}
			v := r.Victims[0]
			if v.PID != op.id || v.Role != Operation || v.Comm != "sleep" || !v.Gone || v.Err != "" {
				t.Errorf("victim %+v, want %v gone", v, op.id)
			}
			if got := v.KilledAt.Sub(r.Start); got < delay {
				t.Errorf("killed %v after start, before the %v delay", got, delay)
			}
			if delay == 0 && v.KilledAt.Sub(r.Start) > time.Second {
				t.Errorf("zero delay, killed %v after start", v.KilledAt.Sub(r.Start))
			}
			t.Logf("killed %v after start (delay %v)", v.KilledAt.Sub(r.Start), delay)
			if sig := op.killedBy(t); sig != syscall.SIGKILL {
				t.Errorf("operation ended by %v, want SIGKILL", sig)
			}
			if want := "sleep " + strconv.Itoa(op.id.PID); !slices.Contains(r.Present, want) {
				t.Errorf("present %q lacks %q", r.Present, want)
			}
		})
	}
}

// A role that appears later starts the clock: it is recorded as it
// appears, whether the watched process itself execs the role's binary or
// forks a child that does, and killed after the delay.
func TestWatchedRoleAppearsLater(t *testing.T) {
	needRoot(t)
	criu := tool(t, "/bin/sleep", "criu")
	for _, c := range []struct{ name, script string }{
		{"exec", `/bin/sleep 0.2; exec "$CRIU" 30`},
		{"fork", `/bin/sleep 0.2; "$CRIU" 30; :`},
	} {
		t.Run(c.name, func(t *testing.T) {
			run := newRun(t)
			const delay = 80 * time.Millisecond
			op := spawn(t, run, []string{"CRIU=" + criu}, "/bin/sh", "-c", c.script)
			r := start(t, Plan{
				Run: run, Roles: []Role{{Name: "criu", Comms: []string{"criu"}}},
				Watch: "criu", Delay: delay, Kill: []string{"criu"}, Within: 5 * time.Second,
			}, op.id)
			if !r.Fired {
				t.Fatalf("not fired: %s", r.Reason)
			}
			a, ok := appeared(r, "criu")
			if !ok {
				t.Fatalf("criu not recorded as appeared: %+v", r.Appeared)
			}
			if a.Comm != "criu" || a.At.Sub(r.Start) < 200*time.Millisecond {
				t.Errorf("appearance %+v, %v after start; want comm criu after the shell's 200ms", a, a.At.Sub(r.Start))
			}
			if (a.PID == op.id) != (c.name == "exec") {
				t.Errorf("appeared pid %v, operation %v", a.PID, op.id)
			}
			if len(r.Victims) != 1 || r.Victims[0].PID != a.PID || !r.Victims[0].Gone || r.Victims[0].Err != "" {
				t.Fatalf("victims %+v, want the appeared criu %v gone", r.Victims, a.PID)
			}
			if got := r.Victims[0].KilledAt.Sub(a.At); got < delay {
				t.Errorf("killed %v after criu appeared, before the %v delay", got, delay)
			}
			t.Logf("criu appeared %v after start, killed %v after it appeared", a.At.Sub(r.Start), r.Victims[0].KilledAt.Sub(a.At))
			if c.name == "exec" {
				if sig := op.killedBy(t); sig != syscall.SIGKILL {
					t.Errorf("exec'd criu ended by %v", sig)
				}
			} else if sig := op.killedBy(t); sig != 0 || op.err != nil {
				t.Errorf("the shell itself was hit: %v %v", sig, op.err)
			}
		})
	}
}

// Kill order criu then supervisor: CRIU's top process is killed and seen
// gone before the supervisor is killed; its own criu child is left alone.
func TestKillOrderTopCriuThenSupervisor(t *testing.T) {
	needRoot(t)
	run := newRun(t)
	dir := t.TempDir()
	criu := tool(t, "/bin/sh", "criu")
	sup := tool(t, "/bin/sh", "fwsup")
	scripts := map[string]string{
		"inner.sh": "/bin/sleep 30; :\n",
		"top.sh":   `"$CRIU" "$DIR/inner.sh" & /bin/sleep 30; :` + "\n",
		"sup.sh":   `"$CRIU" "$DIR/top.sh" & /bin/sleep 30; :` + "\n",
	}
	for name, body := range scripts {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	op := spawn(t, run, []string{"CRIU=" + criu, "DIR=" + dir}, sup, filepath.Join(dir, "sup.sh"))
	r := start(t, Plan{
		Run: run,
		Roles: []Role{
			{Name: "criu", Comms: []string{"criu"}, Top: true},
			{Name: "supervisor", Comms: []string{"fwsup"}},
		},
		Watch: "criu", Delay: 150 * time.Millisecond, Kill: []string{"criu", "supervisor"}, Within: 5 * time.Second,
	}, op.id)
	if !r.Fired {
		t.Fatalf("not fired: %s", r.Reason)
	}
	if len(r.Victims) != 2 {
		t.Fatalf("victims %+v, want top criu then supervisor", r.Victims)
	}
	c, s := r.Victims[0], r.Victims[1]
	first, _ := appeared(r, "criu")
	if c.Role != "criu" || c.PID != first.PID || !c.Gone || c.Err != "" {
		t.Errorf("first victim %+v, want the top criu %v gone", c, first.PID)
	}
	if s.Role != "supervisor" || s.PID != op.id || !s.Gone || s.Err != "" {
		t.Errorf("second victim %+v, want the supervisor %v gone", s, op.id)
	}
	if !c.KilledAt.Before(s.KilledAt) {
		t.Errorf("criu killed at %v, supervisor at %v: order not kept", c.KilledAt, s.KilledAt)
	}
	left := procsOf(t, run, "criu")
	if len(left) != 1 || left[0] == c.PID.PID {
		t.Errorf("criu processes alive after the kill: %v, want only the top's child", left)
	}
	n := 0
	for _, p := range r.Present {
		if strings.HasPrefix(p, "criu ") {
			n++
		}
	}
	if n != 2 || !slices.Contains(r.Present, "fwsup "+strconv.Itoa(op.id.PID)) {
		t.Errorf("present %q: want both criu and the supervisor", r.Present)
	}
	if sig := op.killedBy(t); sig != syscall.SIGKILL {
		t.Errorf("supervisor ended by %v", sig)
	}
}

// A process with the role's comm that is not of the run (no variable,
// another run's variable, not a descendant of the operation) is never
// killed, nor listed as present.
func TestSameCommNotOfRunNeverKilled(t *testing.T) {
	needRoot(t)
	run := newRun(t)
	criu := tool(t, "/bin/sleep", "criu")
	bare := spawn(t, "", nil, criu, "30")
	other := spawn(t, newRun(t), nil, criu, "30")
	ours := spawn(t, run, nil, criu, "30")
	r := start(t, Plan{
		Run: run, Roles: []Role{{Name: "criu", Comms: []string{"criu"}}},
		Watch: "criu", Kill: []string{"criu"}, Within: 5 * time.Second,
	}, model.PID{})
	if !r.Fired || len(r.Victims) != 1 || r.Victims[0].PID != ours.id {
		t.Fatalf("fired %v victims %+v, want only %v", r.Fired, r.Victims, ours.id)
	}
	time.Sleep(50 * time.Millisecond)
	if !bare.running() || !other.running() {
		t.Errorf("a criu not of the run died: bare %v, other run %v", !bare.running(), !other.running())
	}
	if ours.killedBy(t) != syscall.SIGKILL {
		t.Errorf("the run's criu was not SIGKILLed")
	}
	for _, p := range r.Present {
		if p == "criu "+strconv.Itoa(bare.id.PID) || p == "criu "+strconv.Itoa(other.id.PID) {
			t.Errorf("present %q lists a process not of the run", r.Present)
		}
	}
}

// A process with no run variable is the run's when it descends from the
// operation; a same-comm process beside it is not.
func TestDescentFromOperation(t *testing.T) {
	needRoot(t)
	run := newRun(t)
	criu := tool(t, "/bin/sleep", "criu")
	bare := spawn(t, "", nil, criu, "30")
	op := spawn(t, "", []string{"CRIU=" + criu}, "/bin/sh", "-c", `/bin/sleep 0.05; "$CRIU" 30; :`)
	r := start(t, Plan{
		Run: run, Roles: []Role{{Name: "criu", Comms: []string{"criu"}}},
		Watch: "criu", Kill: []string{"criu"}, Within: 5 * time.Second,
	}, op.id)
	if !r.Fired || len(r.Victims) != 1 || r.Victims[0].Err != "" {
		t.Fatalf("fired %v (%s) victims %+v", r.Fired, r.Reason, r.Victims)
	}
	if r.Victims[0].PID == bare.id {
		t.Fatalf("killed the bystander %v", bare.id)
	}
	if !bare.running() {
		t.Errorf("bystander criu died")
	}
	if sig := op.killedBy(t); sig != 0 || op.err != nil {
		t.Errorf("operation shell hit: %v %v", sig, op.err)
	}
}

// A process placed in the run's cgroup is the run's with no variable and
// no ancestry.
func TestCgroupMembership(t *testing.T) {
	needRoot(t)
	run := newRun(t)
	// the unified hierarchy where it is mounted, else a v1 one: a line of
	// /proc/<pid>/cgroup under /faultwin/<run>/ counts in either
	var dir string
	for _, h := range []string{"/sys/fs/cgroup", "/sys/fs/cgroup/unified", "/sys/fs/cgroup/pids"} {
		if _, err := os.Stat(filepath.Join(h, "cgroup.procs")); err != nil {
			continue
		}
		d := filepath.Join(h, model.CgroupDir, run, "s1")
		if err := os.MkdirAll(d, 0o755); err == nil {
			dir = d
			break
		}
	}
	if dir == "" {
		t.Fatal("no cgroup hierarchy to make a run cgroup in: the host tier needs one (make deps, as root)")
	}
	t.Cleanup(func() {
		_ = os.Remove(dir)
		_ = os.Remove(filepath.Dir(dir))
	})
	criu := tool(t, "/bin/sleep", "criu")
	c := spawn(t, "", []string{"CG=" + dir, "CRIU=" + criu}, "/bin/sh", "-c", `echo $$ > "$CG/cgroup.procs" && exec "$CRIU" 30`)
	time.Sleep(50 * time.Millisecond)
	if !c.running() {
		t.Fatalf("could not join the run cgroup: %v", c.err)
	}
	r := start(t, Plan{
		Run: run, Roles: []Role{{Name: "criu", Comms: []string{"criu"}}},
		Watch: "criu", Kill: []string{"criu"}, Within: 2 * time.Second,
	}, model.PID{})
	if !r.Fired || len(r.Victims) != 1 || r.Victims[0].PID != c.id || !r.Victims[0].Gone {
		t.Fatalf("fired %v (%s) victims %+v, want %v", r.Fired, r.Reason, r.Victims, c.id)
	}
	c.killedBy(t)
}

// A watched role that never appears: the trigger gives up at Within and
// kills nothing.
func TestWithinExpires(t *testing.T) {
	needRoot(t)
	run := newRun(t)
	op := spawn(t, run, nil, "/bin/sleep", "30")
	const within = 120 * time.Millisecond
	r := start(t, Plan{
		Run: run, Roles: []Role{{Name: "criu", Comms: []string{"criu"}}},
		Watch: "criu", Kill: []string{"criu", Operation}, Within: within,
	}, op.id)
	took := time.Since(r.Start)
	if r.Fired || len(r.Victims) != 0 || !strings.Contains(r.Reason, "did not appear within") {
		t.Fatalf("fired %v victims %+v reason %q", r.Fired, r.Victims, r.Reason)
	}
	if took < within || took > within+time.Second {
		t.Errorf("gave up after %v, want about %v", took, within)
	}
	if !op.running() {
		t.Errorf("operation died though nothing fired")
	}
	tp := r.TracePoints("criu+0")
	if len(tp) != 1 || tp[0].Fired || !strings.Contains(tp[0].Note, "did not appear") {
		t.Errorf("trace points %+v", tp)
	}
}

// A watch holds no file open once it ended, though it kept the comm files
// of the run's processes open while it ran.
func TestNoFdLeak(t *testing.T) {
	needRoot(t)
	run := newRun(t)
	for range 3 {
		spawn(t, run, nil, "/bin/sleep", "30")
	}
	count := func() int {
		ents, err := os.ReadDir("/proc/self/fd")
		if err != nil {
			t.Fatal(err)
		}
		return len(ents)
	}
	before := count()
	r := start(t, Plan{
		Run: run, Roles: []Role{{Name: "criu", Comms: []string{"criu"}}},
		Watch: "criu", Kill: []string{"criu"}, Within: 50 * time.Millisecond,
	}, model.PID{})
	if r.Fired || len(r.Present) != 0 {
		t.Fatalf("fired %v present %q", r.Fired, r.Present)
	}
	if after := count(); after != before {
		t.Errorf("%d files open before the watch, %d after", before, after)
	}
}

// A recorded identity whose start time no longer matches the pid is
// refused: nothing is signalled.
func TestStartMismatchRefused(t *testing.T) {
	needRoot(t)
	run := newRun(t)
	op := spawn(t, run, nil, "/bin/sleep", "30")
	stale := op.id
	stale.StartTime++
	r := start(t, Plan{Run: run, Watch: Operation, Kill: []string{Operation}}, stale)
	if !r.Fired || len(r.Victims) != 1 {
		t.Fatalf("fired %v victims %+v", r.Fired, r.Victims)
	}
	v := r.Victims[0]
	if !strings.Contains(v.Err, "not signalled") || !v.KilledAt.IsZero() || v.Gone {
		t.Errorf("victim %+v, want a refusal", v)
	}
	time.Sleep(50 * time.Millisecond)
	if !op.running() {
		t.Fatalf("the process behind the stale identity died")
	}
}

// A process already exiting when its kill comes is recorded as exited on
// its own (F1 does not count it as the fault's victim), never as killed.
func TestZombieVictimExitedOnItsOwn(t *testing.T) {
	needRoot(t)
	run := newRun(t)
	cmd := exec.Command("/bin/true")
	cmd.Env = []string{"PATH=/usr/bin:/bin", model.RunEnvKey + "=" + run}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Wait() })
	id := idOf(t, cmd.Process.Pid)
	deadline := time.Now().Add(5 * time.Second)
	for {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(id.PID) + "/stat")
		if err != nil {
			t.Fatal(err)
		}
		if st, err := procstat.Parse(b); err == nil && st.State == 'Z' {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("/bin/true did not become a zombie")
		}
		time.Sleep(5 * time.Millisecond)
	}
	r := start(t, Plan{Run: run, Watch: Operation, Kill: []string{Operation}}, id)
	if !r.Fired || len(r.Victims) != 1 {
		t.Fatalf("fired %v victims %+v", r.Fired, r.Victims)
	}
	if v := r.Victims[0]; !v.Exited || !v.Gone || !v.KilledAt.IsZero() || !strings.Contains(v.Err, "already exited") {
		t.Errorf("victim %+v, want exited on its own, not killed", v)
	}
}

// Stop and the context end a watch that has not fired.
func TestStopAndCancel(t *testing.T) {
	needRoot(t)
	run := newRun(t)
	p := Plan{Run: run, Roles: []Role{{Name: "criu", Comms: []string{"criu"}}}, Watch: "criu", Kill: []string{"criu"}}
	w, err := Start(context.Background(), p, model.PID{})
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(20 * time.Millisecond)
	w.Stop()
	w.Stop()
	if r := w.Wait(); r.Fired || !strings.Contains(r.Reason, "stopped") {
		t.Errorf("after Stop: fired %v reason %q", r.Fired, r.Reason)
	}
	ctx, cancel := context.WithCancel(context.Background())
	w, err = Start(ctx, p, model.PID{})
	if err != nil {
		t.Fatal(err)
	}
	time.AfterFunc(20*time.Millisecond, cancel)
	if r := w.Wait(); r.Fired || !strings.Contains(r.Reason, "context") {
		t.Errorf("after cancel: fired %v reason %q", r.Fired, r.Reason)
	}
}

func TestPlanErrors(t *testing.T) {
	criu := []Role{{Name: "criu", Comms: []string{"criu"}}}
	op := model.PID{PID: 1, StartTime: 1}
	for name, c := range map[string]struct {
		p  Plan
		op model.PID
	}{
		"no run":         {Plan{Watch: Operation, Kill: []string{Operation}}, model.PID{}},
		"unknown watch":  {Plan{Run: "r", Roles: criu, Watch: "runc", Kill: []string{"criu"}}, op},
		"unknown kill":   {Plan{Run: "r", Roles: criu, Watch: "criu", Kill: []string{"conmon"}}, op},
		"nothing killed": {Plan{Run: "r", Roles: criu, Watch: "criu"}, op},
		"no comm":        {Plan{Run: "r", Roles: []Role{{Name: "criu"}}, Watch: Operation, Kill: []string{"criu"}}, op},
		"twice":          {Plan{Run: "r", Roles: append(criu, criu...), Watch: Operation, Kill: []string{"criu"}}, op},
		"role operation": {Plan{Run: "r", Roles: []Role{{Name: Operation, Comms: []string{"x"}}}, Watch: Operation, Kill: []string{Operation}}, op},
		"op kill no op":  {Plan{Run: "r", Watch: Operation, Kill: []string{Operation}}, model.PID{}},
		"negative delay": {Plan{Run: "r", Watch: Operation, Delay: -1, Kill: []string{Operation}}, op},
	} {
		if _, err := Start(context.Background(), c.p, c.op); !errors.Is(err, ErrPlan) {
			t.Errorf("%s: err %v, want ErrPlan", name, err)
		}
	}
}

func TestTracePoints(t *testing.T) {
	t0 := time.Unix(1000, 0)
	r := Result{
		Start:    t0,
		Appeared: []Appearance{{Role: "criu", PID: model.PID{PID: 123, StartTime: 9}, Comm: "criu", At: t0.Add(time.Millisecond)}},
		Fired:    true, FiredAt: t0.Add(81 * time.Millisecond),
		Victims: []model.Victim{
			{Role: "criu", PID: model.PID{PID: 123, StartTime: 9}, Comm: "criu", KilledAt: t0.Add(82 * time.Millisecond), Gone: true},
			{Role: "conmon", Err: "no live process of the run had the role at the kill"},
		},
		Present: []string{"criu 123", "fwsup 100"},
	}
	tp := r.TracePoints("checkpoint.criu+80")
	if len(tp) != 2 {
		t.Fatalf("%+v", tp)
	}
	if tp[0].Point != "appeared criu" || tp[0].PID != 123 || !strings.Contains(tp[0].Note, "appeared criu pid 123") {
		t.Errorf("appearance point %+v", tp[0])
	}
	f := tp[1]
	if f.Point != "checkpoint.criu+80" || !f.Fired || f.PID != 123 || !f.Time.Equal(r.FiredAt) {
		t.Errorf("fired point %+v", f)
	}
	for _, want := range []string{"criu pid 123 (criu) killed, gone", "conmon: no live process", "present: criu 123, fwsup 100"} {
		if !strings.Contains(f.Note, want) {
			t.Errorf("note %q lacks %q", f.Note, want)
		}
	}
}

// BenchmarkTick measures one steady poll: list the proc mount, nothing new,
// re-read the comm of the run's processes.
func BenchmarkTick(b *testing.B) {
	needRoot(b)
	run := newRun(b)
	for range 5 {
		spawn(b, run, nil, "/bin/sleep", "60")
	}
	sc, err := newScanner("/proc", run, model.PID{}, []Role{{Name: "criu", Comms: []string{"criu"}}}, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer sc.close()
	if err := sc.scan(time.Now()); err != nil {
		b.Fatal(err)
	}
	members := 0
	for _, p := range sc.procs {
		if p.member {
			members++
		}
	}
	for b.Loop() {
		if err := sc.scan(time.Now()); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(sc.procs)), "pids")
	b.ReportMetric(float64(members), "members")
}

// BenchmarkFirstScan measures the first tick, which decides for every pid
// on the host whether it is of the run.
func BenchmarkFirstScan(b *testing.B) {
	needRoot(b)
	run := newRun(b)
	for b.Loop() {
		sc, err := newScanner("/proc", run, model.PID{}, []Role{{Name: "criu", Comms: []string{"criu"}}}, nil)
		if err != nil {
			b.Fatal(err)
		}
		if err := sc.scan(time.Now()); err != nil {
			b.Fatal(err)
		}
		sc.close()
	}
}

// Two roles share a comm ("podman" the operation, "podman container
// cleanup" started later): the argv words tell them apart, so the role
// with words is never given to a process without them.
func TestArgvWordsTellRolesApart(t *testing.T) {
	needRoot(t)
	run := newRun(t)
	podman := tool(t, "/bin/sleep", "podman")
	plain := spawn(t, run, nil, podman, "30")
	r := start(t, Plan{
		Run: run, Roles: []Role{{Name: "cleanup", Comms: []string{"podman"}, Argv: []string{"30.5"}}},
		Watch: "cleanup", Kill: []string{"cleanup"}, Within: 300 * time.Millisecond,
	}, model.PID{})
	if r.Fired || len(r.Appeared) != 0 {
		t.Fatalf("a podman without the argv word took the role: fired %v, appeared %+v", r.Fired, r.Appeared)
	}
	cleanup := spawn(t, run, nil, podman, "30.5")
	r = start(t, Plan{
		Run: run, Roles: []Role{{Name: "cleanup", Comms: []string{"podman"}, Argv: []string{"30.5"}}},
		Watch: "cleanup", Kill: []string{"cleanup"}, Within: 5 * time.Second,
	}, model.PID{})
	if !r.Fired || len(r.Victims) != 1 || r.Victims[0].PID != cleanup.id {
		t.Fatalf("fired %v victims %+v, want only %v", r.Fired, r.Victims, cleanup.id)
	}
	if !plain.running() {
		t.Error("the podman without the argv word was killed")
	}
}

// A tool run for a quick probe by one parent and for the real work by
// another: the role that names a parent takes only the second.
func TestParentTellsProbeFromWork(t *testing.T) {
	needRoot(t)
	run := newRun(t)
	criu := tool(t, "/bin/sleep", "criu")
	runc := tool(t, "/bin/sh", "runc")
	probe := spawn(t, run, nil, criu, "30")
	work := spawn(t, run, nil, runc, "-c", "sleep 0.1; "+criu+" 31; true")
	r := start(t, Plan{
		Run: run, Roles: []Role{{Name: "criu", Comms: []string{"criu"}, Parent: []string{"runc"}}},
		Watch: "criu", Kill: []string{"criu"}, Within: 5 * time.Second,
	}, model.PID{})
	if !r.Fired || len(r.Victims) != 1 || r.Victims[0].PID == probe.id {
		t.Fatalf("fired %v victims %+v; the probe %v must not be taken", r.Fired, r.Victims, probe.id)
	}
	if len(r.Appeared) != 1 || r.Appeared[0].PID != r.Victims[0].PID {
		t.Errorf("appeared %+v: want only the victim, runc's criu", r.Appeared)
	}
	if !probe.running() {
		t.Error("the probe criu was killed")
	}
	// runc's shell goes on after its criu died, so it ends by itself.
	if sig := work.killedBy(t); sig != 0 {
		t.Errorf("runc's shell was killed by %v", sig)
	}
}
