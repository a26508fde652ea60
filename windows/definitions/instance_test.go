package definitions

import (
	"testing"
)

// An instance at a delay the family does not list lands where the family
// says for every delay, and nowhere in particular when it names a phase
// per delay: the first instance's phase is no promise about another delay.
func TestInstance(t *testing.T) {
	perDelay, err := loadPhased(t, "restore.op", "delays_ms: [50, 80]\nlands_in: {50: prepare, 80: criu_restoring}\n")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		delay     int
		id, lands string
	}{{50, "PX_50", "prepare"}, {80, "PX_80", "criu_restoring"}, {65, "PX_65", ""}} {
		w, err := Instance(perDelay, "PX", c.delay)
		if err != nil || w.ID != c.id || w.Fault.DelayMS != c.delay || w.Fault.LandsIn != c.lands {
			t.Errorf("per delay, at %d ms: %s %d %q (%v), want %s %q", c.delay, w.ID, w.Fault.DelayMS, w.Fault.LandsIn, err, c.id, c.lands)
		}
	}
	wide, err := loadPhased(t, "restore.op", "delays_ms: [50, 80]\nlands_in: criu_restoring\n")
	if err != nil {
		t.Fatal(err)
	}
	if w, err := Instance(wide, "PX", 65); err != nil || w.Fault.LandsIn != "criu_restoring" || w.ID != "PX_65" {
		t.Errorf("family-wide, at 65 ms: %+v %v", w.Fault, err)
	}
	if _, err := Instance(wide, "PY", 65); err == nil {
		t.Error("an unknown family gave an instance")
	}
}
