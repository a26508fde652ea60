package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"
)

// cost is what one run of a verb took: wall clock, CPU (user and
// system), peak resident memory, and the bytes it wrote (the page).
type cost struct {
	wall, cpu time.Duration
	rssKiB    int64
	bytes     int64
}

// medianCost is the median of each figure of cs on its own.
func medianCost(cs []cost) cost {
	pick := func(f func(cost) int64) int64 {
		v := make([]int64, len(cs))
		for i, c := range cs {
			v[i] = f(c)
		}
		slices.Sort(v)
		return v[len(v)/2]
	}
	return cost{
		wall:   time.Duration(pick(func(c cost) int64 { return int64(c.wall) })),
		cpu:    time.Duration(pick(func(c cost) int64 { return int64(c.cpu) })),
		rssKiB: pick(func(c cost) int64 { return c.rssKiB }),
		bytes:  pick(func(c cost) int64 { return c.bytes }),
	}
}

// costLine renders a verb's median figures, and their ratio to old's
// when old ran beside it: "replay  new 1.23 s wall, 2.10 s CPU, 150 MiB |
// old 3.60 s, 6.02 s, 240 MiB | new/old 0.34, 0.35, 0.63".
func costLine(verb string, nw cost, old *cost) string {
	fig := func(c cost) string {
		s := fmt.Sprintf("%.2f s wall, %.2f s CPU, %d MiB peak RSS", c.wall.Seconds(), c.cpu.Seconds(), c.rssKiB>>10)
		if c.bytes > 0 {
			s += fmt.Sprintf(", %d bytes", c.bytes)
		}
		return s
	}
	line := fmt.Sprintf("%-7s this build: %s", verb, fig(nw))
	if old == nil {
		return line
	}
	ratio := func(a, b float64) string {
		if b == 0 {
			return "-"
		}
		return fmt.Sprintf("%.2f", a/b)
	}
	line += fmt.Sprintf("\n%-7s base:       %s\n%-7s this/base:  wall %s, CPU %s, RSS %s", verb, fig(*old), "",
		ratio(nw.wall.Seconds(), old.wall.Seconds()), ratio(nw.cpu.Seconds(), old.cpu.Seconds()), ratio(float64(nw.rssKiB), float64(old.rssKiB)))
	if nw.bytes > 0 {
		line += ", bytes " + ratio(float64(nw.bytes), float64(old.bytes))
	}
	return line
}

// measure runs bin with args, and out (when set) is the file whose size
// counts. A verb's own exit status is the caller's to judge (statusOK).
func measure(bin string, args []string, out string, statusOK func(int) bool) (cost, error) {
	cmd := exec.Command(bin, args...)
	t0 := time.Now()
	b, err := cmd.CombinedOutput()
	wall := time.Since(t0)
	st := cmd.ProcessState
	if st == nil {
		return cost{}, err
	}
	if !statusOK(st.ExitCode()) {
		return cost{}, fmt.Errorf("%s %s: exit %d: %s", bin, strings.Join(args, " "), st.ExitCode(), lastLine(string(b)))
	}
	c := cost{wall: wall, cpu: st.UserTime() + st.SystemTime()}
	if ru, ok := st.SysUsage().(*syscall.Rusage); ok {
		c.rssKiB = ru.Maxrss
	}
	if out != "" {
		fi, err := os.Stat(out)
		if err != nil {
			return cost{}, err
		}
		c.bytes = fi.Size()
	}
	return c, nil
}

// reportsBench times `faultwin replay results/` and `faultwin report
// results/` (the HTML page) rounds times, each round this build and, when
// base is set, the base build beside it in alternating order, so the load
// of the machine falls on both alike; it prints the medians and ratios.
func reportsBench(bin, base string, rounds int) {
	bins := []string{bin}
	if base != "" {
		bins = append(bins, base)
	}
	dir, err := os.MkdirTemp("", "bench-report-")
	if err != nil {
		fmt.Printf("replay and report: %v\n", err)
		return
	}
	defer os.RemoveAll(dir)
	load0, _ := os.ReadFile("/proc/loadavg")
	costs := map[string][]cost{}
	for r := 0; r < rounds; r++ {
		order := slices.Clone(bins)
		if r%2 == 1 {
			slices.Reverse(order)
		}
		for _, b := range order {
			rc, err := measure(b, []string{"replay", "results/"}, "", func(s int) bool { return s == 0 })
			if err != nil {
				fmt.Printf("replay: %v\n", err)
				return
			}
			page := filepath.Join(dir, "report.html")
			// the report exits 1 when rows FAIL: the page is written all the same
			pc, err := measure(b, []string{"report", "--format", "html", "--out", page, "results/"}, page, func(s int) bool { return s <= 1 })
			if err != nil {
				fmt.Printf("report: %v\n", err)
				return
			}
			costs["replay "+b] = append(costs["replay "+b], rc)
			costs["report "+b] = append(costs["report "+b], pc)
		}
	}
	load1, _ := os.ReadFile("/proc/loadavg")
	fmt.Printf("replay and report of results/, medians of %d alternated runs (load %s to %s):\n", rounds,
		strings.Join(strings.Fields(string(load0))[:3], " "), strings.Join(strings.Fields(string(load1))[:3], " "))
	for _, verb := range []string{"replay", "report"} {
		nw := medianCost(costs[verb+" "+bin])
		var old *cost
		if base != "" {
			o := medianCost(costs[verb+" "+base])
			old = &o
		}
		fmt.Println(costLine(verb, nw, old))
	}
	fmt.Println()
}
