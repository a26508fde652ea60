package definitions

import (
	"strings"
	"testing"

	"faultwin/internal/model"
)

const validRecovery = `id: WH9
operation: hibernate
point: hibernate.after_images
second_death: settle.before_wake
precondition: {cold: 2}
criteria: [F1, R2, R3]
description: a recovery window
`

func TestRecoveryDefinitions(t *testing.T) {
	ws, err := loadOne(t, validRecovery)
	if err != nil {
		t.Fatal(err)
	}
	if w := ws[0]; w.SecondDeath != "settle.before_wake" || !strings.Contains(w.Source, "second_death: settle.before_wake\n") {
		t.Fatalf("second death not loaded into %+v", w)
	}
	cases := map[string]struct{ text, want string }{
		"R criterion off a capture": {strings.Replace(strings.Replace(validRecovery, "operation: hibernate\npoint: hibernate.after_images\nsecond_death: settle.before_wake\nprecondition: {cold: 2}",
			"operation: destroy\npoint: destroy.after_kill\nprecondition: {cold: 1}", 1), "", "", 1),
			"windows/a.yaml:5: criteria: R2 judges a settle, and operation destroy has none (remove R2, or use operation hibernate or save)"},
		"second death off a capture": {"id: W11\noperation: destroy\npoint: destroy.after_kill\nsecond_death: settle.before_wake\nprecondition: {cold: 1}\ncriteria: [F1]\ndescription: d\n",
			"windows/a.yaml:4: second_death: operation destroy has no settle to die in (remove it, or use operation hibernate or save)"},
		"second death not a settle point": {strings.Replace(validRecovery, "settle.before_wake", "hibernate.before_dump", 1),
			"windows/a.yaml:4: second_death: hibernate.before_dump is not a settle point of refsup (use one of settle.begin, settle.criu_wait, settle.decided, settle.before_wake, settle.done)"},
		"held CRIU off a CRIU point": {strings.Replace(validRecovery, "second_death: settle.before_wake\n", "kill: criu_held\n", 1),
			"windows/a.yaml:4: kill: CRIU is not running at hibernate.after_images, so it cannot be killed first or held"},
		"one session": {strings.Replace(validRecovery, "{cold: 2}", "{cold: 1}", 1),
			"windows/a.yaml:5: precondition: a capture window needs the captured cold session and one more"},
	}
	for name, c := range cases {
		_, err := loadOne(t, c.text)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want %q", name, err, c.want)
		}
	}
}

// A settle point is published (second_death names it) but no window may
// take it as its own point: no operation passes it.
func TestSettlePointsNotWindowPoints(t *testing.T) {
	spec := testSpecs[0]
	if _, ok := spec.Point("settle.before_wake"); !ok {
		t.Fatal("settle.before_wake not published")
	}
	for _, p := range windowPoints(spec) {
		if strings.HasPrefix(p, "settle.") {
			t.Errorf("%s offered as a window point", p)
		}
	}
	if model.IsRecovery("settle") {
		t.Error("settle is not an operation")
	}
}
