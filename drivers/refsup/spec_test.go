package refsup

import (
	"testing"

	"faultwin/fixtures/refsup/faults"
	"faultwin/internal/model"
)

// TestFaultSyntaxMatchesSupervisor: what the driver arms is what refsup's
// own parser reads; a different spelling would arm another fault, or none.
func TestFaultSyntaxMatchesSupervisor(t *testing.T) {
	for _, f := range []model.Fault{
		{Point: "restore.after_overlay", Kill: model.KillSupervisor},
		{Point: "restore.during_criu", DelayMS: 80, Kill: model.KillSupervisor},
		{Point: "restore.during_criu", DelayMS: 150, Kill: model.KillCRIUFirst},
	} {
		s, err := faults.ParseSpec(f.String())
		if err != nil {
			t.Fatalf("%+v: refsup refuses %q: %v", f, f.String(), err)
		}
		if s.Point != f.Point || s.DelayMS != f.DelayMS || s.CRIUFirst != (f.Kill == model.KillCRIUFirst) {
			t.Errorf("%q parsed by refsup as %+v", f.String(), s)
		}
	}
}

// TestSpecPublishesWindowPoints: every point of a window operation is
// published with its operation, and create.* points (no window operation)
// are not.
func TestSpecPublishesWindowPoints(t *testing.T) {
	spec := Spec()
	for _, name := range []string{"restore.after_overlay", "restore.during_criu", "checkpoint.after_dump", "sweep.after_links", "idle.kill"} {
		if _, ok := spec.Point(name); !ok {
			t.Errorf("point %s not published", name)
		}
	}
	if p, _ := spec.Point("restore.during_criu"); !p.Timed || !p.CRIU || p.Operation != "restore" {
		t.Errorf("restore.during_criu published as %+v", p)
	}
	if p, _ := spec.Point("restore.failed_teardown"); !p.FailRestore {
		t.Errorf("restore.failed_teardown published as %+v", p)
	}
	if _, ok := spec.Point("create.after_net"); ok {
		t.Error("create.after_net published, but no window can arm a create")
	}
}
