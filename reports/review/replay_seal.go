package review

import (
	"fmt"
	"time"

	"faultwin/reports/rows"
)

// SealText is how a replay header states a file's seals: "sealed",
// "sealed (3 sessions)", "unsealed (legacy: written before sealing)" or
// "UNSEALED"; "" when the seals were not checked.
func SealText(s rows.Sealing) string {
	switch s.State {
	case rows.Sealed:
		t := "sealed"
		if n := len(s.Sessions); n > 1 {
			t += fmt.Sprintf(" (%d sessions)", n)
		}
		if s.LegacyRows > 0 {
			t += fmt.Sprintf(", after %d legacy rows", s.LegacyRows)
		}
		n := 0
		for _, x := range s.Sessions {
			if x.Unfinished() {
				n++
			}
		}
		if n > 0 {
			t += fmt.Sprintf(", %s UNFINISHED (sealed afterwards: the run that wrote it never finished)", count(n, "session"))
		}
		return t
	case rows.Legacy:
		return "unsealed (legacy: written before sealing)"
	case rows.Unsealed:
		return "UNSEALED"
	}
	return ""
}

// The seal states a file is in, as SealState names them.
const (
	SealSealed     = "sealed"     // every session closed by the run that wrote it
	SealUnfinished = "unfinished" // every session sealed, one or more sealed afterwards as unfinished
	SealUnsealed   = "unsealed"   // a session without its seal: the run never finished, or the file was cut
	SealLegacy     = "legacy"     // no marker at all: written before sealing
)

// SealStates lists the seal states in the order they are reported.
var SealStates = []string{SealSealed, SealUnfinished, SealUnsealed, SealLegacy}

// SealState names the state of a file's seals, one of SealStates: a file
// with a session sealed as unfinished is "unfinished", not "sealed", since
// that session's rows are a run that never finished; a file with no seal
// for a session is "unsealed" whatever its other sessions are. It is ""
// when the seals were not checked (rows replayed without their file).
func SealState(s rows.Sealing) string {
	switch s.State {
	case rows.Legacy:
		return SealLegacy
	case rows.Unsealed:
		return SealUnsealed
	case rows.Sealed:
	default:
		return ""
	}
	for _, x := range s.Sessions {
		if x.Unfinished() {
			return SealUnfinished
		}
	}
	return SealSealed
}

// SealProblems names every session of the file at path without its seal,
// one line each, with what to do about it: "FILE line 5: UNSEALED: ...".
func SealProblems(path string, seal rows.Sealing) []string {
	var out []string
	for _, s := range seal.Unsealed() {
		if s.Open == nil {
			out = append(out, fmt.Sprintf("%s line %d: UNSEALED: %s follow a seal with no open marker: they were not written by a sealing faultwin, or the open marker was removed; restore the file from a copy",
				path, s.Line, count(s.Rows, "row")))
			continue
		}
		out = append(out, fmt.Sprintf("%s line %d: UNSEALED: the session opened at %s has %s and no seal: the run that wrote them never finished (the harness was killed), or the file was cut from the end. If the run died, seal it as unfinished: `faultwin seal --unfinished --reason WHY %s`; if the file was cut, restore it from a copy",
			path, s.Line, s.Open.Open.At.Format(time.RFC3339), count(s.Rows, "row"), path))
	}
	return out
}

// SealNotes names every session of the file at path sealed afterwards as
// unfinished: not a problem (the seal says so), but its rows are a run that
// never finished.
func SealNotes(path string, seal rows.Sealing) []string {
	var out []string
	for _, s := range seal.Sessions {
		if s.Unfinished() {
			out = append(out, fmt.Sprintf("%s line %d: session of %s sealed as unfinished at %s: %s",
				path, s.Line, count(s.Rows, "row"), s.Seal.Seal.At.Format(time.RFC3339), s.Seal.Seal.Note))
		}
	}
	return out
}

func count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
