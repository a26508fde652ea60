package mutants_test

import (
	"github.com/onsi/ginkgo/v2"

	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/moby/sys/mountinfo"

	"faultwin/criteria"
	"faultwin/internal/model"
	"faultwin/snapshots"
	"faultwin/snapshots/host"
)

// frozen is one of a run's processes held in a cgroup v1 freezer: SIGKILL
// stays pending until it is thawed, so to the sweep it is a process that
// will not die.
type frozen struct {
	dir string
	pid int
}

const freezerRoot = "/sys/fs/cgroup/freezer"

// freezeOne freezes one live, non-init process of the run.
func freezeOne(ctx context.Context, sc model.Scope) (*frozen, error) {
	roots := snapshots.DefaultRoots(sc.StateRoot)
	s, err := host.Capture(ctx, "freeze", roots, snapshots.Decoys{})
	if err != nil {
		return nil, err
	}
	pid := 0
	for _, o := range criteria.OfRun(s, sc, snapshots.Decoys{}) {
		p := o.Process
		if p.Comm == "sleep" && !p.Zombie() && len(p.NSpid) > 1 && p.NSpid[len(p.NSpid)-1] != 1 {
			pid = p.PID
			break
		}
	}
	if pid == 0 {
		return nil, fmt.Errorf("no process of run %s to freeze", sc.Run)
	}
	if _, err := os.Stat(filepath.Join(freezerRoot, "freezer.state")); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	dir := filepath.Join(freezerRoot, "faultwin-mutant-"+sc.Run)
	if err := os.Mkdir(dir, 0o755); err != nil {
		return nil, fmt.Errorf("making freezer cgroup (cgroup v1 freezer needed): %w", err)
	}
	f := &frozen{dir: dir, pid: pid}
	if err := os.WriteFile(filepath.Join(dir, "tasks"), []byte(strconv.Itoa(pid)), 0o644); err != nil {
		return nil, errors.Join(err, f.thaw())
	}
	if err := os.WriteFile(filepath.Join(dir, "freezer.state"), []byte("FROZEN"), 0o644); err != nil {
		return nil, errors.Join(err, f.thaw())
	}
	return f, nil
}

// thaw lets the frozen process take its pending SIGKILL. One with no kill
// pending (the sweep never found it) is moved back to the root cgroup alive,
// for the correct sweep that follows to reap: the harness undoes its freeze
// and nothing more.
func (f *frozen) thaw() error {
	if err := os.WriteFile(filepath.Join(f.dir, "freezer.state"), []byte("THAWED"), 0o644); err != nil {
		return err
	}
	tasks := filepath.Join(f.dir, "tasks")
	for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		b, err := os.ReadFile(tasks)
		if err != nil {
			return err
		}
		if strings.TrimSpace(string(b)) == "" {
			return os.Remove(f.dir)
		}
	}
	b, _ := os.ReadFile(tasks)
	for _, pid := range strings.Fields(string(b)) {
		if err := os.WriteFile(filepath.Join(freezerRoot, "tasks"), []byte(pid), 0o644); err != nil && !errors.Is(err, syscall.ESRCH) {
			return fmt.Errorf("moving %s out of %s: %w", pid, f.dir, err)
		}
	}
	return os.Remove(f.dir)
}

// holders are the processes holdNetns started; restoreHost kills them
// first, so the namespaces they hold go before the host is judged clean.
var holders []*exec.Cmd

// holdNetns starts, for every network namespace bound under the run's state
// dir, a process of the harness's living in it (nsenter, untagged: no run
// owns it); restoreHost kills it.
func holdNetns(ctx context.Context, sc model.Scope) error {
	ms, err := mountinfo.GetMounts(mountinfo.FSTypeFilter("nsfs"))
	if err != nil {
		return err
	}
	held := 0
	for _, m := range ms {
		if !model.Below(m.Mountpoint, sc.StateDir) || !strings.HasPrefix(m.Root, "net:") {
			continue
		}
		cmd := exec.Command("/usr/bin/nsenter", "--net="+m.Mountpoint, "/bin/sleep", "600")
		cmd.Env = []string{}
		if err := cmd.Start(); err != nil {
			return fmt.Errorf("holding %s: %w", m.Mountpoint, err)
		}
		holders = append(holders, cmd)
		ginkgo.GinkgoWriter.Printf("holding netns %s with pid %d\n", m.Mountpoint, cmd.Process.Pid)
		held++
	}
	if held == 0 {
		return fmt.Errorf("no network namespace bound under %s to hold", sc.StateDir)
	}
	return nil
}
