// Command bench prints, side by side from one run on this machine, what
// faultwin's own work costs against the work it measures: a host snapshot
// against the shell commands that read the same evidence, the harness's
// share of each driver's window time, a pass of each driver's windows
// against the sum of its supervisor's steps, replay throughput, and the
// replay's and the report's wall clock, CPU, peak memory and page size
// beside a base build's. Run it as `make bench`, which first runs the
// windows it reads, or the last part alone as `make bench-reports`.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"faultwin/internal/model"
	"faultwin/reports/rows"
	"faultwin/snapshots"
	"faultwin/snapshots/host"
)

// shellEquivalent reads what a snapshot reads with the usual tools: every
// process with its environment, cwd, root and namespaces, the mounts, the
// links, the nft tables, the X11 sockets and the one sysctl.
const shellEquivalent = `ps -eo pid,ppid,stat,lstart,args >/dev/null
for p in /proc/[0-9]*; do cat $p/environ $p/cgroup >/dev/null 2>&1; readlink $p/cwd $p/root >/dev/null 2>&1; ls -l $p/ns $p/fd >/dev/null 2>&1; done
findmnt -J >/dev/null; ip -j link >/dev/null; nft -j list tables >/dev/null 2>&1
ls -la /tmp/.X11-unix >/dev/null 2>&1; cat /proc/sys/net/ipv4/ip_forward >/dev/null`

// supervisorSteps are the steps of a window spent in the supervisor (its
// preparation, the operation, its death, its user's recovery, its own
// sweeps, a recovery window's restart, identity reads and fresh run);
// everything else is the harness's.
var supervisorSteps = []string{"prepare", "trigger", "reap", "aftermath", "sweep1", "sweep2", "recover",
	"identity_before", "reuse_probe"}

func main() {
	stateRoot := flag.String("state-root", "/var/lib/faultwin/state", "state root the snapshots read")
	faultwin := flag.String("faultwin", "bin/faultwin", "faultwin binary (replay throughput)")
	n := flag.Int("n", 30, "snapshots to time")
	refsup := flag.String("refsup", "", "refsup binary: time its checkpoint and restore against CRIU's on the same sessions")
	rounds := flag.Int("rounds", 5, "sessions to checkpoint and restore with --refsup")
	snapOnly := flag.Bool("snapshot-only", false, "time the snapshot alone (against the shell, and against the host's process count), with no rows")
	rowsOnly := flag.Bool("rows-only", false, "only the harness's share of the rows given (no root, nothing timed)")
	reportsOnly := flag.Bool("reports", false, "time the replay and the report of results/ alone (no root, no rows of a run)")
	base := flag.String("base", "", "faultwin binary of the base commit, timed beside --faultwin's in the replay and report")
	flag.Parse()
	if *rowsOnly {
		harness(flag.Args())
		return
	}
	if *reportsOnly {
		reportsBench(*faultwin, *base, 3)
		return
	}
	if *snapOnly {
		snapshotRatio(*stateRoot, *n)
		snapshotWithRecord(*stateRoot, *n)
		snapshotSlope(*stateRoot, *n, []int{500, 2000})
		return
	}
	if flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: bench [flags] ROWS.jsonl... (rows of one windows run per driver)")
		os.Exit(64)
	}
	fmt.Printf("bench on %s, %d cores, at %s\n\n", hostname(), numCPU(), time.Now().UTC().Format(time.RFC3339))
	snapshotRatio(*stateRoot, *n)
	snapshotWithRecord(*stateRoot, *n)
	snapshotSlope(*stateRoot, *n, []int{500, 2000})
	if *refsup != "" {
		refsupVsCRIU(*refsup, *stateRoot, *rounds)
	}
	harness(flag.Args())
	replay(*faultwin)
	reportsBench(*faultwin, *base, 3)
}

func snapshotRatio(stateRoot string, n int) {
	roots := snapshots.DefaultRoots(stateRoot)
	ctx := context.Background()
	var caps []time.Duration
	for i := 0; i < n; i++ {
		t0 := time.Now()
		if _, err := host.Capture(ctx, "bench", roots, snapshots.Decoys{}); err != nil {
			fmt.Printf("snapshot: %v\n", err)
			return
		}
		caps = append(caps, time.Since(t0))
	}
	var shells []time.Duration
	for i := 0; i < 5; i++ {
		t0 := time.Now()
		if out, err := exec.Command("/bin/bash", "-c", shellEquivalent).CombinedOutput(); err != nil {
			fmt.Printf("shell equivalent: %v: %s\n", err, out)
			return
		}
		shells = append(shells, time.Since(t0))
	}
	c, s := median(caps), median(shells)
	fmt.Printf("snapshot: median %s, p90 %s over %d; shell equivalent: median %s over 5; the snapshot is %.0fx faster (goal: 3 ms, 300x)\n\n",
		ms(c), ms(p90(caps)), n, ms(s), float64(s)/float64(c))
}

// snapshotWithRecord times the snapshot with and without a tie record
// naming a mount and a namespace no process holds, side by side: with one,
// every descriptor, cwd and root of every process is statx'ed for its mount
// id and every process's namespaces of the recorded kinds are read (what a
// window pays between its death and its check after).
func snapshotWithRecord(stateRoot string, n int) {
	dir, err := os.MkdirTemp("", "bench-ties")
	if err != nil {
		fmt.Printf("snapshot with a record: %v\n", err)
		return
	}
	defer os.RemoveAll(dir)
	rec := `{"run":"rbench","ns":[{"kind":"net","ino":1,"id":1},{"kind":"ipc","ino":1,"id":1}],"mounts":[{"id":1,"dev":"0:1","mount_point":"/nonexistent"}]}`
	if err := os.WriteFile(dir+"/rbench.json", []byte(rec), 0o600); err != nil {
		fmt.Printf("snapshot with a record: %v\n", err)
		return
	}
	without := snapshots.DefaultRoots(stateRoot)
	without.Records = ""
	with := without
	with.Records = dir
	ctx := context.Background()
	var a, b []time.Duration
	for i := 0; i < n; i++ {
		for _, c := range []struct {
			roots snapshots.Roots
			into  *[]time.Duration
		}{{without, &a}, {with, &b}} {
			t0 := time.Now()
			if _, err := host.Capture(ctx, "bench", c.roots, snapshots.Decoys{}); err != nil {
				fmt.Printf("snapshot with a record: %v\n", err)
				return
			}
			*c.into = append(*c.into, time.Since(t0))
		}
	}
	fmt.Printf("snapshot with a tie record: median %s against %s without, %.2fx, over %d each, interleaved, at %d processes\n\n",
		ms(median(b)), ms(median(a)), float64(median(b))/float64(median(a)), n, countProcs())
}

// snapshotSlope times the snapshot with idle processes added to the host
// (plain sleeps, in one process group killed afterwards), so the docs can
// say what a snapshot costs on a busier CI host: the median at each
// process count and the least-squares slope per process.
func snapshotSlope(stateRoot string, n int, extras []int) {
	roots := snapshots.DefaultRoots(stateRoot)
	ctx := context.Background()
	type point struct {
		procs int
		med   time.Duration
	}
	var pts []point
	measure := func() error {
		var caps []time.Duration
		for i := 0; i < n; i++ {
			t0 := time.Now()
			if _, err := host.Capture(ctx, "bench", roots, snapshots.Decoys{}); err != nil {
				return err
			}
			caps = append(caps, time.Since(t0))
		}
		pts = append(pts, point{countProcs(), median(caps)})
		return nil
	}
	if err := measure(); err != nil {
		fmt.Printf("snapshot slope: %v\n", err)
		return
	}
	for _, extra := range extras {
		idle := exec.Command("/bin/sh", "-c", fmt.Sprintf("i=0; while [ $i -lt %d ]; do sleep 600 & i=$((i+1)); done; wait", extra))
		idle.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if err := idle.Start(); err != nil {
			fmt.Printf("snapshot slope: %v\n", err)
			return
		}
		for deadline := time.Now().Add(30 * time.Second); countProcs() < pts[0].procs+extra && time.Now().Before(deadline); {
			time.Sleep(100 * time.Millisecond)
		}
		err := measure()
		_ = syscall.Kill(-idle.Process.Pid, syscall.SIGKILL)
		_ = idle.Wait()
		if err != nil {
			fmt.Printf("snapshot slope: %v\n", err)
			return
		}
	}
	// least squares of median ms on process count
	var sx, sy, sxx, sxy float64
	for _, p := range pts {
		x, y := float64(p.procs), float64(p.med.Microseconds())
		sx, sy, sxx, sxy = sx+x, sy+y, sxx+x*x, sxy+x*y
	}
	k := float64(len(pts))
	slope := (k*sxy - sx*sy) / (k*sxx - sx*sx)
	var parts []string
	for _, p := range pts {
		parts = append(parts, fmt.Sprintf("%d processes %s", p.procs, ms(p.med)))
	}
	fmt.Printf("snapshot against host processes: %s; slope %.1f µs a process (median of %d each)\n\n", strings.Join(parts, ", "), slope, n)
}

// countProcs counts the processes on the host.
func countProcs() int {
	ents, _ := os.ReadDir("/proc")
	n := 0
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err == nil {
			n++
		}
	}
	return n
}

func harness(files []string) {
	fmt.Println("per driver, from the rows given: windows, pass time, the supervisor's steps, the harness's share")
	for _, f := range files {
		rs, err := rows.Read(f)
		if err != nil {
			fmt.Printf("  %s: %v\n", f, err)
			continue
		}
		type tot struct{ n, all, sup, calls, after, identity float64 }
		by := map[string]*tot{}
		for _, r := range rs {
			if r.Window.ID == "" {
				continue // a seal
			}
			t := by[r.Driver]
			if t == nil {
				t = &tot{}
				by[r.Driver] = t
			}
			t.n++
			for step, v := range r.Durations {
				t.all += v
				if slices.Contains(supervisorSteps, step) {
					t.sup += v
				}
			}
			var in struct {
				Aftermath *model.Aftermath `json:"aftermath"`
			}
			if json.Unmarshal(r.Input, &in) == nil && in.Aftermath != nil {
				a := in.Aftermath
				t.after += r.Durations["aftermath"]
				for _, c := range a.Calls {
					t.calls += c.MS
				}
			}
			t.identity += r.Durations["identity_before"]
		}
		for _, d := range sortedKeys(by) {
			t := by[d]
			fmt.Printf("  %-10s %3.0f windows (%s): pass %.1f s, supervisor steps %.1f s (pass/steps %.2fx), harness share %.1f%% (goal: 5%%)\n",
				d, t.n, filepath.Base(f), t.all/1000, t.sup/1000, t.all/t.sup, 100*(t.all-t.sup)/t.all)
			if t.after > 0 {
				fmt.Printf("  %-10s user's recovery: %.0f ms a window, its calls %.0f ms (recovery/calls %.2fx)\n", "", t.after/t.n, t.calls/t.n, t.after/t.calls)
			}
			// Stricter: the user's recovery counts only its calls, and the
			// identity reads (a wait for the counter) are evidence waits.
			waits := t.after - t.calls + t.identity
			fmt.Printf("  %-10s outside the supervisor's calls, the kill and the sweeps: %.1f%% (goal: 10%%): the harness's steps %.1f s, its evidence waits %.1f s (the recovery's %.1f s, identity reads %.1f s)\n",
				"", 100*(t.all-t.sup+waits)/t.all, (t.all-t.sup)/1000, waits/1000, (t.after-t.calls)/1000, t.identity/1000)
		}
	}
	fmt.Println()
}

var replayLine = regexp.MustCompile(`replay: (\d+) files?, (\d+) rows`)

func replay(bin string) {
	var files []string
	var size int64
	_ = filepath.Walk("results", func(p string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() && (strings.HasSuffix(p, ".jsonl") || strings.HasSuffix(p, ".jsonl.gz")) && !strings.Contains(p, "/logs/") {
			files = append(files, p)
			size += info.Size()
		}
		return nil
	})
	t0 := time.Now()
	out, err := exec.Command(bin, append([]string{"replay"}, files...)...).CombinedOutput()
	d := time.Since(t0)
	m := replayLine.FindSubmatch(out)
	if err != nil || m == nil {
		fmt.Printf("replay: %v: %s\n", err, lastLine(string(out)))
		return
	}
	nrows, _ := strconv.Atoi(string(m[2]))
	fmt.Printf("replay of results/: %s files, %d rows, %.1f MB on disk in %s: %.0f rows/s, %.1f MB/s\n",
		m[1], nrows, float64(size)/1e6, d.Round(time.Millisecond), float64(nrows)/d.Seconds(), float64(size)/1e6/d.Seconds())
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

func p90(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)*9/10]
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d.Microseconds())/1000) }

func sortedKeys[V any](m map[string]V) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

func lastLine(s string) string {
	l := strings.Split(strings.TrimSpace(s), "\n")
	return l[len(l)-1]
}

func hostname() string { h, _ := os.Hostname(); return h }

func numCPU() int {
	b, _ := os.ReadFile("/proc/cpuinfo")
	return strings.Count(string(b), "processor\t:")
}
