package def

import (
	"fmt"
	"slices"
	"strings"

	"faultwin/drivers"
)

// crossCheck applies the rules that tie fields together. It runs only on a
// family whose fields each parsed, so every value here is known to be valid.
func crossCheck(p *problems, f *family, fields fieldNodes) {
	pt := Points[f.Point]
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
		p.addf(line("delays_ms"), "delays_ms", "remove delays_ms or use a timed point ("+timedPoints()+")", "%s is not a timed point", f.Point)
	}
	if f.Kill == "criu_first" && !pt.CRIU {
		p.addf(line("kill"), "kill", "use kill: supervisor, or a point where CRIU runs ("+criuPoints()+")", "CRIU is not running at %s, so it cannot be killed first", f.Point)
	}
	if pt.FailRestore != f.Pre.FailRestore {
		if pt.FailRestore {
			p.addf(line("precondition"), "precondition.fail_restore", "set fail_restore: true", "%s is reached only by a restore made to fail", f.Point)
		} else {
			p.addf(line("precondition"), "precondition.fail_restore", "remove fail_restore or use point restore.failed_teardown", "a restore made to fail never reaches %s", f.Point)
		}
	}
	if msg, fix := preconditionProblem(f.Operation, f.Pre); msg != "" {
		p.add(line("precondition"), "precondition", msg, fix)
	}
	if !slices.Contains(f.Criteria, "F1") {
		p.add(line("criteria"), "criteria", "F1 is missing: without it a window whose fault never fired could pass", "add F1")
	}
}

// preconditionProblem says what an operation needs that pre lacks: the
// armed operation must have something to act on, or the window proves nothing.
func preconditionProblem(op string, pre drivers.Precondition) (string, string) {
	live := pre.Cold + pre.Restored
	switch op {
	case "restore":
		if pre.Cold < 1 || !pre.Checkpoint {
			return "a restore needs a cold session and a checkpoint of it to restore", "set cold: 1 and checkpoint: true"
		}
	case "checkpoint":
		if pre.Cold < 1 {
			return "a checkpoint needs a cold session to dump", "set cold: 1"
		}
	case "destroy":
		if live < 1 {
			return "a destroy needs a live session", "set cold: 1"
		}
	case "sweep":
		if pre.Cold < 1 || !pre.Checkpoint {
			return "a sweep window needs a live cold session and a checkpoint to clean up", "set cold: 1 and checkpoint: true"
		}
	case "idle":
		if live < 1 {
			return "an idle kill needs live sessions to orphan", "set cold or restored to at least 1"
		}
	}
	if pre.Restored > 0 && !pre.Checkpoint {
		return "restored sessions need a checkpoint to restore from", "set checkpoint: true"
	}
	if pre.Checkpoint && pre.Cold < 1 {
		return "a checkpoint is taken of a cold session", "set cold: 1"
	}
	return "", ""
}

func timedPoints() string { return pointsWhere(func(p Point) bool { return p.Timed }) }
func criuPoints() string  { return pointsWhere(func(p Point) bool { return p.CRIU }) }

func pointsWhere(keep func(Point) bool) string {
	var out []string
	for _, name := range PointNames() {
		if keep(Points[name]) {
			out = append(out, name)
		}
	}
	return strings.Join(out, ", ")
}
