package main

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"faultwin/internal/hosttest"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"faultwin/fixtures/refsup/api"
	"faultwin/fixtures/refsup/cgroups"
	"faultwin/fixtures/refsup/criu"
	"faultwin/fixtures/refsup/faults"
	"faultwin/fixtures/refsup/mounts"
	"faultwin/fixtures/refsup/network"
	"faultwin/fixtures/refsup/paths"
	"faultwin/fixtures/refsup/proc"
	"faultwin/fixtures/refsup/removal"
)

// testRoot is where every integration test keeps its state roots.
const testRoot = "/var/lib/faultwin-test"

var binary string // the refsup binary under test, built once

func TestMain(m *testing.M) {
	code := func() int {
		if os.Geteuid() == 0 && !hosttest.Unit() {
			dir, err := os.MkdirTemp("", "refsup-bin-")
			if err != nil {
				fmt.Fprintln(os.Stderr, err)
				return 1
			}
			defer os.RemoveAll(dir)
			defer os.Remove(testRoot) // only if every test left it empty
			binary = filepath.Join(dir, "refsup")
			out, err := exec.Command("go", "build", "-o", binary, ".").CombinedOutput()
			if err != nil {
				fmt.Fprintf(os.Stderr, "building refsup: %v\n%s", err, out)
				return 1
			}
		}
		return m.Run()
	}()
	os.Exit(code)
}

// needHost skips a test that needs root and CRIU, naming what is missing.
func needHost(t *testing.T) {
	t.Helper()
	hosttest.Need(t, "namespaces, mounts, netlink, nftables")
	if _, err := os.Stat(criu.DefaultPath); err != nil {
		t.Fatalf("needs CRIU at %s (make deps installs it): %v", criu.DefaultPath, err)
	}
}

func randID(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// env is one run under test: a state root of its own, a run id, a daemon.
type env struct {
	t        *testing.T
	root     string
	run      string
	lay      paths.Layout
	daemon   *exec.Cmd
	dstderr  bytes.Buffer
	links    map[string]bool // every dvh link the run was seen to use
	decoys   []*exec.Cmd
	decoyMnt []string
	fwd      string // ip_forward before the test
}

func newEnv(t *testing.T) *env {
	t.Helper()
	needHost(t)
	e := &env{t: t, root: filepath.Join(testRoot, randID(4)), run: "t" + randID(3), links: map[string]bool{}}
	if err := os.MkdirAll(e.root, 0o755); err != nil {
		t.Fatal(err)
	}
	var err error
	if e.lay, err = paths.NewLayout(e.root, e.run); err != nil {
		t.Fatal(err)
	}
	e.fwd, _ = network.ReadSysctl(network.IPForward)
	t.Cleanup(e.cleanup)
	return e
}

// cleanup leaves the host clean whatever the test did: kill the daemon,
// sweep the run with refsup's own sweep, remove the decoys, remove the root.
func (e *env) cleanup() {
	e.killDaemon()
	if out, err := exec.Command(binary, "sweep", "--root", e.root, "--run", e.run).CombinedOutput(); err != nil {
		e.t.Errorf("cleanup sweep: %v\n%s", err, out)
	}
	for _, d := range e.decoys {
		_ = syscall.Kill(-d.Process.Pid, syscall.SIGKILL)
		_ = d.Wait()
	}
	for i := len(e.decoyMnt) - 1; i >= 0; i-- {
		_, _, _ = mounts.Unmount(e.decoyMnt[i])
	}
	os.Remove(e.lay.Ledger()) // only left behind by tests that refuse on purpose
	if _, err := removal.RemoveTree(e.root); err != nil {
		e.t.Errorf("cleanup: %v", err)
	}
	if e.fwd != "" {
		if cur, _ := network.ReadSysctl(network.IPForward); cur != e.fwd {
			// ip_forward is host-global: another faultwin run on this host
			// may have changed it meanwhile, and then it is not ours to judge.
			if others := otherRuns(e.run); len(others) > 0 {
				e.t.Logf("ip_forward is %s after the test, was %s; other runs live: %v", cur, e.fwd, others)
			} else {
				e.t.Errorf("ip_forward is %s after the test, was %s", cur, e.fwd)
				_ = network.WriteSysctl(network.IPForward, e.fwd)
			}
		}
	}
	if e.t.Failed() {
		e.t.Logf("daemon stderr:\n%s", e.dstderr.String())
	}
}

// serve starts the daemon as this test's child and waits for its socket.
func (e *env) serve(extra ...string) { e.t.Helper(); e.serveEnv(nil, extra...) }

// serveEnv starts the daemon with extra environment.
func (e *env) serveEnv(envv []string, extra ...string) {
	e.t.Helper()
	args := append([]string{"serve", "--root", e.root, "--run", e.run, "--tag", "faultwin:" + e.run}, extra...)
	cmd := exec.Command(binary, args...)
	cmd.Env = append(os.Environ(), envv...)
	cmd.Stderr = &e.dstderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		e.t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		e.t.Fatal(err)
	}
	e.daemon = cmd
	line := make(chan string, 1)
	go func() {
		l, _ := bufio.NewReader(out).ReadString('\n')
		line <- l
	}()
	select {
	case l := <-line:
		if !strings.Contains(l, "serving") {
			e.t.Fatalf("daemon did not start: %q\n%s", l, e.dstderr.String())
		}
	case <-time.After(10 * time.Second):
		e.t.Fatal("daemon not ready after 10s")
	}
}

// killDaemon SIGKILLs the daemon and reaps it: a killed-but-unreaped
// daemon still looks alive to a sweep.
func (e *env) killDaemon() {
	if e.daemon == nil {
		return
	}
	_ = e.daemon.Process.Kill()
	_ = e.daemon.Wait()
	e.daemon = nil
}

// waitDaemonDeath reaps a daemon that is expected to have killed itself.
func (e *env) waitDaemonDeath() syscall.WaitStatus {
	e.t.Helper()
	done := make(chan error, 1)
	go func() { done <- e.daemon.Wait() }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		e.t.Fatal("daemon did not die within 10s")
	}
	ws := e.daemon.ProcessState.Sys().(syscall.WaitStatus)
	e.daemon = nil
	return ws
}

// cli runs a client verb and decodes its JSON answer into v (if not nil).
func (e *env) cli(v any, verb string, args ...string) error {
	e.t.Helper()
	var out, errb bytes.Buffer
	cmd := exec.Command(binary, append([]string{verb, "--root", e.root, "--run", e.run}, args...)...)
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("refsup %s %v: %w: %s", verb, args, err, strings.TrimSpace(errb.String()))
	}
	if v != nil {
		return json.Unmarshal(out.Bytes(), v)
	}
	return nil
}

func (e *env) must(v any, verb string, args ...string) {
	e.t.Helper()
	if err := e.cli(v, verb, args...); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) create() api.SessionInfo {
	e.t.Helper()
	var s api.SessionInfo
	e.must(&s, "create")
	e.links[s.Veth] = true
	return s
}

func (e *env) checkpoint(sid string) api.CheckpointInfo {
	e.t.Helper()
	var c api.CheckpointInfo
	e.must(&c, "checkpoint", "--session", sid)
	return c
}

func (e *env) restore(cid string) api.SessionInfo {
	e.t.Helper()
	var s api.SessionInfo
	e.must(&s, "restore", "--checkpoint", cid)
	e.links[s.Veth] = true
	return s
}

// sweep runs `refsup sweep` with extra environment and returns its report.
func (e *env) sweep(envv ...string) api.SweepReport {
	e.t.Helper()
	rep, err := e.trySweep(envv...)
	if err != nil {
		e.t.Fatal(err)
	}
	return rep
}

func (e *env) trySweep(envv ...string) (api.SweepReport, error) {
	var out, errb bytes.Buffer
	cmd := exec.Command(binary, "sweep", "--root", e.root, "--run", e.run)
	cmd.Env = append(os.Environ(), envv...)
	cmd.Stdout, cmd.Stderr = &out, &errb
	var rep api.SweepReport
	if err := cmd.Run(); err != nil {
		return rep, fmt.Errorf("sweep: %w: %s", err, errb.String())
	}
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		return rep, fmt.Errorf("sweep output %q: %w", out.String(), err)
	}
	return rep, nil
}

// trace reads the run's fault trace.
func (e *env) trace() []api.TracePoint {
	tp, _ := faults.ReadTrace(e.lay.Trace())
	return tp
}

func fired(tp []api.TracePoint) *api.TracePoint {
	for i := range tp {
		if tp[i].Fired {
			return &tp[i]
		}
	}
	return nil
}

// leftovers is the host's own view of what the run still has: live
// processes (by exact tag, env or path), mounts under the run's dir, its
// links, its table, its ledger. Zombies are dead and not counted.
type leftovers struct {
	Procs   []string
	Mounts  []string
	Links   []string
	Table   bool
	Ledger  bool
	Cgroups []string // anything under <hierarchy>/faultwin/<run>
}

func (l leftovers) empty() bool {
	return len(l.Procs) == 0 && len(l.Mounts) == 0 && len(l.Links) == 0 && !l.Table && !l.Ledger &&
		len(l.Cgroups) == 0
}

func (e *env) leftovers(except ...string) leftovers {
	e.t.Helper()
	var out leftovers
	fs, err := proc.Host()
	if err != nil {
		e.t.Fatal(err)
	}
	all, err := fs.All()
	if err != nil {
		e.t.Fatal(err)
	}
	self := fs.Ancestors(os.Getpid())
	if e.daemon != nil {
		self[e.daemon.Process.Pid] = true // judged separately: the daemon is alive on purpose
	}
	for _, p := range all {
		if self[p.PID] || p.Zombie() || p.Kthread {
			continue
		}
		if proc.HasTag(p.Argv, e.lay.Tag()) || p.Env["FAULTWIN_RUN"] == e.run ||
			paths.Within(p.Cwd, e.lay.Dir()) {
			out.Procs = append(out.Procs, fmt.Sprintf("%d %s %q", p.PID, p.Comm, p.Argv))
		}
	}
	ms, err := mounts.Under(e.lay.Dir(), nil)
	if err != nil {
		e.t.Fatal(err)
	}
	for _, m := range ms {
		keep := true
		for _, x := range except {
			if m.Mountpoint == x {
				keep = false
			}
		}
		if keep {
			out.Mounts = append(out.Mounts, m.Mountpoint)
		}
	}
	for l := range e.links {
		if network.LinkOfRun(l, e.lay.Tag(), "") {
			out.Links = append(out.Links, l)
		}
	}
	out.Table, _ = network.TableExists(e.lay.Table())
	_, err = os.Stat(e.lay.Ledger())
	out.Ledger = !errors.Is(err, os.ErrNotExist)
	for _, h := range hierarchies(e.t) {
		out.Cgroups = append(out.Cgroups, cgroups.Below(h.RunDir(e.run))...)
	}
	return out
}

// hierarchies are the cgroup hierarchies refsup uses on this host.
func hierarchies(t *testing.T) []cgroups.Hierarchy {
	t.Helper()
	hs, err := cgroups.Discover()
	if err != nil {
		t.Fatal(err)
	}
	return hs
}

// decoyProc starts a process that must survive the sweep.
func (e *env) decoyProc(dir string, args ...string) *exec.Cmd {
	e.t.Helper()
	cmd := exec.Command("/bin/sh", append([]string{"-c", "sleep 1000 & wait", "decoy"}, args...)...)
	cmd.Dir = dir
	cmd.Env = []string{"PATH=/usr/bin:/bin"}
	// Its own process group, so cleanup kills the sleep with the shell:
	// an orphaned sleep outlives the test by 1000 s, holding whatever the
	// test binary inherited.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		e.t.Fatal(err)
	}
	e.decoys = append(e.decoys, cmd)
	return cmd
}

func (e *env) decoyTmpfs(path string) {
	e.t.Helper()
	if err := mounts.Tmpfs(path, "1m"); err != nil {
		e.t.Fatal(err)
	}
	e.decoyMnt = append(e.decoyMnt, path)
}

func alive(t *testing.T, pid int) bool {
	t.Helper()
	fs, _ := proc.Host()
	in, err := fs.Read(pid)
	return err == nil && !in.Zombie()
}

// otherRuns lists live processes tagged for a faultwin run other than run.
func otherRuns(run string) []string {
	fs, err := proc.Host()
	if err != nil {
		return nil
	}
	all, _ := fs.All()
	var out []string
	for _, p := range all {
		for i := 0; i+1 < len(p.Argv); i++ {
			if p.Argv[i] == "--tag" && strings.HasPrefix(p.Argv[i+1], "faultwin:") && p.Argv[i+1] != "faultwin:"+run {
				out = append(out, fmt.Sprintf("%d %s", p.PID, p.Argv[i+1]))
			}
		}
	}
	return out
}
