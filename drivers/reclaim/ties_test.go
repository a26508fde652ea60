package reclaim

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"faultwin/criteria"
	"faultwin/internal/hosttest"
	"faultwin/internal/model"
	"faultwin/snapshots"
	"faultwin/snapshots/host"
)

// These tests leave what a dead run can leave tied to it by no mark and no
// path: a process in a namespace the run pinned, one holding a deleted file
// of the run's overlay from a mount namespace of its own, one mapping a
// file of the run's tmpfs through a bind elsewhere. Each must be named by
// the criteria and the preflight with its tie, and killed by the last
// resort, while a bystander beside it is left alone.

func TestMain(m *testing.M) {
	if mode := os.Getenv(confinedEnv); mode != "" {
		os.Exit(confinedJudge(mode, os.Args[1:]))
	}
	hosttest.Main(m)
}

// tieRun is one run's state dir under a private state root.
type tieRun struct {
	run, root, dir string
}

func newTieRun(t *testing.T, run string) tieRun {
	t.Helper()
	hosttest.Need(t, "makes real namespaces, mounts and processes tied to a run")
	r := tieRun{run: run, root: t.TempDir()}
	r.dir = model.StateDir(r.root, run)
	must(t, os.MkdirAll(r.dir, 0o755))
	return r
}

func (r tieRun) plan() Plan {
	return Plan{Scope: model.NewScope(r.root, r.run), Roots: snapshots.DefaultRoots(r.root)}
}

// mountAt mounts and registers a lazy unmount at cleanup.
func mountAt(t *testing.T, src, dst, fstype string, flags uintptr, data string) {
	t.Helper()
	must(t, os.MkdirAll(dst, 0o755))
	must(t, unix.Mount(src, dst, fstype, flags, data))
	t.Cleanup(func() { _ = unix.Unmount(dst, unix.MNT_DETACH) })
}

// start runs cmd with an empty environment (no run variable), waits for
// its first output line and kills it at cleanup.
func start(t *testing.T, cmd *exec.Cmd) *exec.Cmd {
	t.Helper()
	if cmd.Env == nil {
		cmd.Env = []string{"PATH=/usr/bin:/bin"}
	}
	out, err := cmd.StdoutPipe()
	must(t, err)
	cmd.Stderr = os.Stderr
	must(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	line := make(chan string, 1)
	go func() { s, _ := bufio.NewReader(out).ReadString('\n'); line <- s }()
	select {
	case s := <-line:
		if !strings.HasPrefix(s, "ready") {
			t.Fatalf("%v: not ready: %q", cmd.Args, s)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("%v: not ready in 10s", cmd.Args)
	}
	return cmd
}

// judgedAndReclaimed checks that the run's criteria and the any-run
// preflight name victim with a reason containing tie, that the last resort
// kills it, and that bystander survives.
func judgedAndReclaimed(t *testing.T, r tieRun, victim, bystander *exec.Cmd, tie string) {
	t.Helper()
	ctx := context.Background()
	s, err := host.Capture(ctx, "test", r.plan().Roots, snapshots.Decoys{})
	must(t, err)
	why := ""
	for _, o := range criteria.OfRun(s, r.plan().Scope, snapshots.Decoys{}) {
		if o.Process.PID == victim.Process.Pid {
			why = strings.Join(o.Why, ", ")
		}
		if o.Process.PID == bystander.Process.Pid {
			t.Errorf("bystander %d judged the run's: %v", bystander.Process.Pid, o.Why)
		}
	}
	if !strings.Contains(why, tie) {
		t.Fatalf("pid %d judged the run's for %q, want a reason with %q", victim.Process.Pid, why, tie)
	}
	left := strings.Join(criteria.Leftovers(s, r.plan().Roots), "\n")
	if !strings.Contains(left, "pid "+strconv.Itoa(victim.Process.Pid)+" ") || !strings.Contains(left, tie) {
		t.Errorf("preflight does not name pid %d with %q:\n%s", victim.Process.Pid, tie, left)
	}
	rec := Run(ctx, r.plan())
	if !slices.ContainsFunc(rec.Killed, func(k model.Killed) bool { return k.PID.PID == victim.Process.Pid }) {
		t.Fatalf("last resort did not kill pid %d: %+v", victim.Process.Pid, rec)
	}
	_ = victim.Wait()
	if ws, ok := victim.ProcessState.Sys().(syscall.WaitStatus); !ok || ws.Signal() != syscall.SIGKILL {
		t.Errorf("pid %d ended with %v", victim.Process.Pid, victim.ProcessState)
	}
	if err := bystander.Process.Signal(syscall.Signal(0)); err != nil {
		t.Errorf("bystander %d killed: %v", bystander.Process.Pid, err)
	}
}

// A process that joined, by nsenter, only the net namespace a run bound
// under its state dir (its creator gone) carries no tag and no path.
func TestPinnedNetnsJoinerIsReclaimed(t *testing.T) {
	r := newTieRun(t, "rfwtiepin")
	creator := start(t, exec.Command("/usr/bin/unshare", "-n", "/bin/sh", "-c", "echo ready; exec sleep 1000"))
	pin := filepath.Join(r.dir, "netns", "s1")
	must(t, os.MkdirAll(filepath.Dir(pin), 0o755))
	f, err := os.Create(pin)
	must(t, err)
	f.Close()
	must(t, unix.Mount(filepath.Join("/proc", strconv.Itoa(creator.Process.Pid), "ns", "net"), pin, "", unix.MS_BIND, ""))
	t.Cleanup(func() { _ = unix.Unmount(pin, unix.MNT_DETACH) })
	_ = creator.Process.Kill()
	_ = creator.Wait()
	joiner := start(t, exec.Command("/usr/bin/nsenter", "--net="+pin, "/bin/sh", "-c", "echo ready; exec sleep 1001"))
	bystander := start(t, exec.Command("/bin/sh", "-c", "echo ready; exec sleep 1002"))
	judgedAndReclaimed(t, r, joiner, bystander, "net ns bound at "+pin)
}

// A process that opened a file of the run's overlay through a bind in a
// mount namespace of its own, then deleted it and dropped both mounts
// there: its descriptor's path names nothing under the state dir, its
// namespace holds no run mount; the device and inode still are the run's.
func TestDeletedOverlayFileHolderIsReclaimed(t *testing.T) {
	r := newTieRun(t, "rfwtieovl")
	for _, d := range []string{"lower", "upper", "work", "merged"} {
		must(t, os.MkdirAll(filepath.Join(r.dir, d), 0o755))
	}
	must(t, os.WriteFile(filepath.Join(r.dir, "lower", "f"), []byte("x"), 0o644))
	merged := filepath.Join(r.dir, "merged")
	mountAt(t, "fwtie-overlay", merged, "overlay", 0, fmt.Sprintf("lowerdir=%s,upperdir=%s,workdir=%s",
		filepath.Join(r.dir, "lower"), filepath.Join(r.dir, "upper"), filepath.Join(r.dir, "work")))
	elsewhere := t.TempDir()
	script := fmt.Sprintf("mount --bind %s %s && exec 3<%s/f && rm %s/f && umount -l %s && umount -l %s && echo ready && exec sleep 1003",
		merged, elsewhere, elsewhere, elsewhere, elsewhere, merged)
	holder := start(t, exec.Command("/usr/bin/unshare", "-m", "--propagation", "private", "/bin/sh", "-c", script))
	bystander := start(t, exec.Command("/bin/sh", "-c", "echo ready; exec sleep 1004"))
	judgedAndReclaimed(t, r, holder, bystander, "open file on run fs dev ")
}

// A process that mapped a file of the run's tmpfs through a bind of it
// elsewhere, and closed its descriptor, holds no path at all.
func TestMappedTmpfsFileThroughBindIsReclaimed(t *testing.T) {
	r := newTieRun(t, "rfwtiemap")
	stage := filepath.Join(r.dir, "stage")
	mountAt(t, "fwtie-stage", stage, "tmpfs", 0, "size=1m")
	must(t, os.WriteFile(filepath.Join(stage, "lib.so"), make([]byte, 4096), 0o644))
	elsewhere := t.TempDir()
	mountAt(t, stage, elsewhere, "", unix.MS_BIND, "")
	mapper := hosttest.Mapper(filepath.Join(elsewhere, "lib.so"))
	start(t, mapper)
	bystander := start(t, exec.Command("/bin/sh", "-c", "echo ready; exec sleep 1005"))
	judgedAndReclaimed(t, r, mapper, bystander, "mapping on run fs dev ")
}
