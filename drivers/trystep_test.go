package drivers

import (
	"slices"
	"testing"
)

// A phase unseen while the operation ran is the description's fault
// (NeverSeen); unseen because the operation ended in an error first, it
// was not reached (Unreached), and the supervisor's answer says why.
func TestTryStepUnseenPhases(t *testing.T) {
	phases := []TryPhase{{Name: "prepare", Seen: true}, {Name: "criu_dumping", Field: "roles.criu"}, {Name: "dumped"}}
	ran := TryStep{What: "operation checkpoint", Phases: phases}
	if got := ran.NeverSeen(); len(got) != 2 || got[0].Name != "criu_dumping" || got[0].Field != "roles.criu" || got[1].Name != "dumped" {
		t.Errorf("NeverSeen of a step that ran: %+v", got)
	}
	if got := ran.Unreached(); got != nil {
		t.Errorf("Unreached of a step that ran: %q", got)
	}
	refused := TryStep{What: "operation checkpoint", Phases: phases, Err: "exit 1"}
	if got := refused.NeverSeen(); got != nil {
		t.Errorf("NeverSeen of a refused operation: %+v", got)
	}
	if got := refused.Unreached(); !slices.Equal(got, []string{"criu_dumping", "dumped"}) {
		t.Errorf("Unreached of a refused operation: %q", got)
	}
	if !ran.Failed() || !refused.Failed() {
		t.Error("a step with a phase unseen or an error not Failed")
	}
}
