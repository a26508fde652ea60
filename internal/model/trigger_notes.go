package model

import "strings"

// An external trigger writes its outcome into its trace point's note, and
// review reads it back from recorded rows: the two halves of that format
// live here so they cannot drift apart.

const (
	notFiredPrefix = "not fired: "
	presentPrefix  = "present: "
)

// NotFiredNote is the note of a trigger that did not fire.
func NotFiredNote(reason string) string { return notFiredPrefix + reason }

// NotFired reports whether note is a NotFiredNote.
func NotFired(note string) bool { return strings.HasPrefix(note, notFiredPrefix) }

// PresentNote is the last part of a fired trigger's note: the run's
// processes at the kill, each "comm pid".
func PresentNote(procs []string) string { return presentPrefix + strings.Join(procs, ", ") }

// Present returns the "comm pid" entries of a PresentNote within note, and
// false when note holds none.
func Present(note string) ([]string, bool) {
	_, list, ok := strings.Cut(note, presentPrefix)
	if !ok {
		return nil, false
	}
	if list == "" {
		return []string{}, true
	}
	return strings.Split(list, ", "), true
}
