package expected

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"path/filepath"
	"slices"
	"sort"

	"faultwin/internal/model"
	"faultwin/reports/decoded"
	"faultwin/reports/review"
)

// DriftAlpha is the level at which an outcome's share in new rows is
// called moved from its soak's: a one-sided Fisher exact test, so one run
// showing an outcome ten soaked runs never showed (p = 1/11) is not yet a
// drift, and two runs of it (p = 1/66) are.
const DriftAlpha = 0.05

// DriftRule says, for a report's reader, what Drift decides.
const DriftRule = "drift: an outcome whose share in the new rows exceeds its share in the window's soak by a one-sided Fisher exact test at p < 0.05"

// Shift is one outcome of one window whose share moved up in new rows.
type Shift struct {
	Window  string
	Outcome string
	Got, N  int     // rows of the outcome, and of the window, in the new rows
	Was, Of int     // the same in the soak
	P       float64 // the test's p-value
	Drift   bool    // P < DriftAlpha
	// Rows are the hashes of the new rows that showed the outcome, the
	// rows to look at.
	Rows []string
}

func (s Shift) String() string {
	return fmt.Sprintf("%s: %q in %d of %d new rows, %d of %d in its soak (p = %.3f)", s.Window, s.Outcome, s.Got, s.N, s.Was, s.Of, s.P)
}

// Drift holds new rows against e, window by window: for each outcome the
// new rows show, how likely a share at least that high is if the window
// still behaves as its soak did. An outcome the soak showed at a higher
// share is never a drift (it is an outcome getting rarer, which the
// other outcomes' shares then show). Windows e has no outcomes for are
// returned in unknown.
func Drift(e Expectations, rs []decoded.Record) (shifts []Shift, unknown []string) {
	byWindow := map[string][]decoded.Record{}
	for _, r := range rs {
		if r.Window.Fault.Disarmed {
			continue // a control is the baseline, never the window's outcome
		}
		byWindow[r.Window.ID] = append(byWindow[r.Window.ID], r)
	}
	ids := slices.SortedFunc(maps.Keys(byWindow), model.CompareIDs)
	for _, id := range ids {
		seen, ok := e.Windows[id]
		if !ok {
			unknown = append(unknown, id)
			continue
		}
		got := map[string][]string{}
		for _, r := range byWindow[id] {
			o := review.RowOutcome(r).String()
			got[o] = append(got[o], r.Hash)
		}
		n, of := len(byWindow[id]), seen.N()
		for _, o := range slices.Sorted(maps.Keys(got)) {
			k, was := len(got[o]), seen.Outcomes[o]
			if float64(k)/float64(n) <= float64(was)/float64(of) {
				continue
			}
			p := FisherGreater(k, n, was, of)
			shifts = append(shifts, Shift{Window: id, Outcome: o, Got: k, N: n, Was: was, Of: of, P: p, Drift: p < DriftAlpha, Rows: got[o]})
		}
	}
	return shifts, unknown
}

// FisherGreater is the one-sided p-value of Fisher's exact test that the
// share a/n exceeds b/m: the chance, with the a+b occurrences spread at
// random over the n+m rows, that the first n hold at least a of them.
func FisherGreater(a, n, b, m int) float64 {
	total, k := n+m, a+b
	lc := func(x, y int) float64 { return lgamma(x+1) - lgamma(y+1) - lgamma(x-y+1) }
	denom := lc(total, k)
	p := 0.0
	for x := a; x <= min(n, k); x++ {
		if k-x > m {
			continue
		}
		p += math.Exp(lc(n, x) + lc(m, k-x) - denom)
	}
	return min(p, 1)
}

func lgamma(x int) float64 {
	v, _ := math.Lgamma(float64(x))
	return v
}

// Learn counts, for each window of ids, the outcomes of its rows in every
// one of files that holds rows of it, pooled: a supervisor that races
// shows its spread only over soaks run at different times (podman's own
// stop left its cgroups in 2 of 10 rows of one soak and 10 of 10 of the
// next), and a window is stable only when every soak agrees. The rows'
// wall times give the window's median. A window no file has rows of is
// returned in missing.
func Learn(supervisor string, ids []string, files map[string][]decoded.Record, order []string) (e Expectations, missing []string) {
	e = Expectations{Supervisor: supervisor, Windows: map[string]Seen{}}
	for _, id := range ids {
		var secs []float64
		seen := Seen{Outcomes: map[string]int{}}
		for _, f := range order {
			n := len(secs)
			for _, r := range files[f] {
				if r.Window.ID != id || r.Window.Fault.Disarmed {
					continue // a control is the baseline, never the window's outcome
				}
				seen.Outcomes[review.RowOutcome(r).String()]++
				secs = append(secs, r.Run.Finished.Sub(r.Run.Started).Seconds())
			}
			if len(secs) > n {
				seen.From = append(seen.From, filepath.ToSlash(f))
			}
		}
		if len(secs) == 0 {
			missing = append(missing, id)
			continue
		}
		sort.Float64s(secs)
		slices.Sort(seen.From)
		seen.MedianS = math.Round(secs[len(secs)/2]*10) / 10
		e.Windows[id] = seen
	}
	return e, missing
}

// ChooseSmoke picks, for each operation of ws, the window make test runs,
// among those whose commonest outcome is a measurement (PASS or FAIL,
// never INVALID or ERROR). A stable window (Seen.Stable) comes first, then
// among stable ones one whose kill is tied to a phase (a named point, or a
// phase the kill must land in) over one killed a number of milliseconds
// in, wherever this machine's speed puts that; then more rows, then the
// quicker. Where an operation has no stable window, its smoke run can only
// fail on an outcome never seen, so the window whose soaks saw the most of
// its spread is chosen: more rows, then more of them measurements, then
// the larger share of its commonest outcome, then tied to a phase, then
// the quicker. Ties go to the first by id.
func ChooseSmoke(e Expectations, ws []model.Window) []string {
	best := map[string]string{}
	pinned := map[string]bool{}
	for _, w := range ws {
		pinned[w.ID] = !w.Timed() || w.Fault.LandsIn != ""
	}
	// Each key compares a to b: negative when a is the better.
	fewer := func(x, y float64) int { return cmp.Compare(x, y) }
	more := func(x, y float64) int { return cmp.Compare(y, x) }
	yes := func(x, y bool) int { return more(b2f(x), b2f(y)) }
	better := func(a, b string) bool {
		sa, sb := e.Windows[a], e.Windows[b]
		na, nb := float64(sa.N()), float64(sb.N())
		var c int
		if sa.Stable() || sb.Stable() {
			c = cmp.Or(yes(sa.Stable(), sb.Stable()), yes(pinned[a], pinned[b]), more(na, nb), fewer(sa.MedianS, sb.MedianS))
		} else {
			c = cmp.Or(more(na, nb), more(sa.share(measured), sb.share(measured)),
				more(sa.modalShare(), sb.modalShare()), yes(pinned[a], pinned[b]), fewer(sa.MedianS, sb.MedianS))
		}
		if c != 0 {
			return c < 0
		}
		return model.CompareIDs(a, b) < 0
	}
	for _, w := range ws {
		s, ok := e.Windows[w.ID]
		if !ok {
			continue
		}
		if m, _ := s.Modal(); !measured(m) {
			continue
		}
		if cur, ok := best[w.Operation]; !ok || better(w.ID, cur) {
			best[w.Operation] = w.ID
		}
	}
	out := slices.Collect(maps.Values(best))
	slices.SortFunc(out, model.CompareIDs)
	return out
}

// share is the fraction of s's rows whose outcome ok accepts.
func (s Seen) share(ok func(string) bool) float64 {
	k := 0
	for o, n := range s.Outcomes {
		if ok(o) {
			k += n
		}
	}
	return float64(k) / float64(max(s.N(), 1))
}

// modalShare is the fraction of s's rows that showed its commonest outcome.
func (s Seen) modalShare() float64 {
	_, k := s.Modal()
	return float64(k) / float64(max(s.N(), 1))
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

func measured(outcome string) bool { return model.ParseOutcome(outcome).Measured() }
