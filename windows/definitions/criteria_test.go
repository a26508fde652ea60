package definitions

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"faultwin/internal/model"
)

const critDoc = "id: W1\noperation: %s\npoint: %s\nprecondition: {cold: %d, checkpoint: %t}\n%sdescription: d\n"

func parseOne(t *testing.T, specs []model.DriverSpec, op, point string, cold int, checkpoint bool, criteria string) (model.Window, error) {
	t.Helper()
	doc := fmt.Sprintf(critDoc, op, point, cold, checkpoint, criteria)
	ws, err := ParseFile("windows/a.yaml", []byte(doc), specs)
	if err != nil {
		return model.Window{}, err
	}
	return ws[0], nil
}

// A window that lists no criteria is judged by its supervisor's, a
// hibernate or save window by the settle's R1..R4 too; +X and -X change
// them; the whole list, as every window wrote it before, is kept as
// written and hashes as it did.
func TestCriteriaDefaultFromTheSupervisor(t *testing.T) {
	spec := testSpecs[0]
	general := spec.DefaultCriteria("restore")
	if want := []string{model.F1, model.O1, model.P1, model.P2, model.P3, model.P4, model.P5, model.P6, model.P7, model.H1, model.U1, model.U2, model.U3}; !slices.Equal(general, want) {
		t.Fatalf("refsup's criteria for restore %v, want %v", general, want)
	}
	w, err := parseOne(t, testSpecs, "restore", "restore.before_overlay", 1, true, "")
	if err != nil || !slices.Equal(w.Criteria, general) {
		t.Fatalf("no criteria: %v (%v), want %s's %v", w.Criteria, err, spec.Name, general)
	}
	full, err := parseOne(t, testSpecs, "restore", "restore.before_overlay", 1, true, "criteria: ["+strings.Join(general, ", ")+"]\n")
	if err != nil || full.Hash != w.Hash {
		t.Errorf("the same criteria written out hash %s (%v), left to the default %s", full.Hash, err, w.Hash)
	}
	w, err = parseOne(t, testSpecs, "hibernate", "hibernate.before_dump", 2, false, "")
	if err != nil || !slices.Contains(w.Criteria, model.R1) || !slices.Contains(w.Criteria, model.R4) {
		t.Errorf("hibernate: %v (%v), want R1..R4 among them", w.Criteria, err)
	}
	w, err = parseOne(t, testSpecs, "restore", "restore.before_overlay", 1, true, "criteria: [-U3, -H1]\n")
	if err != nil || slices.Contains(w.Criteria, model.U3) || slices.Contains(w.Criteria, model.H1) || len(w.Criteria) != len(general)-2 {
		t.Errorf("-U3 -H1: %v (%v)", w.Criteria, err)
	}
	for crit, want := range map[string]string{
		"criteria: [+O1]\n":     "O1 is among refsup's criteria for restore already",
		"criteria: [-R1]\n":     "R1 is not among refsup's criteria for restore",
		"criteria: [F1, -U3]\n": "mixes a whole list with changes",
		"criteria: [-F1]\n":     "F1 is missing",
	} {
		if _, err := parseOne(t, testSpecs, "restore", "restore.before_overlay", 1, true, crit); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", crit, err, want)
		}
	}
}

// A criterion every window should get reaches every window that takes the
// default without a change to its file, with a new hash, so it is
// registered again; here U3, as it was when it came, against a supervisor
// whose windows were not judged by it.
func TestANewGeneralCriterionChangesNoWindowFile(t *testing.T) {
	before, err := parseOne(t, testSpecs, "restore", "restore.before_overlay", 1, true, "")
	if err != nil {
		t.Fatal(err)
	}
	spec := testSpecs[0]
	spec.Unjudged = []string{model.U3}
	fewer, err := parseOne(t, []model.DriverSpec{spec}, "restore", "restore.before_overlay", 1, true, "")
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(fewer.Criteria, model.U3) || !slices.Contains(before.Criteria, model.U3) || fewer.Hash == before.Hash {
		t.Errorf("U3 added to the supervisor's criteria: %v (hash %s) became %v (hash %s)", fewer.Criteria, fewer.Hash, before.Criteria, before.Hash)
	}
}
