package review

import "faultwin/reports/decoded"

// Passes numbers the passes rows belong to, 1-based, in file order. Rows
// do not record which invocation wrote them (Run.Started is each window's
// own start), so a pass is recovered from the file: a maximal stretch of
// consecutive rows with the same harness commit and dirty flag in which no
// window repeats. A soak that runs the same windows N times therefore gives
// passes 1..N; successive `faultwin run` invocations appended to one file
// give one pass each, unless they selected disjoint windows under the same
// commit, which then read as one pass, as if run together.
func Passes(rs []decoded.Record) []int {
	out := make([]int, len(rs))
	pass := 0
	var seen map[string]bool
	var commit string
	var dirty bool
	for i, r := range rs {
		id := SummaryID(r)
		if pass == 0 || seen[id] || r.Run.Commit != commit || r.Run.Dirty != dirty {
			pass++
			seen = map[string]bool{}
			commit, dirty = r.Run.Commit, r.Run.Dirty
		}
		seen[id] = true
		out[i] = pass
	}
	return out
}
