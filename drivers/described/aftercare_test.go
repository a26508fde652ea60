package described

import (
	"strings"
	"testing"

	"faultwin/internal/model"
)

func TestListParseJSON(t *testing.T) {
	l := List{JSON: &JSONList{Name: "Names.0", State: "State"},
		States: map[string][]string{"running": {"running", "stopping"}, "stopped": {"exited"}}}
	out := `[{"Names": ["fw1"], "State": "running"}, {"Names": ["fw2"], "State": "exited"},
	  {"Names": ["fw3"], "State": "limbo"}, {"Names": [], "State": "running"}]`
	rep, bad, err := l.parse(out)
	if err != nil {
		t.Fatal(err)
	}
	want := []model.Reported{{Name: "fw1", State: "running", Raw: "running"}, {Name: "fw2", State: "stopped", Raw: "exited"},
		{Name: "fw3", State: "", Raw: "limbo"}}
	if len(rep) != len(want) {
		t.Fatalf("got %+v", rep)
	}
	for i := range want {
		if rep[i] != want[i] {
			t.Errorf("entry %d: got %+v, want %+v", i, rep[i], want[i])
		}
	}
	if len(bad) != 1 || !strings.Contains(bad[0], `"Names":[]`) {
		t.Errorf("an entry without a name must be reported unread: %q", bad)
	}
	if _, _, err := l.parse("Error: database is locked"); err == nil {
		t.Error("output that is not a JSON array was read")
	}
}

func TestListParseLines(t *testing.T) {
	l := List{Line: `^(?P<name>\S+)\s+\d+\s+(?P<state>\S+)$`, Skip: `^TASK\s+PID`,
		States: map[string][]string{"running": {"RUNNING"}, "stopped": {"STOPPED"}}}
	rep, bad, err := l.parse("TASK PID STATUS\nc1  4242  RUNNING\n\nc2 0 STOPPED\nsomething else\n")
	if err != nil {
		t.Fatal(err)
	}
	if len(rep) != 2 || rep[0].Name != "c1" || rep[0].State != "running" || rep[1].State != "stopped" {
		t.Errorf("got %+v", rep)
	}
	if len(bad) != 1 || bad[0] != "something else" {
		t.Errorf("unread lines %q", bad)
	}
}
