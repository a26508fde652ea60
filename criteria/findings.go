package criteria

import "faultwin/snapshots"

// finding is one thing of the run seen in a snapshot. key identifies it
// across snapshots (P6 compares keys; P1..P4 merge by key).
type finding struct {
	key    string
	line   string
	zombie bool
	labels []string
}

// finder extracts the findings of one snapshot, and the reasons (gaps) it
// could not decide about part of it.
type finder func(s snapshots.Snapshot) (found []finding, gaps []string)

// collect runs find over several snapshots and merges findings by key, in
// first-seen order, remembering which snapshots showed each.
func collect(ns []named, find finder) (out []finding, gaps []string) {
	at := map[string]int{}
	for _, n := range ns {
		found, g := find(n.snap)
		for _, s := range g {
			gaps = append(gaps, n.label+": "+s)
		}
		for _, f := range found {
			if i, ok := at[f.key]; ok {
				out[i].labels = append(out[i].labels, n.label)
				continue
			}
			f.labels = []string{n.label}
			at[f.key] = len(out)
			out = append(out, f)
		}
	}
	return out, gaps
}

// lineIn is a finding's evidence line with the snapshots it was seen in.
func (f finding) lineIn() string { return f.line + " " + labels(f.labels) }
