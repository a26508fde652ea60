package reclaim

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"faultwin/internal/hosttest"
	"faultwin/snapshots"
)

// A neighbour's short-lived processes never stop a suite. On this host
// root cannot read the host's init (environ, cwd, root, fds, namespace
// links: permission denied), and what it spawns is as unreadable between
// its fork and its exec; a preflight that met one counted it as a gap and
// stopped make run. Nothing a test starts is unreadable that way to an
// unconfined root, so the judge is also run confined by Landlock, which
// refuses a confined process the same parts of every process outside its
// domain (cwd, root, fds, namespace links; cgroup, status, mountinfo and
// net stay readable): to it every process of the host but its own is as
// refused as init's children are, the neighbour's among them.

// confinedEnv makes the test binary a judge confined by Landlock instead
// of a test run: "confine" confines itself and runs again as "judge".
const confinedEnv = "FWRECLAIM_CONFINED_JUDGE"

// judgeLine is what the confined judge says of one judgement.
type judgeLine struct {
	Left     []string `json:"left"`
	SetAside []string `json:"set_aside"`
	Err      string   `json:"err,omitempty"`
}

// confinedJudge runs in the test binary's process started by
// runConfinedJudge; args are the state root, the tmp dir and how many
// judgements to make. It returns the exit status.
func confinedJudge(mode string, args []string) int {
	switch mode {
	case "confine":
		// A Landlock domain binds the thread that enters it and what it
		// executes: enter on this thread, then exec so that every thread of
		// the judge is in it.
		runtime.LockOSThread()
		if err := landlockSelf(); err != nil {
			fmt.Fprintln(os.Stderr, "confining the judge:", err)
			return 3
		}
		env := []string{confinedEnv + "=judge"}
		for _, kv := range os.Environ() {
			if !strings.HasPrefix(kv, confinedEnv+"=") {
				env = append(env, kv)
			}
		}
		err := syscall.Exec("/proc/self/exe", append([]string{os.Args[0]}, args...), env)
		fmt.Fprintln(os.Stderr, "exec:", err)
		return 3
	case "judge":
		n, err := strconv.Atoi(args[2])
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
		roots := snapshots.DefaultRoots(args[0])
		roots.TmpDir = args[1]
		enc := json.NewEncoder(os.Stdout)
		for range n {
			j, err := Judge(context.Background(), "neighbour", roots)
			l := judgeLine{Left: j.Left, SetAside: j.SetAside}
			if err != nil {
				l.Err = err.Error()
			}
			if err := enc.Encode(l); err != nil {
				return 2
			}
		}
		return 0
	}
	fmt.Fprintln(os.Stderr, "unknown mode", mode)
	return 2
}

// landlockSelf puts the calling thread in a new Landlock domain that
// scopes signals only: it restricts nothing the judge does, but the kernel
// refuses a process in a domain the ptrace-checked parts of /proc of every
// process outside it.
func landlockSelf() error {
	attr := unix.LandlockRulesetAttr{Scoped: unix.LANDLOCK_SCOPE_SIGNAL}
	fd, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, uintptr(unsafe.Pointer(&attr)), unsafe.Sizeof(attr), 0)
	if errno != 0 {
		return fmt.Errorf("landlock_create_ruleset: %w (Landlock ABI 6, Linux 6.12, is needed)", errno)
	}
	defer unix.Close(int(fd))
	if _, _, errno := unix.Syscall(unix.SYS_LANDLOCK_RESTRICT_SELF, fd, 0, 0); errno != 0 {
		return fmt.Errorf("landlock_restrict_self: %w", errno)
	}
	return nil
}

// startNeighbour starts about 100 short processes a second from the test
// process until the test ends, and returns how many it started so far.
func startNeighbour(t *testing.T) func() int64 {
	t.Helper()
	var n atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
			}
			if exec.Command("/bin/true").Run() == nil {
				n.Add(1)
			}
		}
	}()
	t.Cleanup(func() { close(stop); wg.Wait() })
	return n.Load
}

// neighbourRoots is a state root of the test's own with the host's
// everything else, so the judge reads the whole host.
func neighbourRoots(t *testing.T) snapshots.Roots {
	roots := snapshots.DefaultRoots(t.TempDir())
	roots.TmpDir = t.TempDir()
	return roots
}

func TestNeighbourForksNeverStopAJudge(t *testing.T) {
	hosttest.Need(t, "reads the whole host while a neighbour forks")
	roots := neighbourRoots(t)
	forks := startNeighbour(t)
	const rounds = 10

	t.Run("unconfined", func(t *testing.T) {
		from, t0 := forks(), time.Now()
		for i := range rounds {
			j, err := Judge(context.Background(), "neighbour", roots)
			if err != nil {
				t.Fatal(err)
			}
			if !j.Clean() {
				t.Errorf("judgement %d of %d: not clean beside a neighbour forking:\n%s", i+1, rounds, strings.Join(j.Left, "\n"))
			}
		}
		if forks() == from {
			t.Fatal("the neighbour started nothing while the judge ran")
		}
		t.Logf("%d judgements, the neighbour started %d processes (%.0f/s)", rounds, forks()-from, float64(forks()-from)/time.Since(t0).Seconds())
	})

	t.Run("confined", func(t *testing.T) {
		from, t0 := forks(), time.Now()
		lines := runConfinedJudge(t, roots, rounds)
		aside := 0
		for i, l := range lines {
			if l.Err != "" {
				t.Fatalf("judgement %d: %s", i+1, l.Err)
			}
			if len(l.Left) > 0 {
				t.Errorf("judgement %d of %d: not clean with every process outside refused:\n%s", i+1, rounds, strings.Join(l.Left, "\n"))
			}
			aside += len(l.SetAside)
		}
		// The test process itself is outside the judge's domain: were
		// nothing set aside, nothing was refused and this tested nothing.
		if aside == 0 {
			t.Fatal("the confined judge set nothing aside: nothing was refused to it")
		}
		t.Logf("%d judgements, %d processes set aside in all (e.g. %s), the neighbour started %d processes (%.0f/s)",
			len(lines), aside, firstAside(lines), forks()-from, float64(forks()-from)/time.Since(t0).Seconds())
	})
}

// runConfinedJudge runs rounds judgements in a judge confined by Landlock
// and returns what it said of each.
func runConfinedJudge(t *testing.T, roots snapshots.Roots, rounds int) []judgeLine {
	t.Helper()
	cmd := exec.Command(os.Args[0], roots.StateRoot, roots.TmpDir, strconv.Itoa(rounds))
	cmd.Env = append(os.Environ(), confinedEnv+"=confine")
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var lines []judgeLine
	sc := bufio.NewScanner(out)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var l judgeLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("confined judge said %q: %v", sc.Text(), err)
		}
		lines = append(lines, l)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("confined judge: %v", err)
	}
	if len(lines) != rounds {
		t.Fatalf("confined judge made %d judgements, want %d", len(lines), rounds)
	}
	return lines
}

func firstAside(lines []judgeLine) string {
	for _, l := range lines {
		if len(l.SetAside) > 0 {
			return l.SetAside[0]
		}
	}
	return "none"
}
