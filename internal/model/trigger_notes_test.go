package model

import (
	"slices"
	"testing"
)

func TestTriggerNotesRoundTrip(t *testing.T) {
	procs := []string{"conmon 2", "podman 4", "criu 6"}
	note := "conmon pid 3 (conmon) killed, gone; " + PresentNote(procs)
	got, ok := Present(note)
	if !ok || !slices.Equal(got, procs) {
		t.Errorf("Present(%q) = %q, %v", note, got, ok)
	}
	if got, ok := Present(PresentNote(nil)); !ok || len(got) != 0 {
		t.Errorf("no process present: %q, %v", got, ok)
	}
	if _, ok := Present("operation pid 7 (podman) killed, gone"); ok {
		t.Error("a note without a process list read as one")
	}
	if !NotFired(NotFiredNote("stopped before the trigger fired")) || NotFired(note) {
		t.Error("NotFired does not tell a trigger that did not fire")
	}
}
