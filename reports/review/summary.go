package review

import (
	"math"
	"slices"
	"sort"

	"faultwin/internal/model"
	"faultwin/reports/decoded"
)

// Z95 is the standard normal quantile of a two-sided 95% interval.
const Z95 = 1.959963984540054

// WindowSummary is one window's record over many rows (a soak's passes).
//
// The pass rate is PASS / (PASS + FAIL): an INVALID row (unclean host,
// fault not fired, precondition not reached) and an ERROR row (the harness
// broke) measured nothing about the supervisor, so counting them as
// failures would blame it for the harness, and counting them as passes
// would credit it for windows that never ran. They are counted apart and
// always printed beside the rate.
type WindowSummary struct {
	Window string
	// Family and Driver are the window's definition id and the driver of
	// its first row ("W3", "refsup").
	Family  string
	Driver  string
	Rows    int
	Pass    int
	Fail    int
	Invalid int
	Error   int
	Unknown int // rows whose status is none of Statuses
	// Lo and Hi bound the pass rate (95% Wilson score interval); with no
	// measurement (Measured() == 0) they are 0 and 1.
	Lo, Hi float64
	// Failed counts, per criterion id, the FAIL rows it was false in.
	Failed map[string]int
	// NotPass lists the 1-based pass (see Passes) and status of every row
	// that did not pass, so a failure can be found again ("pass 8 FAIL").
	NotPass []Miss
	// Load is the 1-minute load average before each row's window.
	Load Spread
	// Seconds is each row's wall time, started to finished.
	Seconds Spread
}

// Miss is one row that did not pass.
type Miss struct {
	Pass   int
	Status string
	Failed []string // criteria false in a FAIL row
	Reason string
}

// Measured is the number of rows that measured the supervisor.
func (s WindowSummary) Measured() int { return s.Pass + s.Fail }

// Rate is Pass / Measured, NaN with no measurement.
func (s WindowSummary) Rate() float64 {
	if s.Measured() == 0 {
		return math.NaN()
	}
	return float64(s.Pass) / float64(s.Measured())
}

// Spread is the minimum, median and maximum of a sample; N is its size.
type Spread struct {
	N                int
	Min, Median, Max float64
}

// SpreadOf summarises xs (which it does not modify).
func SpreadOf(xs []float64) Spread {
	if len(xs) == 0 {
		return Spread{}
	}
	s := slices.Clone(xs)
	sort.Float64s(s)
	m := s[len(s)/2]
	if len(s)%2 == 0 {
		m = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return Spread{N: len(s), Min: s[0], Median: m, Max: s[len(s)-1]}
}

// Summarize groups rows by window, in natural window order (W1 < W2 < ...
// < W16, then by delay), and counts each status apart. Pass numbers come
// from Passes, so rows must be in file order.
func Summarize(rs []decoded.Record) []WindowSummary {
	pass := Passes(rs)
	by := map[string]*WindowSummary{}
	var loads, secs = map[string][]float64{}, map[string][]float64{}
	for i, r := range rs {
		id := SummaryID(r)
		s := by[id]
		if s == nil {
			s = &WindowSummary{Window: id, Family: r.Window.Family, Driver: r.Supervisor(), Failed: map[string]int{}}
			by[id] = s
		}
		s.Rows++
		switch r.Status {
		case model.StatusPass:
			s.Pass++
		case model.StatusFail:
			s.Fail++
		case model.StatusInvalid:
			s.Invalid++
		case model.StatusError:
			s.Error++
		default:
			s.Unknown++
		}
		if r.Status != model.StatusPass {
			m := Miss{Pass: pass[i], Status: r.Status, Reason: r.Reason}
			if r.Status == model.StatusFail {
				m.Failed = FailedCriteria(r)
				for _, c := range m.Failed {
					s.Failed[c]++
				}
			}
			s.NotPass = append(s.NotPass, m)
		}
		loads[id] = append(loads[id], r.Host.LoadBefore[0])
		if !r.Run.Started.IsZero() && !r.Run.Finished.IsZero() {
			secs[id] = append(secs[id], r.Run.Finished.Sub(r.Run.Started).Seconds())
		}
	}
	out := make([]WindowSummary, 0, len(by))
	for id, s := range by {
		s.Lo, s.Hi = Wilson(s.Pass, s.Measured(), Z95)
		s.Load = SpreadOf(loads[id])
		s.Seconds = SpreadOf(secs[id])
		out = append(out, *s)
	}
	sort.Slice(out, func(i, j int) bool { return model.CompareIDs(out[i].Window, out[j].Window) < 0 })
	return out
}

// ControlSuffix follows a window's id where its control rows are
// summarised apart from its faulted ones ("PCL9 control").
const ControlSuffix = " control"

// SummaryID is the row's window id, with ControlSuffix for a control: the
// two arms of an A/B soak are never one rate.
func SummaryID(r decoded.Record) string {
	if isControl(r) {
		return r.Window.ID + ControlSuffix
	}
	return r.Window.ID
}

// FailedCriteria returns the ids of the criteria a row records as judged
// and false, in recorded order; nil if its criteria do not decode.
func FailedCriteria(r decoded.Record) []string {
	var ids []string
	for _, c := range r.Results {
		if c.Judged && !c.Pass {
			ids = append(ids, c.ID)
		}
	}
	return ids
}

// Wilson returns the Wilson score interval for k successes in n trials at
// normal quantile z. Unlike the plain k/n ± z·se interval it stays inside
// [0, 1] and does not collapse to a point at 0/n or n/n, which is where a
// 20-pass soak usually lands. With n == 0 nothing is known: [0, 1].
func Wilson(k, n int, z float64) (lo, hi float64) {
	if n <= 0 {
		return 0, 1
	}
	k = min(max(k, 0), n)
	return wilsonAt(float64(k)/float64(n), n, z)
}
