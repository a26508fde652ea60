package def

import (
	"slices"
	"strconv"
	"strings"
)

// Point describes a fault point the supervisor under test compiles in. The
// loader checks every definition against this table, so a typo in a YAML file
// cannot silently arm a point that never fires.
type Point struct {
	// Operation is the only operation that passes this point.
	Operation string
	// Timed points are armed with a delay after CRIU starts (delays_ms).
	Timed bool
	// CRIU is true where CRIU is running at the point, so killing CRIU's top
	// process first (kill: criu_first) means something.
	CRIU bool
	// FailRestore points are reached only by a restore made to fail, and a
	// restore made to fail reaches no other registered point.
	FailRestore bool
}

// Points is the set of fault points a window may name.
var Points = map[string]Point{
	"restore.before_overlay":        {Operation: "restore"},
	"restore.after_overlay":         {Operation: "restore"},
	"restore.during_criu":           {Operation: "restore", Timed: true, CRIU: true},
	"restore.after_criu":            {Operation: "restore"},
	"restore.after_register":        {Operation: "restore"},
	"restore.mid_reseed":            {Operation: "restore"},
	"restore.failed_teardown":       {Operation: "restore", FailRestore: true},
	"checkpoint.after_dump":         {Operation: "checkpoint"},
	"checkpoint.after_root_unmount": {Operation: "checkpoint"},
	"checkpoint.after_layer_bind":   {Operation: "checkpoint"},
	"destroy.after_kill":            {Operation: "destroy"},
	"destroy.after_root_unmount":    {Operation: "destroy"},
	"sweep.after_kill":              {Operation: "sweep"},
	"sweep.after_unmount":           {Operation: "sweep"},
	"sweep.after_links":             {Operation: "sweep"},
	"idle.kill":                     {Operation: "idle"},
}

// Operations are the supervisor operations a window can interrupt.
var Operations = []string{"restore", "checkpoint", "destroy", "sweep", "idle"}

// Criteria are the criterion ids a window may ask for, in the order rows and
// windows list them.
var Criteria = []string{"F1", "O1", "P1", "P2", "P3", "P4", "P5", "P6", "H1"}

// Kills are the values of kill; the first is the default.
var Kills = []string{"supervisor", "criu_first"}

// Delay bounds, in milliseconds after CRIU starts.
const (
	MinDelayMS = 1
	MaxDelayMS = 10000
)

// PointNames returns the known point names, sorted.
func PointNames() []string {
	names := make([]string, 0, len(Points))
	for p := range Points {
		names = append(names, p)
	}
	slices.Sort(names)
	return names
}

// CompareIDs orders window ids naturally: W-numbered families by number
// (W2 before W10), then any other family by name, then an instance by delay
// (W3_30 before W3_150). It is the order Load returns windows in.
func CompareIDs(a, b string) int {
	fa, da := splitInstance(a)
	fb, db := splitInstance(b)
	if c := compareFamilies(fa, fb); c != 0 {
		return c
	}
	return da - db
}

func splitInstance(id string) (family string, delay int) {
	f, d, ok := strings.Cut(id, "_")
	if !ok {
		return id, 0
	}
	n, err := strconv.Atoi(d)
	if err != nil {
		return id, 0
	}
	return f, n
}

func compareFamilies(a, b string) int {
	na, oka := wNumber(a)
	nb, okb := wNumber(b)
	switch {
	case oka && okb:
		return na - nb
	case oka:
		return -1
	case okb:
		return 1
	}
	return strings.Compare(a, b)
}

// wNumber returns n for an id of the form W<n>.
func wNumber(id string) (int, bool) {
	if len(id) < 2 || len(id) > 8 || id[0] != 'W' || id[1] == '0' {
		return 0, false
	}
	for _, c := range id[1:] {
		if c < '0' || c > '9' {
			return 0, false
		}
	}
	n, err := strconv.Atoi(id[1:])
	return n, err == nil && n > 0
}
