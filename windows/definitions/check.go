package definitions

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"faultwin/internal/model"
)

// crossCheck applies the rules that tie fields together. It runs only on a
// family whose fields each parsed, so every value here is known to be valid.
func crossCheck(p *problems, f *family, fields fieldNodes) {
	f.resolveCriteria(p)
	pt, _ := f.spec.Point(f.Point)
	line := func(name string) int {
		if n := fields[name]; n != nil {
			return n.Line
		}
		return f.line
	}
	if pt.Operation != f.Operation {
		p.addf(line("point"), "point", fmt.Sprintf("use a %s.* point or operation: %s", f.Operation, pt.Operation),
			"%s is passed by operation %s, not %s", f.Point, pt.Operation, f.Operation)
	}
	switch {
	case pt.Timed && len(f.Delays) == 0:
		p.addf(line("point"), "delays_ms", "add delays_ms: [30, 80, ...]", "%s is a timed point and needs delays", f.Point)
	case !pt.Timed && len(f.Delays) > 0:
		p.addf(line("delays_ms"), "delays_ms", "remove delays_ms or use a timed point ("+pointsWhere(f.spec, func(p model.Point) bool { return p.Timed })+")", "%s is not a timed point", f.Point)
	}
	if (f.Kill == model.KillCRIUFirst || f.Kill == model.KillCRIUHeld) && !pt.CRIU {
		p.addf(line("kill"), "kill", "use kill: supervisor, or a point where CRIU runs ("+pointsWhere(f.spec, func(p model.Point) bool { return p.CRIU })+")", "CRIU is not running at %s, so it cannot be killed first or held", f.Point)
	}
	phases := f.spec.Phases[f.Operation]
	switch {
	case pt.Phase == model.AnyPhase && f.LandsIn == "":
		p.addf(line("point"), "lands_in", "add lands_in: <phase> (one of "+strings.Join(phases, ", ")+")", "%s kills in the phase the window names, and this window names none", f.Point)
	case pt.External() && !pt.Timed && len(phases) > 0 && f.LandsIn == "":
		// Killed at an event (a role appears, a phase is entered), the
		// window lands where that event is, on any machine: it says so.
		// A timed point lands wherever this machine's speed puts its
		// delay; its window may name a phase per delay, and need not.
		p.addf(line("point"), "lands_in", "add lands_in: <phase> (one of "+strings.Join(phases, ", ")+"): the phase the window's rows show it really hits (faultwin rows --brief)",
			"%s kills at an event of the operation, and a window on it must say in which phase that lands", f.Point)
	}
	phaseOK := func(phase string, at int, field string) {
		switch {
		case !pt.External():
			p.addf(at, field, "remove lands_in: the supervisor's own trace says where its compiled-in points land", "%s is not an external point", f.Point)
		case !slices.Contains(phases, phase):
			fix := "declare the operation's phases in the supervisor's description"
			if len(phases) > 0 {
				fix = "use one of " + strings.Join(phases, ", ")
			}
			p.addf(at, field, fix, "%s observes no phase %q of %s", f.Driver, phase, f.Operation)
		case pt.Earliest != "" && slices.Index(phases, phase) < slices.Index(phases, pt.Earliest):
			// The kill follows the watched event, which enters Earliest:
			// it cannot land before it.
			p.addf(at, field, "use "+pt.Earliest+" or a later phase, or a point watching an earlier event",
				"%q is before %s, the phase %s has entered when it kills (%s)", phase, pt.Earliest, f.Point, watchSays(pt))
		}
	}
	if f.LandsIn != "" {
		phaseOK(f.LandsIn, line("lands_in"), "lands_in")
	}
	if len(f.LandsAt) > 0 {
		if !pt.Timed || pt.Phase == model.AnyPhase {
			p.addf(line("lands_in"), "lands_in", "give one phase: lands_in: <phase>", "lands_in per delay is for a timed point, and %s kills in one phase", f.Point)
		}
		for _, d := range slices.Sorted(maps.Keys(f.LandsAt)) {
			if !slices.Contains(f.Delays, d) {
				p.addf(line("lands_in"), "lands_in."+strconv.Itoa(d), "remove it, or add the delay to delays_ms", "delay %d ms is not in delays_ms", d)
				continue
			}
			phaseOK(f.LandsAt[d], line("lands_in"), "lands_in."+strconv.Itoa(d))
		}
	}
	checkRecovery(p, f, line)
	if pt.FailRestore != f.Pre.FailRestore {
		if pt.FailRestore {
			p.addf(line("precondition"), "precondition.fail_restore", "set fail_restore: true", "%s is reached only by a restore made to fail", f.Point)
		} else {
			p.addf(line("precondition"), "precondition.fail_restore", "remove fail_restore or use point restore.failed_teardown", "a restore made to fail never reaches %s", f.Point)
		}
	}
	if f.spec.Precondition != nil {
		if msg, fix := f.spec.Precondition(f.Operation, f.Pre); msg != "" {
			p.add(line("precondition"), "precondition", msg, fix)
		}
	}
	for _, c := range []string{model.O1, model.P4} {
		if slices.Contains(f.Criteria, c) && !f.spec.Ledger {
			p.addf(line("criteria"), "criteria", "remove "+c, "%s judges the ledger of mounts a run keeps, and %s keeps none faultwin reads: it could never be judged", c, f.Driver)
		}
	}
	if !slices.Contains(f.Criteria, model.F1) {
		p.add(line("criteria"), "criteria", "F1 is missing: without it a window whose fault never fired could pass", "add F1")
	}
}

func pointsWhere(spec model.DriverSpec, keep func(model.Point) bool) string {
	var out []string
	for _, name := range windowPoints(spec) {
		if pt, _ := spec.Point(name); keep(pt) {
			out = append(out, name)
		}
	}
	return strings.Join(out, ", ")
}

// checkRecovery ties the recovery parts together: R1..R4 judge what only a
// restarted supervisor's settle records, and a second death is a point of
// that settle.
func checkRecovery(p *problems, f *family, line func(string) int) {
	rec := model.IsRecovery(f.Operation)
	for _, c := range f.Criteria {
		if strings.HasPrefix(c, "R") && !rec {
			p.addf(line("criteria"), "criteria", "remove "+c+", or use operation hibernate or save", "%s judges a settle, and operation %s has none", c, f.Operation)
			return
		}
	}
	if f.SecondDeath == "" {
		return
	}
	if !rec {
		p.addf(line("second_death"), "second_death", "remove it, or use operation hibernate or save", "operation %s has no settle to die in", f.Operation)
		return
	}
	if pt, ok := f.spec.Point(f.SecondDeath); !ok || pt.Operation != "settle" {
		p.addf(line("second_death"), "second_death", "use one of "+strings.Join(settlePoints(f.spec), ", "), "%s is not a settle point of %s", f.SecondDeath, f.Driver)
	}
}

func settlePoints(spec model.DriverSpec) []string {
	var out []string
	for _, pt := range spec.Points {
		if pt.Operation == "settle" {
			out = append(out, pt.Name)
		}
	}
	return out
}

// watchSays is what starts a point's clock, in words.
func watchSays(pt model.Point) string {
	if pt.Watch == model.PhaseWatch {
		return "it watches phase " + pt.Phase
	}
	return "it watches role " + pt.Watch + ", whose appearance enters " + pt.Earliest
}
