package render

import (
	"fmt"
	"sort"

	"faultwin/internal/model"
	"faultwin/reports/review"
)

// MinMapInstants is how many delays of one family make its rows an
// explored kill window, drawn as a map (a registered family has four).
const MinMapInstants = 5

// killMapView is one explored family laid out as an SVG: delay on the x
// axis, one lane per outcome class, a dot per instant coloured by its
// verdict, and a dashed line at each boundary between classes.
type killMapView struct {
	Family, Point string
	Width, Height int
	PlotTop       int
	Lanes         []lane
	Ticks         []tick
	Dots          []dot
	Bounds        []bound
}

type lane struct {
	Y     int
	Class string
}

type tick struct {
	X     int
	Label string
}

type dot struct {
	X, Y   int
	Status string // the instant's majority verdict, for colour
	Title  string
}

type bound struct {
	X     int
	Title string
}

const (
	mapLeft   = 60
	mapRight  = 20
	mapWidth  = 900
	laneH     = 34
	mapTop    = 10
	axisSpace = 40
)

// killMaps builds the maps of every explored family in the rows.
func killMaps(files []File) []killMapView {
	var all []review.KillMap
	for _, f := range files {
		ms, _ := review.MapKills(f.Records)
		all = append(all, ms...)
	}
	var out []killMapView
	for _, m := range all {
		if len(m.Instants) < MinMapInstants {
			continue
		}
		out = append(out, layout(m))
	}
	return out
}

func layout(m review.KillMap) killMapView {
	v := killMapView{Family: m.Family, Point: m.Point, Width: mapWidth, PlotTop: mapTop}
	lo, hi := m.Instants[0].DelayMS, m.Instants[len(m.Instants)-1].DelayMS
	if hi == lo {
		hi = lo + 1
	}
	x := func(d float64) int {
		return mapLeft + int((d-float64(lo))/float64(hi-lo)*float64(mapWidth-mapLeft-mapRight))
	}
	laneOf := map[string]int{}
	for i, c := range m.Classes {
		laneOf[c] = i
		v.Lanes = append(v.Lanes, lane{Y: mapTop + i*laneH + laneH/2, Class: c})
	}
	v.Height = mapTop + len(m.Classes)*laneH + axisSpace
	for _, in := range m.Instants {
		st := majorityStatus(in.Statuses)
		v.Dots = append(v.Dots, dot{X: x(float64(in.DelayMS)), Y: v.Lanes[laneOf[in.Class]].Y, Status: st,
			Title: fmt.Sprintf("%d ms: %s; %s; at the death %s", in.DelayMS, in.Class, statusList(in.Statuses), atDeath(in.Kills))})
	}
	for _, b := range m.Boundaries {
		v.Bounds = append(v.Bounds, bound{X: x(float64(b.From+b.To) / 2),
			Title: fmt.Sprintf("boundary %d..%d ms: %s → %s", b.From, b.To, b.Before, b.After)})
	}
	step := niceStep(hi - lo)
	for d := (lo + step - 1) / step * step; d <= hi; d += step {
		v.Ticks = append(v.Ticks, tick{X: x(float64(d)), Label: fmt.Sprint(d)})
	}
	return v
}

func majorityStatus(st map[string]int) string {
	best, n := "", -1
	for _, s := range model.Statuses {
		if st[s] > n {
			best, n = s, st[s]
		}
	}
	return best
}

func statusList(st map[string]int) string {
	keys := make([]string, 0, len(st))
	for k := range st {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	s := ""
	for i, k := range keys {
		if i > 0 {
			s += ", "
		}
		s += fmt.Sprintf("%d %s", st[k], k)
	}
	return s
}

// niceStep picks a tick spacing of 1, 2 or 5 times a power of ten giving
// at most about ten ticks.
func niceStep(span int) int {
	for p := 1; ; p *= 10 {
		for _, m := range []int{1, 2, 5} {
			if span/(m*p) <= 10 {
				return m * p
			}
		}
	}
}

// atDeath says what the kills of an instant left alive and mounted, as a
// range when they differ.
func atDeath(ks []review.Outcome) string {
	lo, hi := ks[0], ks[0]
	for _, k := range ks {
		lo.Alive, hi.Alive = min(lo.Alive, k.Alive), max(hi.Alive, k.Alive)
		lo.Mounted, hi.Mounted = min(lo.Mounted, k.Mounted), max(hi.Mounted, k.Mounted)
	}
	span := func(a, b int) string {
		if a == b {
			return fmt.Sprint(a)
		}
		return fmt.Sprintf("%d-%d", a, b)
	}
	return span(lo.Alive, hi.Alive) + " live processes, " + span(lo.Mounted, hi.Mounted) + " mounts of the run"
}
