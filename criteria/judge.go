package criteria

import (
	"strconv"
	"strings"

	"faultwin/internal/model"
	"faultwin/snapshots"
)

// named pairs a snapshot with the label it must carry.
type named struct {
	label string
	snap  snapshots.Snapshot
}

// missing reports whether s was never taken: a zero snapshot would otherwise
// pass every "nothing left" criterion by holding nothing.
func missing(s snapshots.Snapshot) bool {
	return s.Label == "" && s.TakenAt.IsZero()
}

// snapshotGaps says why the given snapshots cannot be judged: not taken,
// taken under another label (swapped evidence), or incomplete.
func snapshotGaps(ns ...named) []string {
	var gaps []string
	for _, n := range ns {
		switch {
		case missing(n.snap):
			gaps = append(gaps, "snapshot "+n.label+" missing")
		case n.snap.Label != n.label:
			gaps = append(gaps, "snapshot "+n.label+" is labelled "+strconv.Quote(n.snap.Label))
		case len(n.snap.Incomplete) > 0:
			gaps = append(gaps, "snapshot "+n.label+" incomplete: "+strings.Join(n.snap.Incomplete, "; "))
		}
	}
	return gaps
}

// Scope fields a criterion can require.
const (
	needRun      = "run"
	needTag      = "tag"
	needStateDir = "state_dir"
	needLedger   = "ledger"
)

// scopeGaps says which required scope fields are unusable. An empty tag or
// state dir would match nothing, and "nothing of the run left" would then
// hold vacuously.
func scopeGaps(sc model.Scope, fields ...string) []string {
	var gaps []string
	for _, f := range fields {
		switch f {
		case needRun:
			if sc.Run == "" {
				gaps = append(gaps, "scope names no run")
			}
		case needTag:
			if sc.Tag == "" {
				gaps = append(gaps, "scope names no argv tag")
			}
		case needStateDir:
			if !usableDir(cleanPath(sc.StateDir)) {
				gaps = append(gaps, "scope state dir unusable: "+strconv.Quote(sc.StateDir))
			}
		case needLedger:
			if !strings.HasPrefix(sc.Ledger, "/") {
				gaps = append(gaps, "scope ledger path unusable: "+strconv.Quote(sc.Ledger))
			}
		}
	}
	return gaps
}

// judge collects one criterion's evidence: gaps stop it from being judged,
// bad lines make it false, notes are kept whatever the outcome.
type judge struct {
	id    string
	gaps  []string
	bad   []string
	notes []string
}

func (j *judge) gap(s ...string)  { j.gaps = append(j.gaps, s...) }
func (j *judge) fail(s ...string) { j.bad = append(j.bad, s...) }
func (j *judge) note(s ...string) { j.notes = append(j.notes, s...) }

// result turns the collected evidence into a Result. ok is the summary when
// it holds; failed summarises the bad lines.
func (j *judge) result(ok string, failed func(n int) string) Result {
	r := Result{ID: j.id}
	r.Evidence = append(append(append(r.Evidence, j.gaps...), j.bad...), j.notes...)
	switch {
	case len(j.gaps) > 0:
		r.Summary = "not judged: " + j.gaps[0]
		if len(j.gaps) > 1 {
			r.Summary += " (and " + plural(len(j.gaps)-1, "more gap", "more gaps") + ")"
		}
	case len(j.bad) > 0:
		r.Judged = true
		r.Summary = failed(len(j.bad))
	default:
		r.Judged, r.Pass = true, true
		r.Summary = ok
	}
	return r
}

// ctx is the input with the scope's fallbacks resolved once.
type ctx struct {
	in          Input
	sc          model.Scope // StateRoot and LinkPrefix filled from Roots when empty
	decoyProcs  map[model.PID]bool
	decoyMounts map[string]bool
	decoyFiles  map[string]bool
}

func newCtx(in Input) *ctx {
	c := &ctx{in: in, sc: in.Scope, decoyProcs: decoyPIDs(in.Decoys)}
	if c.sc.StateRoot == "" {
		c.sc.StateRoot = in.Roots.StateRoot
	}
	if c.sc.LinkPrefix == "" {
		c.sc.LinkPrefix = in.Roots.LinkPrefix
	}
	c.decoyMounts = make(map[string]bool, len(in.Decoys.Mounts))
	for _, m := range in.Decoys.Mounts {
		c.decoyMounts[cleanPath(m)] = true
	}
	c.decoyFiles = make(map[string]bool, len(in.Decoys.Files))
	for _, f := range in.Decoys.Files {
		c.decoyFiles[cleanPath(f)] = true
	}
	return c
}

func (c *ctx) isDecoyMount(m snapshots.Mount) bool {
	return m.Decoy || c.decoyMounts[cleanPath(m.MountPoint)]
}

// afterSweeps are the two snapshots the "nothing left" criteria read: a
// sweep that needs a second pass to finish has not finished, so a leftover in
// either counts.
func (c *ctx) afterSweeps() []named {
	return []named{
		{LabelAfterSweep, c.in.AfterSweep},
		{LabelAfterSweep2, c.in.AfterSweep2},
	}
}
