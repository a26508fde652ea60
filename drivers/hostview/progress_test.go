package hostview

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"faultwin/internal/hosttest"
	"faultwin/internal/model"
)

// On the host, three payloads that count as the windows' do, each found by
// the variable its processes carry and read through its own root: one runs,
// one is stopped (SIGSTOP to its process group), one sits in a frozen
// cgroup. The wait for their progress, bounded at an hour, returns because
// each ends on its evidence: the live one's counter moved, the others'
// processes were stopped or frozen. Those two are recorded so, and so not
// starved: their counters not moving is a loss, whatever the host's load.
func TestProgressOfLiveStoppedAndFrozen(t *testing.T) {
	hosttest.Need(t, "starts processes, stops one and freezes a cgroup")
	run := "rpw" + strconv.Itoa(os.Getpid())
	dir := t.TempDir()
	cg := filepath.Join(CgroupRoot, "freezer", "faultwin-test-"+run)
	state, frozen, thawed := "freezer.state", "FROZEN", "THAWED"
	if _, err := os.Stat(filepath.Join(CgroupRoot, "freezer")); err != nil {
		// a cgroup v2 host: the unified hierarchy freezes by cgroup.freeze
		cg, state, frozen, thawed = filepath.Join(CgroupRoot, "faultwin-test-"+run), "cgroup.freeze", "1", "0"
	}
	if err := os.Mkdir(cg, 0o755); err != nil {
		t.Fatal(err)
	}
	// a frozen process dies of SIGKILL only once thawed: every process's
	// cleanup thaws first
	thaw := func() { _ = os.WriteFile(filepath.Join(cg, state), []byte(thawed), 0o644) }
	t.Cleanup(func() {
		thaw()
		for i := 0; i < 50 && os.Remove(cg) != nil; i++ {
			time.Sleep(20 * time.Millisecond)
		}
	})
	start := func(name, prefix string) *exec.Cmd {
		file := filepath.Join(dir, name)
		script := prefix + `i=0; while :; do i=$((i+1)); echo "$i m1 boot-` + name + `" > ` + file + `.new && mv -f ` + file + `.new ` + file + `; sleep 0.05; done`
		cmd := exec.Command("/bin/sh", "-c", script)
		cmd.Env = append(os.Environ(), model.RunEnvKey+"="+run, "FAULTWIN_SESSION="+name)
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			thaw()
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGCONT)
			_ = cmd.Wait()
		})
		return cmd
	}
	live := start("live", "")
	stopped := start("stopped", "")
	icy := start("frozen", `echo $$ > `+filepath.Join(cg, "cgroup.procs")+` && `)
	find := ByEnv("FAULTWIN_SESSION", run)
	loc := func(name string) Locate { return InRoot(name, strings.TrimPrefix(filepath.Join(dir, name), "/"), find) }
	for _, n := range []string{"live", "stopped", "frozen"} {
		if w := FirstRead(n, loc(n), 5*time.Second); w.Boot != "boot-"+n {
			t.Fatalf("%s never wrote its counter: %+v", n, w)
		}
	}
	if err := syscall.Kill(-stopped.Process.Pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cg, state), []byte(frozen), 0o644); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(5 * time.Second); !Frozen(icy.Process.Pid); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s never froze", cg)
		}
	}

	ws := identities([]string{"live", "stopped", "frozen"}, loc, nil, time.Hour)
	a := &model.Aftermath{Expect: model.ExpectContinue, Origin: "o", Before: []model.Workload{{Name: "o", Marker: "m1", Boot: "x"}}}
	for i, c := range []struct {
		cmd  *exec.Cmd
		runs bool
		in   func(p *model.Progress) []int
		says string
	}{
		{live, true, nil, ""},
		{stopped, false, func(p *model.Progress) []int { return p.Stopped }, "stopped: pids"},
		{icy, false, func(p *model.Progress) []int { return p.Frozen }, "frozen: pids"},
	} {
		w := ws[i]
		if w.Err != "" || w.Progress == nil || w.Running() != c.runs || w.Starved() != "" {
			t.Errorf("%s: %+v (%v), want running %v, its wait recorded, not starved", w.Name, w, w.Progress, c.runs)
			continue
		}
		p := w.Progress
		if c.in == nil {
			if len(p.Stopped)+len(p.Frozen) > 0 {
				t.Errorf("%s: recorded stopped %v, frozen %v", w.Name, p.Stopped, p.Frozen)
			}
			continue
		}
		if !slices.Contains(c.in(p), c.cmd.Process.Pid) {
			t.Errorf("%s: its shell %d not named in %s", w.Name, c.cmd.Process.Pid, p.Text())
		}
		a.Before[0].Boot = w.Boot
		if lost, ok := a.Loss(w.Name, w); !ok || !strings.Contains(lost, "does not run on") || !strings.Contains(lost, c.says) {
			t.Errorf("%s: loss %q (%v), want it does not run on, saying %q", w.Name, lost, ok, c.says)
		}
	}
}
