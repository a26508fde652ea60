package definitions

import (
	"strings"
	"testing"
	"testing/fstest"

	"faultwin/internal/model"
)

// phased is a supervisor described as data with two phases of restore: a
// point aimed at the phase a window names, and one that watches a role.
var phased = model.DriverSpec{
	Name: "phased", Operations: []string{"restore"},
	Phases: map[string][]string{"restore": {"prepare", "criu_restoring"}},
	Points: []model.Point{
		{Name: "restore.podman_in_phase", Operation: "restore", Watch: model.PhaseWatch, Phase: model.AnyPhase, Kill: []string{"operation"}},
		{Name: "restore.op", Operation: "restore", Watch: model.WatchOperation, Kill: []string{"operation"}, Timed: true},
		{Name: "restore.op_at_criu", Operation: "restore", Watch: "criu", Kill: []string{"operation"}},
	},
}

func loadPhased(t *testing.T, point, extra string) ([]model.Window, error) {
	t.Helper()
	text := "id: PX\ndriver: phased\noperation: restore\npoint: " + point + "\n" + extra +
		"precondition: {cold: 1, checkpoint: true}\ncriteria: [F1, P1]\ndescription: a phased window\n"
	return LoadFS(fstest.MapFS{"windows/a.yaml": {Data: []byte(text)}}, "windows", append(testSpecs, phased))
}

func TestLandsIn(t *testing.T) {
	ws, err := loadPhased(t, "restore.podman_in_phase", "lands_in: criu_restoring\n")
	if err != nil || len(ws) != 1 || ws[0].Fault.LandsIn != "criu_restoring" {
		t.Fatalf("a window aimed at a declared phase: %+v, %v", ws, err)
	}
	if !strings.Contains(ws[0].Source, "lands_in: criu_restoring\n") {
		t.Errorf("lands_in is not in the canonical source, so changing it would keep the id:\n%s", ws[0].Source)
	}
	for _, c := range []struct{ name, point, extra, want string }{
		{"aimed point without lands_in", "restore.podman_in_phase", "",
			"lands_in: restore.podman_in_phase kills in the phase the window names, and this window names none"},
		{"undeclared phase", "restore.op", "delays_ms: [50]\nlands_in: tasks_restored\n",
			`lands_in: phased observes no phase "tasks_restored" of restore (use one of prepare, criu_restoring)`},
	} {
		_, err := loadPhased(t, c.point, c.extra)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", c.name, err, c.want)
		}
	}
	// A point compiled into the supervisor: its own trace says where it
	// landed, so a window may not name a phase for it.
	text := strings.Replace(valid, "criteria:", "lands_in: prepare\ncriteria:", 1)
	if _, err := loadOne(t, text); err == nil || !strings.Contains(err.Error(), "is not an external point") {
		t.Errorf("lands_in on refsup's compiled-in point: %v", err)
	}
}

// A window on an external point that kills at an event of the operation
// (a role appears) says in which phase that lands: the loader refuses one
// that does not, with file, line and field. A timed window lands wherever
// the machine's speed puts its delay and need not, but may name a phase
// per delay, each instance then carrying its own (or none). A phase for a
// delay the family does not have, an undeclared phase, or a map given to
// a point that kills in one phase is refused.
func TestLandsInRequiredAndPerDelay(t *testing.T) {
	_, err := loadPhased(t, "restore.op_at_criu", "")
	if err == nil || !strings.Contains(err.Error(), "windows/a.yaml:4: lands_in: restore.op_at_criu kills at an event of the operation, and a window on it must say in which phase that lands (add lands_in: <phase> (one of prepare, criu_restoring)") {
		t.Errorf("an event window without lands_in: %v", err)
	}
	if ws, err := loadPhased(t, "restore.op", "delays_ms: [50]\n"); err != nil || ws[0].Fault.LandsIn != "" {
		t.Errorf("a timed window without lands_in: %+v, %v", ws, err)
	}
	ws, err := loadPhased(t, "restore.op", "delays_ms: [50, 150, 300]\nlands_in: {150: criu_restoring, 50: prepare}\n")
	if err != nil || len(ws) != 3 || ws[0].Fault.LandsIn != "prepare" || ws[1].Fault.LandsIn != "criu_restoring" || ws[2].Fault.LandsIn != "" {
		t.Fatalf("lands_in per delay: %+v, %v", ws, err)
	}
	if !strings.Contains(ws[0].Source, "lands_in: {50: prepare, 150: criu_restoring}\n") {
		t.Errorf("lands_in per delay is not in the canonical source, in delay order:\n%s", ws[0].Source)
	}
	for _, c := range []struct{ name, point, extra, want string }{
		{"a phase for no delay", "restore.op", "delays_ms: [50]\nlands_in: {50: prepare, 80: prepare}\n",
			"windows/a.yaml:6: lands_in.80: delay 80 ms is not in delays_ms"},
		{"an undeclared phase per delay", "restore.op", "delays_ms: [50]\nlands_in: {50: nowhere}\n",
			`windows/a.yaml:6: lands_in.50: phased observes no phase "nowhere" of restore`},
		{"per delay on an aimed point", "restore.podman_in_phase", "lands_in: {50: prepare}\n",
			"lands_in per delay is for a timed point"},
		{"a delay that is no number", "restore.op", "delays_ms: [50]\nlands_in: {soon: prepare}\n",
			"windows/a.yaml:6: lands_in: must be an integer"},
	} {
		_, err := loadPhased(t, c.point, c.extra)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", c.name, err, c.want)
		}
	}
}

// O1 and P4 judge the ledger of mounts a run keeps; a supervisor described
// as data keeps none, so a window of it asking for them is refused rather
// than never judged.
func TestLedgerCriteriaNeedALedger(t *testing.T) {
	text := "id: PX\ndriver: phased\noperation: restore\npoint: restore.op_at_criu\nlands_in: criu_restoring\n" +
		"precondition: {cold: 1, checkpoint: true}\ncriteria: [F1, O1, P1, P4]\ndescription: a phased window\n"
	_, err := LoadFS(fstest.MapFS{"windows/a.yaml": {Data: []byte(text)}}, "windows", append(testSpecs, phased))
	for _, c := range []string{"O1", "P4"} {
		want := "windows/a.yaml:7: criteria: " + c + " judges the ledger of mounts a run keeps, and phased keeps none faultwin reads"
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s on a supervisor without a ledger: %v, want %q", c, err, want)
		}
	}
	if _, err := loadOne(t, strings.Replace(valid, "[F1, P1]", "[F1, O1, P1, P4]", 1)); err != nil {
		t.Errorf("O1 and P4 on refsup, which keeps a ledger: %v", err)
	}
}
