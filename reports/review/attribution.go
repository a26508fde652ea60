package review

import (
	"math"
	"slices"
	"strings"

	"faultwin/criteria"
	"faultwin/internal/model"
	"faultwin/reports/decoded"
)

// Verdict says whether a failure is the kill's doing, judged against the
// same window run disarmed: a supervisor that leaks a cgroup on every
// restore leaks it with no fault too, and blaming the kill for it would
// send a maintainer after the wrong bug.
type Verdict string

const (
	// Caused: the faulted rows fail this way more often than the controls,
	// beyond the 95% interval of the difference.
	Caused Verdict = "caused"
	// Baseline: the controls fail this way too, and the faulted rows are
	// not shown to fail it more often.
	Baseline Verdict = "baseline"
	// Unseparated: only the faulted rows failed this way, too few times
	// (or against too few controls, or none) to tell from chance.
	Unseparated Verdict = "unseparated"
)

// Phrase is the verdict for a reader.
func (v Verdict) Phrase() string {
	switch v {
	case Caused:
		return "caused by the kill"
	case Baseline:
		return "fails without the kill too"
	case Unseparated:
		return "not separable yet"
	}
	return string(v)
}

// MoreCap bounds the search for More: past it the rates would need a soak
// nobody runs, so "never at these rates" is the honest answer.
const MoreCap = 1000

// Attribution is one way a window failed (a criterion and the class of its
// evidence), counted in its faulted rows and in its control rows.
type Attribution struct {
	Window, Criterion, Class string
	Example                  string // the first failing row's evidence, as recorded
	// N counts rows that measured the supervisor (PASS or FAIL); K the FAIL
	// rows in which Criterion failed with Class.
	FaultK, FaultN     int
	ControlK, ControlN int
	// Diff is FaultK/FaultN − ControlK/ControlN and [Lo, Hi] its 95%
	// interval (Newcombe). With an arm of no rows Diff is 0 and [Lo, Hi]
	// is every difference the other arm's interval allows.
	Diff, Lo, Hi float64
	Verdict      Verdict
	// More, for Unseparated, is how many more rows of each arm would
	// separate the arms at the rates seen; 0 when they would not within
	// MoreCap, or when there are no controls (ControlN == 0) to compare.
	More int
}

// Arm counts one arm's rows by status.
type Arm struct {
	Pass, Fail, Invalid, Error, Unknown int
}

// Measured is the number of rows that measured the supervisor.
func (a Arm) Measured() int { return a.Pass + a.Fail }

func (a *Arm) count(status string) {
	switch status {
	case model.StatusPass:
		a.Pass++
	case model.StatusFail:
		a.Fail++
	case model.StatusInvalid:
		a.Invalid++
	case model.StatusError:
		a.Error++
	default:
		a.Unknown++
	}
}

// WindowAB is one window's faulted rows against its control rows.
type WindowAB struct {
	Window         string
	Fault, Control Arm
	Attributions   []Attribution // by criterion, then class
}

// isControl reads the row's arm in one place, so the field can move.
func isControl(r decoded.Record) bool { return r.Window.Fault.Disarmed }

// AB compares each window's faulted rows with its control rows, windows in
// Summarize's order. class names a failure's evidence (the report passes
// findings.Class, which makes one bug seen twice one class). A control that
// FAILs is kept: it is the supervisor failing with no fault, which is
// exactly what a faulted failure must be weighed against.
func AB(rs []decoded.Record, class func(criteria.Result) string) []WindowAB {
	type key struct{ window, criterion, class string }
	type tally struct {
		example      string
		fault, contr int
	}
	by := map[string]*WindowAB{}
	seen := map[key]*tally{}
	for _, r := range rs {
		id := r.Window.ID
		if id == "" {
			continue // a seal
		}
		w := by[id]
		if w == nil {
			w = &WindowAB{Window: id}
			by[id] = w
		}
		arm := &w.Fault
		if isControl(r) {
			arm = &w.Control
		}
		arm.count(r.Status)
		if r.Status != model.StatusFail {
			continue
		}
		results := r.Results
		// Once per row, so K never exceeds N.
		inRow := map[key]bool{}
		for _, res := range results {
			if !res.Judged || res.Pass {
				continue
			}
			k := key{id, res.ID, class(res)}
			if inRow[k] {
				continue
			}
			inRow[k] = true
			t := seen[k]
			if t == nil {
				t = &tally{example: res.Example()}
				seen[k] = t
			}
			if isControl(r) {
				t.contr++
			} else {
				t.fault++
			}
		}
	}
	for k, t := range seen {
		w := by[k.window]
		w.Attributions = append(w.Attributions, attribute(Attribution{
			Window: k.window, Criterion: k.criterion, Class: k.class, Example: t.example,
			FaultK: t.fault, FaultN: w.Fault.Measured(), ControlK: t.contr, ControlN: w.Control.Measured(),
		}))
	}
	out := make([]WindowAB, 0, len(by))
	for _, w := range by {
		slices.SortFunc(w.Attributions, func(a, b Attribution) int {
			if c := strings.Compare(a.Criterion, b.Criterion); c != 0 {
				return c
			}
			return strings.Compare(a.Class, b.Class)
		})
		out = append(out, *w)
	}
	slices.SortFunc(out, func(a, b WindowAB) int { return model.CompareIDs(a.Window, b.Window) })
	return out
}

// attribute fills in a's difference, verdict and More from its counts.
func attribute(a Attribution) Attribution {
	a.Diff, a.Lo, a.Hi = Newcombe(a.FaultK, a.FaultN, a.ControlK, a.ControlN, Z95)
	switch {
	case a.ControlN > 0 && a.Lo > 0:
		a.Verdict = Caused
	case a.ControlK > 0:
		// Hi < 0 included: the controls failing more is still a failure
		// the kill did not cause.
		a.Verdict = Baseline
	default:
		a.Verdict = Unseparated
		if a.ControlN > 0 && a.FaultN > 0 {
			a.More = more(a.FaultK, a.FaultN, a.ControlK, a.ControlN)
		}
	}
	return a
}

// CausedOnly returns the failures caused by the kill, in window order: the
// ones an exit code should count when baseline failures are known noise.
func CausedOnly(ws []WindowAB) (caused []Attribution) {
	for _, w := range ws {
		for _, a := range w.Attributions {
			if a.Verdict == Caused {
				caused = append(caused, a)
			}
		}
	}
	return caused
}

// Newcombe returns the difference k1/n1 − k2/n2 and its interval by
// Newcombe's hybrid score method (his method 10, 1998): built from the two
// Wilson intervals, it keeps their good coverage at 0/n and n/n, where a
// Wald interval of the difference collapses. With an arm of no rows
// nothing is known of it: d is 0 and the bounds are the Wilson bounds'
// widest difference.
func Newcombe(k1, n1, k2, n2 int, z float64) (d, lo, hi float64) {
	l1, u1 := Wilson(k1, n1, z)
	l2, u2 := Wilson(k2, n2, z)
	if n1 <= 0 || n2 <= 0 {
		return 0, l1 - u2, u1 - l2
	}
	p1 := float64(min(max(k1, 0), n1)) / float64(n1)
	p2 := float64(min(max(k2, 0), n2)) / float64(n2)
	return hybrid(p1, l1, u1, p2, l2, u2)
}

func hybrid(p1, l1, u1, p2, l2, u2 float64) (d, lo, hi float64) {
	d = p1 - p2
	return d, d - math.Hypot(p1-l1, u2-p2), d + math.Hypot(u1-p1, p2-l2)
}

// more is the smallest number of rows to add to each arm for the interval
// to exclude zero, holding the observed rates (so a projected k need not
// be whole); 0 when the rates are equal or it takes more than MoreCap.
func more(k1, n1, k2, n2 int) int {
	p1, p2 := float64(k1)/float64(n1), float64(k2)/float64(n2)
	if p1 == p2 {
		return 0
	}
	for m := 1; m <= MoreCap; m++ {
		l1, u1 := wilsonAt(p1, n1+m, Z95)
		l2, u2 := wilsonAt(p2, n2+m, Z95)
		if _, lo, hi := hybrid(p1, l1, u1, p2, l2, u2); lo > 0 || hi < 0 {
			return m
		}
	}
	return 0
}

// wilsonAt is Wilson's interval at a rate p over n rows: Wilson's own,
// and the projected soaks of more, where p·n is not whole. At the ends
// it is exact, where rounding could leave a hair outside [0, 1].
func wilsonAt(p float64, n int, z float64) (lo, hi float64) {
	nf, z2 := float64(n), z*z
	d := 1 + z2/nf
	centre := (p + z2/(2*nf)) / d
	half := z / d * math.Sqrt(p*(1-p)/nf+z2/(4*nf*nf))
	lo, hi = centre-half, centre+half
	if p == 0 {
		lo = 0
	}
	if p == 1 {
		hi = 1
	}
	return max(lo, 0), min(hi, 1)
}
