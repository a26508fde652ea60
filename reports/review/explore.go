package review

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"faultwin/internal/model"
	"faultwin/reports/decoded"
)

// Kill windows are mapped, not sampled: `faultwin explore` kills a timed
// window at many delays, and every kill is an ordinary row. The map is
// computed from the rows alone, so a reviewer redraws it from the file.

// Outcome is what one kill left: where in the operation it landed (the
// last point the supervisor passed before the kill, or for an external
// kill the phase its driver saw it land in), whether a CRIU process
// was alive at the death, and the verdict.
type Outcome struct {
	Landed    string `json:"landed"`     // "restore.criu_setup_namespaces"; "start" when none passed
	CRIUAlive bool   `json:"criu_alive"` // a criu process was alive right after the death
	Status    string `json:"status"`
	// Alive and Mounted count the run's live processes and its mounts right
	// after the death. They are shown, not classed by: both jitter with the
	// instant a session's payload happens to fork.
	Alive   int `json:"alive"`
	Mounted int `json:"mounted"`
}

// Class names the outcome without its verdict: kills of one class left the
// supervisor at the same place. Boundaries are drawn between classes.
func (o Outcome) Class() string {
	s := "after " + o.Landed
	if o.CRIUAlive {
		s += ", criu alive"
	}
	return s
}

// OutcomeOf reads a row's outcome from its recorded input.
func OutcomeOf(r decoded.Record) (Outcome, error) {
	if r.Parts == nil {
		return Outcome{}, fmt.Errorf("%s: decoding input: %w", r.Window.ID, r.InputErr)
	}
	in := r.Parts
	if in.AfterDeath == nil {
		// Only a timed window's record keeps it; no other has a kill map.
		return Outcome{}, fmt.Errorf("%s: not a timed window: no snapshot after the death kept", r.Window.ID)
	}
	after := in.AfterDeath
	o := Outcome{Landed: "start", Status: r.Status, CRIUAlive: after.CRIUAlive, Alive: after.Alive, Mounted: after.Mounted}
	if l := in.Death.Landing; l != nil {
		// An external kill's driver observed the operation's phases: the
		// phase the kill landed in is where it left the operation.
		o.Landed = "phase " + l.Phase
		if l.Phase == "" {
			o.Landed = "start"
		}
	} else {
		for _, tp := range in.Trace {
			if tp.Fired {
				break
			}
			if model.NotFired(tp.Note) {
				// An external trigger that never fired: the operation
				// ended before the instant, and its own point is no
				// place the operation passed.
				o.Landed = "the operation's end (no kill)"
				break
			}
			o.Landed = tp.Point
		}
	}
	return o, nil
}

// Instant is every kill of one family at one delay.
type Instant struct {
	DelayMS  int
	Kills    []Outcome
	Class    string         // the class most kills had; ties and splits say "mixed: a | b"
	Statuses map[string]int // verdicts of the kills
}

// Boundary lies between two neighbouring instants of different classes.
type Boundary struct {
	From, To         int // the delays on either side, ms
	Before, After    string
	ResolvedWithinMS int // To - From
}

// KillMap is one timed family's kills by delay.
type KillMap struct {
	Family     string
	Point      string
	Instants   []Instant // by delay
	Classes    []string  // in order of first appearance along the delay axis
	Boundaries []Boundary
}

// MapKills groups the rows of timed windows by family and delay. Rows that
// are not timed, or whose input cannot be read, are left out; errs says
// which.
func MapKills(rs []decoded.Record) ([]KillMap, []error) {
	byFam := map[string]map[int]*Instant{}
	points := map[string]string{}
	var errs []error
	for _, r := range rs {
		d := r.Window.Fault.DelayMS
		if d <= 0 {
			continue
		}
		o, err := OutcomeOf(r)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		f := r.Window.Family
		if byFam[f] == nil {
			byFam[f] = map[int]*Instant{}
			fl := r.Window.Fault
			fl.DelayMS = 0
			points[f] = fl.String()
		}
		in := byFam[f][d]
		if in == nil {
			in = &Instant{DelayMS: d, Statuses: map[string]int{}}
			byFam[f][d] = in
		}
		in.Kills = append(in.Kills, o)
		in.Statuses[o.Status]++
	}
	var out []KillMap
	for f, ins := range byFam {
		m := KillMap{Family: f, Point: points[f]}
		for _, in := range ins {
			in.Class = MajorityClass(in.Kills)
			m.Instants = append(m.Instants, *in)
		}
		sort.Slice(m.Instants, func(i, j int) bool { return m.Instants[i].DelayMS < m.Instants[j].DelayMS })
		for i, in := range m.Instants {
			if !slices.Contains(m.Classes, in.Class) {
				m.Classes = append(m.Classes, in.Class)
			}
			if i > 0 && m.Instants[i-1].Class != in.Class {
				prev := m.Instants[i-1]
				m.Boundaries = append(m.Boundaries, Boundary{From: prev.DelayMS, To: in.DelayMS,
					Before: prev.Class, After: in.Class, ResolvedWithinMS: in.DelayMS - prev.DelayMS})
			}
		}
		out = append(out, m)
	}
	sort.Slice(out, func(i, j int) bool { return model.CompareIDs(out[i].Family, out[j].Family) < 0 })
	return out, errs
}

// MajorityClass is the class of most kills; when no class has a strict
// majority the instant is "mixed", naming the classes seen.
func MajorityClass(ks []Outcome) string {
	count := map[string]int{}
	var order []string
	for _, k := range ks {
		c := k.Class()
		if count[c] == 0 {
			order = append(order, c)
		}
		count[c]++
	}
	for _, c := range order {
		if 2*count[c] > len(ks) {
			return c
		}
	}
	return "mixed: " + strings.Join(order, " | ")
}

// Candidate renders a registration candidate: one family with one instance
// per class the map found (the delay nearest the middle of the class's
// longest run), for a human to review and commit. base is the family's
// registered definition; id names the new family.
func Candidate(m KillMap, base model.Window, id string) string {
	type run struct{ from, to int }
	longest := map[string]run{}
	for i := 0; i < len(m.Instants); {
		j := i
		for j+1 < len(m.Instants) && m.Instants[j+1].Class == m.Instants[i].Class {
			j++
		}
		c := m.Instants[i].Class
		r := run{m.Instants[i].DelayMS, m.Instants[j].DelayMS}
		if old, ok := longest[c]; !ok || r.to-r.from > old.to-old.from {
			longest[c] = r
		}
		i = j + 1
	}
	var delays []int
	var lines []string
	for _, c := range m.Classes {
		if strings.HasPrefix(c, "mixed") {
			continue
		}
		r := longest[c]
		d := nearestDelay(m.Instants, (r.from+r.to)/2, r)
		if !slices.Contains(delays, d) {
			delays = append(delays, d)
			lines = append(lines, fmt.Sprintf("#   %d ms: %s (class seen %d..%d ms)", d, c, r.from, r.to))
		}
	}
	slices.Sort(delays)
	ds := make([]string, len(delays))
	for i, d := range delays {
		ds[i] = fmt.Sprint(d)
	}
	p := base.Precondition
	var b strings.Builder
	fmt.Fprintf(&b, "# Registration candidate from `faultwin explore` of %s (%s): one instance per outcome class.\n", m.Family, m.Point)
	b.WriteString(strings.Join(lines, "\n") + "\n")
	fmt.Fprintf(&b, "id: %s\n", id)
	if base.Driver != "" && base.Driver != model.DefaultDriver {
		fmt.Fprintf(&b, "driver: %s\n", base.Driver)
	}
	fmt.Fprintf(&b, "operation: %s\npoint: %s\ndelays_ms: [%s]\nkill: %s\n", base.Operation, base.Fault.Point, strings.Join(ds, ", "), base.Fault.Kill)
	fmt.Fprintf(&b, "labels: [timed, explored]\n")
	fmt.Fprintf(&b, "precondition: {cold: %d, restored: %d, checkpoint: %t, display: %t, fail_restore: %t", p.Cold, p.Restored, p.Checkpoint, p.Display, p.FailRestore)
	if p.NetworkLock != "" {
		fmt.Fprintf(&b, ", network_lock: %s", p.NetworkLock)
	}
	b.WriteString("}\n")
	fmt.Fprintf(&b, "criteria: [%s]\n", strings.Join(base.Criteria, ", "))
	fmt.Fprintf(&b, "description: >\n  %s at one delay inside each outcome class that exploring %s found, so every\n  class of kill this operation can meet is registered, not four instants that may\n  sit on one side of every boundary.\n", m.Family, m.Family)
	return b.String()
}

func nearestDelay(ins []Instant, target int, r struct{ from, to int }) int {
	best := r.from
	for _, in := range ins {
		if in.DelayMS >= r.from && in.DelayMS <= r.to && abs(in.DelayMS-target) < abs(best-target) {
			best = in.DelayMS
		}
	}
	return best
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}
