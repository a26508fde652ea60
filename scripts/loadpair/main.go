// Command loadpair sets two passes of the same windows side by side, one
// on a quiet host and one with busy loops beside it (make bench runs both,
// the second under scripts/busy.sh), and prints each window's verdict in
// both. It exits 1 when a verdict differs other than by an INVALID the
// load explains (U1 not judged: the workload was starved of CPU while its
// progress was awaited), and prints what the waits for the workloads'
// progress took in each pass: a verdict must not move with a neighbour's
// CPU load.
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"

	"faultwin/internal/model"
	"faultwin/reports/rows"
)

// Verdict is one window's outcome as the comparison reads it.
type Verdict struct {
	Status string
	Reason string
}

// Text is the verdict in a cell: a FAIL with the criteria it failed.
func (v Verdict) Text() string {
	switch v.Status {
	case "":
		return "(not run)"
	case model.StatusFail:
		return v.Status + " " + strings.TrimSuffix(v.Reason, " false")
	}
	return v.Status
}

// Starved reports whether an INVALID is the load's doing: a workload got
// no CPU while its progress was awaited.
func (v Verdict) Starved() bool {
	return v.Status == model.StatusInvalid && strings.Contains(v.Reason, "starved: ")
}

// Same reports whether two verdicts agree: the same status and, for a FAIL,
// the same criteria false (an INVALID's or ERROR's reason holds times and
// pids that differ from run to run).
func Same(a, b Verdict) bool {
	return a.Status == b.Status && (a.Status != model.StatusFail || a.Reason == b.Reason)
}

// Line is one window in both passes.
type Line struct {
	Window        string
	Quiet, Loaded Verdict
	// Note is "" when they agree, else "load-attributed INVALID" or "differs".
	Note string
}

// Compare sets the verdicts by window side by side, every row of the
// loaded pass against the quiet pass's row of its window (each pass may
// hold several rows of a window: a soak), and says how many differ other
// than by a load-attributed INVALID.
func Compare(quiet, loaded map[string][]Verdict) ([]Line, int) {
	var ids []string
	for id := range quiet {
		ids = append(ids, id)
	}
	for id := range loaded {
		if _, ok := quiet[id]; !ok {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	var out []Line
	differ := 0
	for _, id := range ids {
		var q Verdict
		if len(quiet[id]) > 0 {
			q = quiet[id][0]
		}
		ls := loaded[id]
		if len(ls) == 0 {
			ls = []Verdict{{}}
		}
		for _, lv := range ls {
			l := Line{Window: id, Quiet: q, Loaded: lv}
			switch {
			case Same(l.Quiet, l.Loaded):
			case l.Quiet.Starved() || l.Loaded.Starved():
				l.Note = "load-attributed INVALID"
			default:
				l.Note, differ = "differs", differ+1
			}
			out = append(out, l)
		}
	}
	return out, differ
}

// waits are the recorded waits for the workloads' progress of one pass.
type waits struct {
	n, moved             int
	waited, cpu, queued  []float64
	maxLoad, maxRunnable string
	runnable             int
}

func (w waits) text() string {
	if w.n == 0 {
		return "no progress wait recorded (rows from before the wait?)"
	}
	return fmt.Sprintf("%d waits, %d saw the counter move: waited median %.0f ms, max %.0f ms; CPU median %.0f ms; run queue median %.0f ms, max %.0f ms; most runnable %d (load %s)",
		w.n, w.moved, median(w.waited), slices.Max(w.waited), median(w.cpu), median(w.queued), maxOr0(w.queued), w.runnable, w.maxLoad)
}

func read(path string) (map[string][]Verdict, waits, error) {
	rs, err := rows.Read(path)
	if err != nil {
		return nil, waits{}, err
	}
	out := map[string][]Verdict{}
	var ws waits
	for _, r := range rs {
		if r.Window.ID == "" {
			continue // a seal
		}
		out[r.Window.ID] = append(out[r.Window.ID], Verdict{Status: r.Status, Reason: r.Reason})
		var in struct {
			Aftermath *model.Aftermath `json:"aftermath"`
		}
		if json.Unmarshal(r.Input, &in) != nil || in.Aftermath == nil {
			continue
		}
		after := slices.Clone(in.Aftermath.After)
		for _, rs := range in.Aftermath.Rescues {
			after = append(after, rs.After)
		}
		for _, w := range after {
			p := w.Progress
			if p == nil {
				continue
			}
			ws.n++
			if w.Running() {
				ws.moved++
			}
			ws.waited, ws.cpu = append(ws.waited, p.WaitedMS), append(ws.cpu, p.CPUMS)
			if p.QueuedMS != nil {
				ws.queued = append(ws.queued, *p.QueuedMS)
			}
			if p.Runnable >= ws.runnable {
				ws.runnable, ws.maxLoad = p.Runnable, p.Load
			}
		}
	}
	return out, ws, nil
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}

func maxOr0(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	return slices.Max(xs)
}

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: loadpair QUIET.jsonl LOADED.jsonl (rows of one pass each of the same windows)")
		os.Exit(64)
	}
	quiet, qw, err := read(os.Args[1])
	if err != nil {
		fmt.Fprintf(os.Stderr, "loadpair: the quiet pass: %v\n", err)
		os.Exit(2)
	}
	loaded, lw, err := read(os.Args[2])
	if err != nil {
		fmt.Fprintf(os.Stderr, "loadpair: the loaded pass: %v\n", err)
		os.Exit(2)
	}
	lines, differ := Compare(quiet, loaded)
	fmt.Printf("verdicts quiet and with busy loops beside (%s, %s)\n", os.Args[1], os.Args[2])
	fmt.Printf("  %-12s %-22s %-22s %s\n", "window", "quiet", "loaded", "")
	starved := 0
	for _, l := range lines {
		fmt.Printf("  %-12s %-22s %-22s %s\n", l.Window, l.Quiet.Text(), l.Loaded.Text(), l.Note)
		if l.Note == "load-attributed INVALID" {
			starved++
			fmt.Printf("  %-12s   %s\n", "", firstNonEmpty(starvedReason(l.Loaded), starvedReason(l.Quiet)))
		}
	}
	fmt.Printf("  quiet:  %s\n  loaded: %s\n", qw.text(), lw.text())
	fmt.Printf("%d loaded rows: %d agree with the quiet pass, %d load-attributed INVALID, %d differ\n", len(lines), len(lines)-starved-differ, starved, differ)
	if differ > 0 {
		fmt.Println("loadpair: a verdict moved with the host's load")
		os.Exit(1)
	}
}

func starvedReason(v Verdict) string {
	if !v.Starved() {
		return ""
	}
	return v.Reason
}

func firstNonEmpty(s ...string) string {
	for _, x := range s {
		if x != "" {
			return x
		}
	}
	return ""
}
