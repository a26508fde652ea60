package render

import (
	"strings"
	"testing"

	"faultwin/internal/model"
	"faultwin/reports/rows"
)

// A mutant's row says which bug was planted, so its FAIL is not read as a
// finding about the supervisor as shipped; other rows read as before.
func TestShortTextMarksBugSwitches(t *testing.T) {
	row := rows.Row{Window: model.Window{ID: "W11"}, Status: model.StatusFail, Run: rows.Run{Bugs: []string{"leak-cgroup"}}}
	c := newCell(row, 1, "results/mutants/leak-cgroup.jsonl", 2, nil)
	if !strings.HasPrefix(c.Short, "bug switch leak-cgroup: FAIL") {
		t.Fatalf("mutant cell %q does not name its bug switch", c.Short)
	}
	row.Run.Bugs = nil
	if c := newCell(row, 1, "results/windows.jsonl", 2, nil); c.Short != "FAIL" {
		t.Fatalf("plain cell %q", c.Short)
	}
}
