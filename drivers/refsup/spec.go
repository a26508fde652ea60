package refsup

import (
	"slices"

	"faultwin/fixtures/refsup/faults"
	"faultwin/internal/model"
)

// Name is the driver's name in window definitions and rows.
const Name = "refsup"

// operations are the refsup operations a window can interrupt, in the
// order the driver's Trigger knows them.
var operations = []string{"restore", "checkpoint", "destroy", "sweep", "idle", model.OpHibernate, model.OpSave}

// StateEntries are where refsup keeps its sessions' and checkpoints'
// state, and its restore locks: the sweep removes them all.
var StateEntries = []string{"{state}/sessions/*", "{state}/checkpoints/*", "{state}/locks/*"}

// Spec publishes refsup's fault points, read from the table the supervisor
// compiles in (fixtures/refsup/faults), so a point exists for the loader
// exactly when the binary can fire it.
func Spec() model.DriverSpec {
	pts := make([]model.Point, 0, len(faults.Points))
	for _, p := range faults.Points {
		// settle points are where a recovery window kills the restarted
		// supervisor again (second_death), never a window's own point
		if !slices.Contains(operations, p.Operation()) && p.Operation() != "settle" {
			continue
		}
		pts = append(pts, model.Point{Name: p.Name, Operation: p.Operation(), Timed: p.Timed,
			CRIU: p.CRIU, FailRestore: p.FailRestore, Desc: p.Desc})
	}
	pts = append(pts, externalPoints...)
	return model.DriverSpec{Name: Name, Operations: slices.Clone(operations), Points: pts, Precondition: precondition,
		Names: model.HostNames{State: StateEntries}, Ledger: true}
}

// precondition says what an operation needs that pre lacks: the armed
// operation must have something to act on, or the window proves nothing.
func precondition(op string, pre model.Precondition) (string, string) {
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
	case model.OpHibernate, model.OpSave:
		if pre.Cold < 2 || pre.Restored > 0 || pre.Checkpoint {
			return "a capture window needs the captured cold session and one more, whose calls must not wait for the settle (R4), and no restored session or checkpoint", "set cold: 2 (display: true optional)"
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
