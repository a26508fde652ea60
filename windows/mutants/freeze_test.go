package mutants_test

import (
	"github.com/onsi/ginkgo/v2"

	"context"
	"errors"
	"fmt"
	"os"
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

// holds are the bind mounts holdNetns made; releaseHolds unmounts them
// first in restoreHost, so the namespaces they keep go before the host is
// judged clean.
var holds []string

// holdDir is where the harness binds the network namespaces it holds:
// outside every state root, so no run owns the mount.
const holdDir = "/run/faultwin-mutant-holds"

// holdNetns binds, for every network namespace bound under the run's state
// dir, the same namespace at a path of the harness's outside the state
// root: the namespace (and what a buggy sweep left in it) outlives the
// sweep's unmount with no process in it, so a correct sweep, which kills
// every process that joined a namespace of its sessions, has nothing of
// the harness's to kill.
func holdNetns(ctx context.Context, sc model.Scope) error {
	ms, err := mountinfo.GetMounts(mountinfo.FSTypeFilter("nsfs"))
	if err != nil {
		return err
	}
	if err := os.MkdirAll(holdDir, 0o755); err != nil {
		return err
	}
	held := 0
	for i, m := range ms {
		if !model.Below(m.Mountpoint, sc.StateDir) || !strings.HasPrefix(m.Root, "net:") {
			continue
		}
		at := filepath.Join(holdDir, fmt.Sprintf("%s-%d", sc.Run, i))
		if err := os.WriteFile(at, nil, 0o644); err != nil {
			return err
		}
		if err := syscall.Mount(m.Mountpoint, at, "", syscall.MS_BIND, ""); err != nil {
			return fmt.Errorf("holding %s at %s: %w", m.Mountpoint, at, err)
		}
		holds = append(holds, at)
		ginkgo.GinkgoWriter.Printf("holding netns %s at %s\n", m.Mountpoint, at)
		held++
	}
	if held == 0 {
		return fmt.Errorf("no network namespace bound under %s to hold", sc.StateDir)
	}
	return nil
}

// releaseHolds unmounts and removes what holdNetns bound.
func releaseHolds() error {
	var errs []error
	for _, at := range holds {
		if err := syscall.Unmount(at, syscall.MNT_DETACH); err != nil && !errors.Is(err, syscall.EINVAL) {
			errs = append(errs, fmt.Errorf("unmounting %s: %w", at, err))
		}
		if err := os.Remove(at); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	holds = nil
	return errors.Join(errs...)
}
