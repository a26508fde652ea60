// Decoys: next to a run, the runner plants the things its sweep must not touch:
// a prefix-colliding sibling run dir (run "r1" beside "r10"-style names), a
// process tagged with that sibling run and living in its dir, a tmpfs at an
// unrecorded path and a ledger-looking file. A sweep that owns by substring,
// by name or by "everything under the state root" destroys one of them.

package runner

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"

	"faultwin/drivers/reclaim"
	"faultwin/internal/model"
	"faultwin/snapshots"
	"faultwin/snapshots/host"

	"golang.org/x/sys/unix"
)

// RemovePlanted removes a decoy dir left by an interrupted harness: its
// tmpfs, its marker file and the dir, and nothing else (a dir holding
// anything more is reported, not emptied). The decoy process ended with the
// harness: its stdin was the harness's pipe.
func RemovePlanted(dir string) error {
	if !reclaim.IsPlanted(dir) {
		return fmt.Errorf("%s is not a faultwin decoy dir; not touching it", dir)
	}
	p := &Planted{Decoys: snapshots.Decoys{Dir: dir,
		Mounts: []string{filepath.Join(dir, "mnt")}, Files: []string{filepath.Join(dir, "ledger.json")}}}
	return p.Remove()
}

// Planted is a set of live decoys and how to remove them.
type Planted struct {
	snapshots.Decoys
	proc  *exec.Cmd
	stdin io.WriteCloser
}

// Sibling returns the prefix-colliding sibling of run: same prefix, one more
// character, so a string-prefix matcher takes it for the run's own.
func Sibling(run string) string { return run + "0" }

// Plant creates the decoys for run under stateRoot.
func Plant(stateRoot, run string) (*Planted, error) {
	sib := Sibling(run)
	dir := filepath.Join(stateRoot, sib)
	p := &Planted{Decoys: snapshots.Decoys{Run: sib, Dir: dir}}
	if _, err := os.Stat(dir); err == nil {
		return nil, fmt.Errorf("decoy dir %s already exists: a previous window left it; remove it by hand if it is not in use", dir)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("making decoy dir: %w", err)
	}
	ledger := filepath.Join(dir, "ledger.json")
	if err := os.WriteFile(ledger, []byte(model.DecoyLedger), 0o644); err != nil {
		return nil, errors.Join(fmt.Errorf("writing decoy file: %w", err), p.Remove())
	}
	p.Files = append(p.Files, ledger)
	mnt := filepath.Join(dir, "mnt")
	if err := os.Mkdir(mnt, 0o755); err != nil {
		return nil, errors.Join(err, p.Remove())
	}
	if err := unix.Mount("faultwin-decoy", mnt, "tmpfs", 0, "size=64k"); err != nil {
		return nil, errors.Join(fmt.Errorf("mounting decoy tmpfs at %s: %w", mnt, err), p.Remove())
	}
	p.Mounts = append(p.Mounts, mnt)

	// A shell blocked on a pipe only the harness holds: no children, no
	// timers, and it ends by itself if the harness dies.
	tag := model.Tag(sib)
	cmd := exec.Command("/bin/sh", "-c", "read _", "faultwin-decoy", "--tag", tag)
	cmd.Dir = dir
	cmd.Env = []string{"PATH=/usr/bin:/bin", model.RunEnvKey + "=" + sib}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, errors.Join(err, p.Remove())
	}
	if err := cmd.Start(); err != nil {
		return nil, errors.Join(fmt.Errorf("starting decoy process: %w", err), p.Remove())
	}
	p.proc, p.stdin = cmd, stdin
	start, err := host.StartTime(cmd.Process.Pid)
	if err != nil {
		return nil, errors.Join(err, p.Remove())
	}
	p.Processes = append(p.Processes, snapshots.DecoyProcess{
		PID: model.PID{PID: cmd.Process.Pid, StartTime: start}, Tag: tag, Cwd: dir,
	})
	return p, nil
}

// Remove takes down what Plant made, and only that: the process is this
// process's own child, the mount and files are at the recorded paths.
func (p *Planted) Remove() error {
	var errs []error
	if p.proc != nil {
		_ = p.stdin.Close()
		_ = p.proc.Process.Signal(syscall.SIGKILL)
		_ = p.proc.Wait()
		p.proc = nil
	}
	for _, m := range p.Mounts {
		if err := unix.Unmount(m, 0); err != nil && !errors.Is(err, unix.EINVAL) && !errors.Is(err, unix.ENOENT) {
			errs = append(errs, fmt.Errorf("unmounting decoy %s: %w", m, err))
		}
		if err := os.Remove(m); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	for _, f := range p.Files {
		if err := os.Remove(f); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	if p.Dir != "" {
		if err := os.Remove(p.Dir); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, fmt.Errorf("removing decoy dir (left non-empty?): %w", err))
		}
	}
	return errors.Join(errs...)
}
