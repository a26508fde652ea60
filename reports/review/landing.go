package review

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"faultwin/criteria"
	"faultwin/internal/model"
	"faultwin/reports/decoded"
)

// A timed kill from outside lands wherever the target happens to be, and
// that decides what it leaves: the same window kills podman before its
// network setup in one run and after runc started the container in the
// next. The external trigger records the run's processes present at the
// kill, so the rows themselves say where each kill landed; grouping a
// window's rows by that state shows which state leads to which verdict.

// Landing is one externally triggered window's rows grouped by the state
// its kills found.
type Landing struct {
	Window string
	Rows   int
	States []LandingState // most rows first
}

// LandingState is one state a kill found: the comms of the run's processes
// present at the kill, and the outcomes of the rows that found it.
type LandingState struct {
	Present  string         // "conmon ×2, podman, runc"; NoPresent when unrecorded
	Rows     int            // rows that found this state
	Outcomes map[string]int // outcome ("PASS", "FAIL P2 P3", "INVALID F1") -> rows
}

// NoPresent names the state of a row whose trigger fired but recorded no
// process list, or did not fire.
const NoPresent = "(not recorded)"

// Landings groups the rows of every window killed by an external trigger
// (its death names victims, or its trigger never fired) by the state at
// the kill, windows in natural order. Rows whose input does not decode are
// returned as errors and left out.
func Landings(rs []decoded.Record) ([]Landing, []error) {
	byWindow := map[string]*Landing{}
	var errs []error
	for i, r := range rs {
		present, external, err := presentAtKill(r)
		if err != nil {
			errs = append(errs, fmt.Errorf("row %d (%s): %w", i+1, r.Window.ID, err))
			continue
		}
		if !external {
			continue
		}
		l := byWindow[r.Window.ID]
		if l == nil {
			l = &Landing{Window: r.Window.ID}
			byWindow[r.Window.ID] = l
		}
		l.Rows++
		at := slices.IndexFunc(l.States, func(s LandingState) bool { return s.Present == present })
		if at < 0 {
			l.States = append(l.States, LandingState{Present: present, Outcomes: map[string]int{}})
			at = len(l.States) - 1
		}
		l.States[at].Rows++
		l.States[at].Outcomes[RowOutcome(r).String()]++
	}
	out := make([]Landing, 0, len(byWindow))
	for _, l := range byWindow {
		sort.SliceStable(l.States, func(i, j int) bool {
			if l.States[i].Rows != l.States[j].Rows {
				return l.States[i].Rows > l.States[j].Rows
			}
			return l.States[i].Present < l.States[j].Present
		})
		out = append(out, *l)
	}
	sort.Slice(out, func(i, j int) bool { return model.CompareIDs(out[i].Window, out[j].Window) < 0 })
	return out, errs
}

// RowOutcome is a recorded row's outcome: its status, then the criteria
// that did not hold (for INVALID, only F1 and PRE).
func RowOutcome(r decoded.Record) model.Outcome {
	return criteria.Verdict{Status: r.Status, Results: r.Results}.Outcome()
}

// presentAtKill reads, from the fired trace point of an external trigger,
// the comms of the run's processes present at the kill: "comm ×n" sorted by
// comm. external is false for a row killed at a point the supervisor armed.
func presentAtKill(r decoded.Record) (present string, external bool, err error) {
	in := r.Parts
	if in == nil {
		return "", false, fmt.Errorf("decoding input: %w", r.InputErr)
	}
	external = len(in.Death.Victims) > 0
	for _, tp := range in.Trace {
		if model.NotFired(tp.Note) && tp.Point == r.Window.Fault.Point {
			external = true
		}
		if !tp.Fired {
			continue
		}
		if procs, ok := model.Present(tp.Note); ok {
			return comms(procs), external, nil
		}
	}
	return NoPresent, external, nil
}

// comms turns "podman 12", "conmon 14", "conmon 15" into "conmon ×2, podman".
func comms(procs []string) string {
	n := map[string]int{}
	for _, p := range procs {
		if f := strings.Fields(p); len(f) > 0 {
			n[strings.Join(f[:len(f)-1], " ")]++
		}
	}
	if len(n) == 0 {
		return "none"
	}
	names := slices.Sorted(maps.Keys(n))
	for i, c := range names {
		if n[c] > 1 {
			names[i] = fmt.Sprintf("%s ×%d", c, n[c])
		}
	}
	return strings.Join(names, ", ")
}
